package reconcile

import (
	"context"
	"fmt"
	"time"
)

// classify looks difference fp up in the previous runs' record, notes it in this run's, and says
// whether it is confirmed missing or still pending.
func (r *Reconciler) classify(ctx context.Context, res *result, fp string) (Class, string) {
	first, ends := firstSeen(res.rds.history, fp, res.rds.nowMs)
	age := time.Duration(res.rds.nowMs-first) * time.Millisecond
	if res.truncated {
		return Pending, "outbox too long to read to its end"
	}
	if ends == "" {
		ends = r.endsNow(ctx, res)
	}
	res.seen[fp] = seenRecord(first, ends)
	if age < r.c.ConfirmAfter {
		return Pending, fmt.Sprintf("not in the outbox, not applied yet, first seen %s ago", age.Round(time.Millisecond))
	}
	if ends != "" {
		done, ok := res.reached[ends]
		if !ok {
			var err error
			if done, err = r.pipe.Reached(ctx, decodeOffsets(ends)); err != nil {
				// Kafka unreachable: fall back to time alone (and say so).
				res.reached[ends] = true
				return Missing, fmt.Sprintf("unexplained for %s: mismatch (kafka unreachable: %v)",
					age.Round(time.Millisecond), err)
			}
			res.reached[ends] = done
		}
		if !done {
			return Pending, fmt.Sprintf("first seen %s ago; the writer has not yet applied everything "+
				"that was on Kafka then", age.Round(time.Millisecond))
		}
	}
	return Missing, fmt.Sprintf("unexplained for %s: mismatch", age.Round(time.Millisecond))
}
