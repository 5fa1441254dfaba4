package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/internal/authtoken"
)

// rowRun is one row while it runs: its buyers' clients, its merchant, its activity, what
// the buyers were told, and the typed findings the verdict is made of.
type rowRun struct {
	s   *System
	row Row
	sc  Scale
	b   Burst
	cs  []*client // the buyers spread over every gateway
	m   *merchant
	aid int64
	t   *tally
	res *Result

	injectFailed bool // the row's Inject returned an error
	exited       bool // a child process exited without being killed by the row
	forbidden    bool // an answer or HTTP status the row forbids was seen
	noEvidence   bool // the answer the row expects was never seen
}

// runRow: a healthy system, a fresh activity, the burst with the fault in it, the drain,
// the counts.
func runRow(ctx context.Context, s *System, row Row, sc Scale) (res Result) {
	res = Result{Row: row, Status: Fail}
	fail := func(format string, args ...any) Result {
		res.Reasons = append(res.Reasons, fmt.Sprintf(format, args...))
		res.Status = Fail
		return res
	}
	if restarted, err := s.ensureUp(ctx); err != nil {
		return fail("system not up before the row: %v", err)
	} else if len(restarted) > 0 {
		res.Reasons = append(res.Reasons, "restarted before the row: "+strings.Join(restarted, ", "))
	}
	if row.Inventory != nil {
		restore, err := s.withInventory(ctx, row.Inventory)
		if err != nil {
			return fail("restart rpc with the row's config: %v", err)
		}
		defer func() {
			if err := restore(ctx); err != nil {
				res.Reasons = append(res.Reasons, "restart rpc with the suite's config: "+err.Error())
				res.Status = Fail
			}
		}()
	}
	r := &rowRun{s: s, row: row, sc: sc, b: rowBurst(row, sc), res: &res}
	if msg, err := r.setUp(ctx); err != nil {
		return fail("%s%v", msg, err)
	}
	faultEnd := r.burst(ctx)
	if err := r.afterBurst(ctx); err != nil {
		return fail("system not up after the burst: %v", err)
	}
	ok, last := r.m.drain(ctx, r.aid, sc.DrainBound)
	if ok { // reconciliation of a cold activity reads MySQL alone: let the writer catch up first
		if v, _ := writerLag(ctx, r.s); len(v) > 0 {
			ok = false
			res.Reasons = append(res.Reasons, v...)
		}
	}
	res.Consistent = ok
	if ok {
		res.TimeToConsistent = time.Since(faultEnd)
	} else if last.Status != "consistent" {
		res.Reasons = append(res.Reasons, fmt.Sprintf("reconciliation %q after %s: %s", last.Status, sc.DrainBound,
			firstN(last.Diffs, 2)))
	}
	n, err := r.audit(ctx, ok)
	r.note()
	if err != nil {
		return fail("audit: %v", err)
	}
	r.decide(ok, n)
	return res
}

// rowBurst is the row's buyers: the default burst, adjusted by the row.
func rowBurst(row Row, sc Scale) Burst {
	b := Burst{Buyers: sc.Buyers, Stock: int64(sc.Stock), Limit: 1, PayTimeout: 600, Pay: 0.5, Cancel: 0.2,
		SecondTry: 0.2, Arrive: sc.FaultAt + sc.RedisDown + 2*time.Second}
	if row.Burst != nil {
		row.Burst(&b)
	}
	return b
}

// setUp makes the row's clients and creates its activity; on failure, what failed (a
// prefix of the reason) and why.
func (r *rowRun) setUp(ctx context.Context) (string, error) {
	urls := r.s.gatewayURLs()
	for i, u := range urls {
		if r.b.Failover != nil {
			r.cs = append(r.cs, newClientDial(u, failoverDial(urls, i, r.b.Failover)))
		} else {
			r.cs = append(r.cs, newClient(u))
		}
	}
	mt, err := authtoken.Merchant(r.s.MerchantSecret, 1, 24*time.Hour)
	if err != nil {
		return "", err
	}
	r.m = &merchant{c: newClient(r.s.APIURL), token: mt}
	if r.aid, err = r.m.create(ctx, "fault: "+r.row.Name, r.b); err != nil {
		return "create the activity: ", err
	}
	return "", nil
}

// burst runs the buyers with the row's fault injected FaultAt into it, and returns when
// the fault was over.
func (r *rowRun) burst(ctx context.Context) (faultEnd time.Time) {
	var idb [4]byte
	_, _ = rand.Read(idb[:])
	r.t = newTally()
	r.s.Hot = r.aid
	b, sc := r.b, r.sc
	burstEnd := make(chan struct{})
	go func() {
		defer close(burstEnd)
		buyers(ctx, r.cs, r.s.BuyerSecret, r.aid, b, "f"+hex.EncodeToString(idb[:]), r.aid*1_000_000,
			time.Now().Add(b.Arrive+sc.RequestDeadline+time.Duration(b.DrawSeconds)*time.Second), r.t)
	}()
	faultEnd = time.Now()
	if r.row.Inject != nil {
		time.Sleep(sc.FaultAt)
		if err := r.row.Inject(ctx, r.s, sc); err != nil {
			r.injectFailed = true
			r.res.Reasons = append(r.res.Reasons, "inject: "+err.Error())
		}
		faultEnd = time.Now()
	}
	<-burstEnd
	return faultEnd
}

