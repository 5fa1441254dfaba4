package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
)

// result is a comparison plus what Run and Repair need beyond the report.
type result struct {
	report     Report
	db         dbBook
	rds        redisBook
	seen       map[string]string // unexplained differences -> "first seen (ms)[|the topic's end offsets]"
	ends       *string           // the topic's end offsets, encoded, taken once a run when needed
	reached    map[string]bool   // encoded end offsets -> whether the writer has consumed past them
	candidates []domain.Order    // orders MySQL lacks that no outbox entry explains
	full       counters          // MySQL's counters once outbox and candidates are applied
	broken     bool              // something no pipeline state explains
	truncated  bool              // outbox longer than MaxOutbox
}

// counters are one book's numbers under common names (Redis remaining = MySQL available).
type counters struct{ Total, Available, Locked, Sold int64 }

func (c counters) String() string {
	return fmt.Sprintf("total %d, available %d, locked %d, sold %d", c.Total, c.Available, c.Locked, c.Sold)
}

// advance moves an order of quantity q from state from to state to if the shared
// transition table (event.Transition, what the writer applies) allows it, updating c.
func (c *counters) advance(from, to string, q int64) bool {
	_, d, ok := event.Transition(from, event.Type(to), q)
	if ok {
		c.Available += d.Available
		c.Locked += d.Locked
		c.Sold += d.Sold
	}
	return ok
}

// compare reads both books and compares them: each against itself, the counters as they
// stand, then MySQL with the outbox replayed onto it against Redis, order by order and
// counter by counter.
func (r *Reconciler) compare(ctx context.Context, aid int64) (*result, error) {
	res, err := r.read(ctx, aid)
	if err != nil {
		return nil, err
	}
	res.checkMySQL()
	if !res.rds.warm {
		res.flagOverdue(r.c.ConfirmAfter)
		res.report.Status = res.coldStatus()
		return res, nil
	}
	res.checkRedis()
	if !res.db.found {
		res.brokenf("mysql: no inventory row for activity %d, which Redis holds", aid)
		res.report.Status = Mismatch
		return res, nil
	}
	res.diffCounters()
	sim, err := r.replayOutbox(ctx, res)
	if err != nil {
		return nil, err
	}
	missing := r.compareOrders(ctx, res, sim)
	counterDrift, countersMissing := r.explainCounters(ctx, res)
	if countersMissing {
		missing++
	}
	if missing > 0 {
		res.report.Diffs = append(res.report.Diffs, fmt.Sprintf("%d difference(s) unexplained for over %s: "+
			"events lost, or a book changed behind the pipeline", missing, r.c.ConfirmAfter))
	}
	res.report.Status = res.verdict(missing, counterDrift)
	return res, nil
}

// brokenf records something no pipeline state explains.
func (res *result) brokenf(format string, args ...any) {
	res.broken = true
	res.report.Diffs = append(res.report.Diffs, fmt.Sprintf(format, args...))
}

// held sums the quantities one book's orders hold, by state.
type held struct{ reserved, paid int64 }

func (h *held) add(state string, qty int64) {
	switch state {
	case domain.StateReserved:
		h.reserved += qty
	case domain.StatePaid:
		h.paid += qty
	}
}

// checkMySQL holds MySQL to its own invariants: the counters add up to the total, and
// locked and sold are what its reserved and paid rows hold.
func (res *result) checkMySQL() {
	if !res.db.found {
		return
	}
	var h held
	for _, o := range res.db.orders {
		h.add(o.state, o.qty)
	}
	c := res.db.c
	if c.Available+c.Locked+c.Sold != c.Total {
		res.brokenf("mysql: available %d + locked %d + sold %d = %d, total is %d",
			c.Available, c.Locked, c.Sold, c.Available+c.Locked+c.Sold, c.Total)
	}
	if h.reserved != c.Locked || h.paid != c.Sold {
		res.brokenf("mysql: inventory says locked %d sold %d, its order rows hold reserved %d paid %d",
			c.Locked, c.Sold, h.reserved, h.paid)
	}
}

// flagOverdue reports the orders MySQL holds as reserved past their expire_at (by more
// than margin) while Redis no longer holds the activity: nothing will expire them but the
// sweep job (mq), so until it has, the books are not right.
func (res *result) flagOverdue(margin time.Duration) {
	cutoff := res.rds.nowMs - margin.Milliseconds()
	var n int
	var first string
	for no, o := range res.db.orders {
		if o.state == domain.StateReserved && o.expireAt*1000 < cutoff {
			if n++; first == "" || no < first {
				first = no
			}
		}
	}
	if n > 0 {
		res.brokenf("mysql: %d order(s) reserved past their expire_at with the activity gone from Redis (e.g. %s): "+
			"the sweep job expires them", n, first)
	}
}

