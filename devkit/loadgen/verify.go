package loadgen

import (
	"fmt"
	"time"
)

// verify turns the numbers into checks.
func (g *run) verify() {
	r, q := g.r, g.cfg.Quantity
	paid, cancelled := r.Paid()+r.Unsure["paid: took effect"], r.Cancelled()+r.Unsure["cancelled: took effect"]
	reservedQty, paidQty := int64(r.Reserved)*q, int64(paid)*q
	reserveEnd := r.Started.Add(r.ReserveDuration)
	// Stock could return during the reserve phase only by expiry (the run cancels later) or
	// by other buyers' orders of a reused activity.
	returned := ""
	switch {
	case r.LockedAtStart > 0:
		returned = fmt.Sprintf("%d units held by earlier buyers may have returned during the run", r.LockedAtStart)
	case r.Reserved > 0 && !reserveEnd.Before(time.Unix(r.EarliestExpire, 0)):
		returned = fmt.Sprintf("reservations began expiring (%s) before the reserve phase ended (%s): raise the pay "+
			"timeout above it",
			time.Unix(r.EarliestExpire, 0).Format(time.TimeOnly), reserveEnd.Format(time.TimeOnly))
	}
	if returned == "" {
		r.check("no oversell: reserved <= stock", reservedQty <= r.StockAtStart, "%d reserved of %d", reservedQty,
			r.StockAtStart)
	} else {
		r.skip("no oversell: reserved <= stock", "%s", returned)
	}
	r.check("no oversell: paid <= stock", paidQty <= r.StockAtStart, "%d paid of %d", paidQty, r.StockAtStart)

	demand := int64(r.Buyers-r.NotSent) * q
	switch {
	case returned != "":
		r.skip("sold exactly the stock", "%s", returned)
	case len(r.Errors) > 0:
		r.skip("sold exactly the stock", "%d buyers ended with an error, so the front line may rightly undersell",
			sum(r.Errors))
	case demand < r.StockAtStart:
		r.skip("sold exactly the stock", "demand %d is below the stock %d", demand, r.StockAtStart)
	default:
		r.check("sold exactly the stock", r.StockAtStart-reservedQty < q,
			"%d reserved of %d, %d buyers told SOLD_OUT", reservedQty, r.StockAtStart, r.SoldOut)
	}

	// An op answered OK must have taken effect, an order nobody settled must have expired;
	// an op left unanswered (BUSY after every retry) may have gone either way, never a third.
	want := map[string]int{"paid": paid, "cancelled": cancelled, "expired": r.Reserved - paid - cancelled}
	settled := r.Unsure["paid: became cancelled"]+r.Unsure["cancelled: became paid"]+
		r.Unsure["paid: became reserved"]+r.Unsure["cancelled: became reserved"] == 0
	for status, n := range r.FinalStatuses {
		if n != want[status] {
			settled = false
		}
	}
	for status, n := range want {
		if n != r.FinalStatuses[status] {
			settled = false
		}
	}
	r.check("orders paid, cancelled, expired", settled, "read back %s; expected %s", FormatCounts(r.FinalStatuses),
		FormatCounts(want))
	r.check("reconciliation consistent", r.Reconcile == "consistent", "%s after %s", r.Reconcile,
		r.ReconcileWait.Round(time.Millisecond))

	if r.FinalRedis == nil {
		r.skip("redis and mysql agree", "the activity is no longer warm in Redis")
	} else {
		r.check("redis and mysql agree", *r.FinalRedis == r.FinalDB, "redis %+v, mysql %+v", *r.FinalRedis, r.FinalDB)
	}
	if !r.Created {
		r.skip("books add up", "reused activity: other traffic may have moved its books")
	} else if r.FinalRedis != nil {
		want := Books{Remaining: r.StockAtStart - paidQty, Locked: 0, Sold: paidQty}
		r.check("books add up", *r.FinalRedis == want && r.FinalDB == want, "want %+v (stock %d - paid %d)", want,
			r.StockAtStart, paidQty)
	}
	r.costChecks()
	if n := sum(r.Errors); n > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d buyers ended with an error: %s", n, FormatCounts(r.Errors)))
	}
	if r.NotSent > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%d buyers were not sent within %s", r.NotSent, g.cfg.MaxDuration))
	}
}