// afterBurst waits out the orders left to expire, notes the children that exited on their
// own and brings the system back up.
func (r *rowRun) afterBurst(ctx context.Context) error {
	if r.b.PayNearExpiry { // every unpaid order must have expired before the books can agree
		time.Sleep(time.Duration(r.b.PayTimeout)*time.Second + 2*time.Second)
	}
	for _, ch := range r.s.children() {
		if !ch.alive() && !ch.wasKilled() {
			r.exited = true
			r.res.Reasons = append(r.res.Reasons, ch.name+" exited on its own (log "+ch.log+")")
		}
	}
	_, err := r.s.ensureUp(ctx)
	return err
}

// audit counts the row's findings: the books and MySQL's orders (and entries) against what
// the buyers were told, the statuses seen, the row's own check once consistent.
func (r *rowRun) audit(ctx context.Context, consistent bool) (counts, error) {
	res, t := r.res, r.t
	n, err := audit(ctx, r.m, newOrderModel(r.s.MariaDB.DSN), r.aid, r.b, t)
	if r.b.DrawSeconds > 0 && err == nil {
		var e counts
		e, err = auditEntries(ctx, r.s.MariaDB.DSN, r.aid, t)
		n.lost, n.duplicated, n.violations = n.lost+e.lost, n.duplicated+e.duplicated, append(n.violations, e.violations...)
	}
	res.Acknowledged, res.Oversold, res.Lost, res.Duplicated = n.acknowledged, n.oversold, n.lost, n.duplicated
	res.ToldNo = n.toldNo
	res.Reasons = append(res.Reasons, firstNList(n.violations, 4)...)
	res.Codes, res.Busy = t.codes, t.busyLast.Sub(t.busyFirst)
	if r.row.Statuses != nil {
		if bad := unexpectedStatuses(r.cs, r.row.Statuses); bad != "" {
			res.Reasons = append(res.Reasons, "buyers saw HTTP statuses this row forbids: "+bad)
			r.forbidden = true
		}
	}
	if r.row.Check != nil && consistent {
		v, notes := r.row.Check(ctx, r.s, r.aid)
		res.Reasons = append(res.Reasons, notes...)
		res.Reasons = append(res.Reasons, v...)
		n.violations = append(n.violations, v...)
	}
	return n, err
}

// note words the answers worth a word and sets the flags of the expected and forbidden
// answers.
func (r *rowRun) note() {
	res, t, row := r.res, r.t, r.row
	if k := t.codes[apiclient.CodeInvalidArg]; k > 0 {
		res.Reasons = append(res.Reasons, fmt.Sprintf("%d well-formed requests answered 400 INVALID_ARGUMENT: "+
			"the gateway's open zRPC breaker (API.md note 11); a client does not retry those", k))
	}
	if k := t.codes[apiclient.CodeInternal]; k > 0 {
		res.Reasons = append(res.Reasons, fmt.Sprintf("%d answered 500 INTERNAL (a dependency failing behind the "+
			"inventory service, DESIGN.md \"Failure stance\"), retried", k))
	}
	r.noEvidence = row.Expect != "" && t.codes[row.Expect] == 0
	if row.Forbid != "" && t.codes[row.Forbid] > 0 {
		r.forbidden = true
		res.Reasons = append(res.Reasons, fmt.Sprintf("%d buyers answered %s, which this row forbids",
			t.codes[row.Forbid], row.Forbid))
	}
	if r.noEvidence {
		res.Reasons = append(res.Reasons, "no buyer was answered "+row.Expect+": the fault did not bite")
	}
	if t.unanswered > 0 {
		res.Reasons = append(res.Reasons, fmt.Sprintf(
			"%d requests unanswered at the deadline (not a loss: never acknowledged)", t.unanswered))
	}
}

// decide passes the row on its counts and flags, never on its reasons' words.
func (r *rowRun) decide(consistent bool, n counts) {
	res := r.res
	switch {
	case res.Acknowledged == 0:
		res.Reasons = append(res.Reasons, "no reservation acknowledged: the row proves nothing")
	case !consistent || res.Oversold > 0 || res.Lost > 0 || res.Duplicated > 0 || res.ToldNo > 0 ||
		len(n.violations) > 0:
	case r.exited || r.injectFailed || r.noEvidence || r.forbidden:
	default:
		res.Status = Pass
	}
}
