package reconcile

import (
	"maps"
	"testing"

	"github.com/seckill/seckill/internal/kafkax"
)

func TestHistoryRecordRoundTrip(t *testing.T) {
	marks := encodeOffsets(kafkax.Offsets{2: 40, 0: 7, 1: 0})
	if marks != "0:7,1:0,2:40" {
		t.Fatalf("encodeOffsets: %q", marks)
	}
	if got := decodeOffsets(marks + ",junk,3:x"); !maps.Equal(got, kafkax.Offsets{0: 7, 1: 0, 2: 40}) {
		t.Fatalf("decodeOffsets: %v", got)
	}
	history := map[string]string{"a": seenRecord(1000, marks), "b": seenRecord(1500, ""), "late": "9000"}
	for _, c := range []struct {
		fp        string
		first     int64
		wantMarks string
	}{{"a", 1000, marks}, {"b", 1500, ""}, {"late", 2000, ""}, {"absent", 2000, ""}} {
		first, m := firstSeen(history, c.fp, 2000)
		if first != c.first || m != c.wantMarks {
			t.Errorf("firstSeen(%q) = %d %q, want %d %q", c.fp, first, m, c.first, c.wantMarks)
		}
	}
}