// coldStatus is the verdict when Redis does not hold the activity: nothing to compare
// with, so consistent unless MySQL disagrees with itself.
func (res *result) coldStatus() Status {
	if res.broken {
		return Mismatch
	}
	return Consistent
}

// checkRedis reports Redis's counters and holds them to their own invariants: none
// negative, adding up to the total, and (in an exact snapshot) locked and sold being what
// its reserved and paid orders hold.
func (res *result) checkRedis() {
	rc := res.rds.c
	res.report.Redis = &domain.Counters{Total: rc.Total, Remaining: rc.Available, Locked: rc.Locked, Sold: rc.Sold}
	if rc.Available < 0 || rc.Locked < 0 || rc.Sold < 0 || rc.Available+rc.Locked+rc.Sold != rc.Total {
		res.brokenf("redis: remaining %d + locked %d + sold %d = %d, total is %d",
			rc.Available, rc.Locked, rc.Sold, rc.Available+rc.Locked+rc.Sold, rc.Total)
	}
	if !res.rds.exact {
		return
	}
	var h held
	for _, o := range res.rds.orders {
		h.add(o.State, o.Quantity)
	}
	if h.reserved != rc.Locked || h.paid != rc.Sold {
		res.brokenf("redis: stock says locked %d sold %d, its orders hold reserved %d paid %d",
			rc.Locked, rc.Sold, h.reserved, h.paid)
	}
}

// diffCounters reports the raw difference of the counters as both books stand, and sums
// the drift.
func (res *result) diffCounters() {
	rep := &res.report
	rc, dc := res.rds.c, res.db.c
	for _, f := range []struct {
		name      string
		redis, db int64
	}{{"remaining/available", rc.Available, dc.Available}, {"locked", rc.Locked, dc.Locked},
		{"sold", rc.Sold, dc.Sold}, {"total", rc.Total, dc.Total}} {
		if f.redis != f.db {
			rep.Diffs = append(rep.Diffs, fmt.Sprintf("%s: redis %d, mysql %d (redis %+d)", f.name, f.redis, f.db, f.redis-f.db))
			if f.name != "total" {
				rep.Drift += abs(f.redis - f.db)
			}
		}
	}
}

// replayOutbox applies the outbox (up to the Redis snapshot) to MySQL's snapshot as the
// writer would. It returns every order's state afterwards and leaves the counters
// afterwards in res.full; each entry MySQL still lacks counts in flight.
func (r *Reconciler) replayOutbox(ctx context.Context, res *result) (map[string]string, error) {
	evs, truncated, err := r.readOutbox(ctx, res.report.ActivityID, res.rds.lastID)
	if err != nil {
		return nil, err
	}
	res.truncated = truncated
	sim := make(map[string]string, len(res.db.orders))
	for no, o := range res.db.orders {
		sim[no] = o.state
	}
	c := res.db.c
	adjusted := map[string]bool{}
	for _, ev := range evs {
		if ev.Type == event.Entered { // a draw's entry moves no stock
			continue
		}
		if ev.Type == event.Adjusted {
			if !res.db.adjusted[ev.EventID] && !adjusted[ev.EventID] {
				adjusted[ev.EventID] = true
				c.Available += ev.Delta
				c.Total += ev.Delta
				res.report.InFlight++
			}
			continue
		}
		if c.advance(sim[ev.OrderNo], string(ev.Type), ev.Quantity) {
			sim[ev.OrderNo] = string(ev.Type)
			res.report.InFlight++
		}
	}
	res.full = c
	return sim, nil
}

// diffLine is one order line of a report.
type diffLine struct {
	rank int // lines that need a person first
	text string
}

// compareOrders compares every order with the replayed MySQL (sim), adds the differences
// to the report and returns how many are confirmed missing. The events MySQL lacks that
// nothing in the outbox explains become res.candidates, applied to res.full.
func (r *Reconciler) compareOrders(ctx context.Context, res *result, sim map[string]string) int {
	var lines []diffLine
	missing := 0
	for _, no := range res.rds.nos {
		o, ok := res.rds.orders[no]
		if !ok {
			continue
		}
		l, differs, lost := r.compareOrder(ctx, res, sim, o)
		if lost {
			missing++
		}
		if differs {
			lines = append(lines, l)
		}
	}
	lines = append(lines, res.mysqlOnly()...)
	res.report.addLines(lines, r.c.MaxDiffLines)
	return missing
}

