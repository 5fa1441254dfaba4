package reconcile

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/seckill/seckill/internal/kafkax"
)

// firstSeen is when the previous runs first saw difference fp (ms; now when they did not)
// and the topic's end offsets then, encoded ("" when unknown).
func firstSeen(history map[string]string, fp string, now int64) (first int64, ends string) {
	first = now
	if v, ok := history[fp]; ok {
		ms, m, _ := strings.Cut(v, "|")
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil && n <= first {
			first, ends = n, m
		}
	}
	return first, ends
}

// seenRecord is the history entry of a difference first seen at first (ms) with ends.
func seenRecord(first int64, ends string) string {
	if ends == "" {
		return strconv.FormatInt(first, 10)
	}
	return strconv.FormatInt(first, 10) + "|" + ends
}

// endsNow returns the topic's end offsets, encoded, taken once per run ("" without a
// pipeline or when Kafka does not answer: confirmation then goes by time alone).
func (r *Reconciler) endsNow(ctx context.Context, res *result) string {
	if r.pipe == nil {
		return ""
	}
	if res.ends == nil {
		enc := ""
		if ends, err := r.pipe.Ends(ctx); err == nil {
			enc = encodeOffsets(ends)
		}
		res.ends = &enc
	}
	return *res.ends
}

// encodeOffsets writes partition offsets as "p:off,...", sorted.
func encodeOffsets(o kafkax.Offsets) string {
	parts := make([]string, 0, len(o))
	for p, off := range o {
		parts = append(parts, strconv.Itoa(p)+":"+strconv.FormatInt(off, 10))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// decodeOffsets reads what encodeOffsets wrote; malformed pairs are skipped.
func decodeOffsets(s string) kafkax.Offsets {
	o := kafkax.Offsets{}
	for _, kv := range strings.Split(s, ",") {
		p, off, ok := strings.Cut(kv, ":")
		pi, err1 := strconv.Atoi(p)
		oi, err2 := strconv.ParseInt(off, 10, 64)
		if ok && err1 == nil && err2 == nil {
			o[pi] = oi
		}
	}
	return o
}
