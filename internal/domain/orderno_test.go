package domain

import (
	"strings"
	"testing"
)

func TestOrderNoTag(t *testing.T) {
	key := []byte("order-key-for-the-test-0123456789")
	no := NewOrderNo(42, key)
	if aid, ok := VerifyOrderNo(no, key); !ok || aid != 42 {
		t.Fatalf("%s: %d %v", no, aid, ok)
	}
	if _, ok := ParseOrderNo(no); !ok || len(no) > MaxOrderNoLen {
		t.Fatalf("%s does not have the documented shape", no)
	}
	for name, bad := range map[string]string{
		"other key": NewOrderNo(42, []byte("another-key")),
		"unkeyed":   NewOrderNo(42),
		"other aid": "43" + no[2:],
		"flipped digit": no[:len(no)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef",
			no[len(no)-1])+1)%16]),
		"no tag": no[:len(no)-OrderNoTagLen],
		"short":  "42-deadbeef",
	} {
		if _, ok := VerifyOrderNo(bad, key); ok {
			t.Errorf("%s: %s verified", name, bad)
		}
	}
	if _, ok := VerifyOrderNo(NewOrderNo(7), nil); !ok {
		t.Fatal("the unkeyed checksum does not verify")
	}
}

// An order number's short form (its name in Redis) is 12 characters for every number
// NewOrderNo makes, and the activity id with the key make the very number of it again; a
// key other than the one that tagged it makes another number. A number whose body does not
// pack (another clock, another shape) is kept whole and comes back the same.
func TestShortOrderNo(t *testing.T) {
	key := []byte("order-key-for-the-test-0123456789")
	nos := map[string]int64{}
	for _, aid := range []int64{1, 42, 999_999_999, 1<<63 - 1} {
		nos[NewOrderNo(aid, key)] = aid
	}
	for _, body := range []string{"1577836799999deadbeef", "1577836800000deadbeef", "2677348427775ffffffff",
		"2677348427776ffffffff", "0123deadbeef", "1796437353466deadbeef0", "1796437353466dEadbeef", "deadbeef",
		"123deadbeef"} {
		nos[orderNoOfBody(7, body, key)] = 7
	}
	for no, aid := range nos {
		short, ok := ShortOrderNo(no)
		if !ok || len(short) >= len(no)-OrderNoTagLen {
			t.Fatalf("%s: short %q, %v", no, short, ok)
		}
		if again := OrderNoOf(aid, short, key); again != no {
			t.Fatalf("%s: short %q made %s again", no, short, again)
		}
		if other := OrderNoOf(aid, short, []byte("another-key")); other == no {
			t.Fatalf("%s: another key made the same number", no)
		}
	}
	for range 1000 {
		if short, _ := ShortOrderNo(NewOrderNo(42, key)); len(short) != shortLen || strings.HasPrefix(short, wholeMark) {
			t.Fatalf("a fresh number's short form %q is not packed", short)
		}
	}
	for _, bad := range []string{"", "42", "-", "42-", "42-0123456789abcdef", "-1796436637313b3a17fdfd6425141c4394a98"} {
		if short, ok := ShortOrderNo(bad); ok {
			t.Errorf("%q: short %q", bad, short)
		}
	}
}