// compareOrder compares one Redis order with its MySQL row and its replayed state, and
// records the difference, if any: its line, and whether it is confirmed missing.
func (r *Reconciler) compareOrder(ctx context.Context, res *result, sim map[string]string,
	o domain.Order) (l diffLine, differs, missing bool) {
	rep := &res.report
	no := o.OrderNo
	raw, have := res.db.orders[no]
	if have && raw.qty != o.Quantity {
		rep.Orders = append(rep.Orders, OrderDiff{OrderNo: no, Redis: o.State, MySQL: raw.state, Class: Broken})
		res.broken = true
		return diffLine{0, fmt.Sprintf("order %s: redis quantity %d, mysql %d", no, o.Quantity, raw.qty)}, true, false
	}
	if raw.state == o.State {
		return diffLine{}, false, false
	}
	d := OrderDiff{OrderNo: no, Redis: o.State, MySQL: raw.state}
	l.text = fmt.Sprintf("order %s: redis %s, mysql %s", no, o.State, cmp.Or(raw.state, "no row"))
	switch s := sim[no]; {
	case s == o.State:
		d.Class = InOutbox
		l = diffLine{2, l.text + " (event in the outbox)"}
	case res.full.advance(s, o.State, o.Quantity):
		res.candidates = append(res.candidates, o)
		var note string
		d.Class, note = r.classify(ctx, res, "o:"+no+":"+o.State+":"+s)
		l.text += " (" + note + ")"
		if d.Class == Missing {
			missing = true
		} else {
			rep.InFlight++
			l.rank = 1
		}
	default:
		d.Class = Broken
		res.broken = true
		l.text += " (mysql is ahead of redis: not a state the pipeline produces)"
	}
	rep.Orders = append(rep.Orders, d)
	return l, true, missing
}

// mysqlOnly records the orders MySQL has and Redis does not: not a state the pipeline
// produces.
func (res *result) mysqlOnly() []diffLine {
	var lines []diffLine
	for no, o := range res.db.orders {
		if _, ok := res.rds.orders[no]; !ok {
			res.report.Orders = append(res.report.Orders, OrderDiff{OrderNo: no, MySQL: o.state, Class: Broken})
			res.broken = true
			lines = append(lines, diffLine{0, fmt.Sprintf("order %s: in mysql (%s, qty %d), not in redis", no, o.state, o.qty)})
		}
	}
	return lines
}

// addLines adds order lines to the report, those that need a person first, at most limit.
func (rep *Report) addLines(lines []diffLine, limit int) {
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].rank < lines[j].rank })
	for i, l := range lines {
		if i == limit {
			rep.Diffs = append(rep.Diffs, fmt.Sprintf("... and %d more orders", len(lines)-i))
			break
		}
		rep.Diffs = append(rep.Diffs, l.text)
	}
}

// explainCounters looks at counters that every order event together still does not
// explain (an adjustment on Kafka, or a book changed behind the pipeline): drift says
// they differ, missing that the difference is confirmed. Only an exact snapshot is judged.
func (r *Reconciler) explainCounters(ctx context.Context, res *result) (drift, missing bool) {
	full, rc := res.full, res.rds.c
	if full == rc {
		return false, false
	}
	if !res.rds.exact {
		return true, false
	}
	cls, note := r.classify(ctx, res, fmt.Sprintf("c:%d:%d:%d:%d", rc.Total-full.Total,
		rc.Available-full.Available, rc.Locked-full.Locked, rc.Sold-full.Sold))
	res.report.Diffs = append(res.report.Diffs,
		fmt.Sprintf("counters: with every order event applied mysql would hold %s; "+
			"redis holds %s (%s)", full, rc, note))
	return true, cls == Missing
}

// verdict is the status of a warm activity once every difference is classified.
func (res *result) verdict(missing int, counterDrift bool) Status {
	rep := &res.report
	switch {
	case res.broken || missing > 0:
		return Mismatch
	case rep.Drift > 0 || res.rds.c.Total != res.db.c.Total || len(rep.Orders) > 0 || counterDrift:
		return InFlight
	default:
		return Consistent
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
