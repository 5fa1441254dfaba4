// Package reconcile compares an activity's two books — Redis, which takes the burst, and
// MySQL, the ledger the writer keeps from the event stream — and, when asked, re-emits
// the events MySQL is missing. It never overwrites one book from the other.
//
// One run reads, in this order: MySQL (inventory, orders and applied adjustments in one
// transaction), then Redis (stock hash, every order, the newest outbox entry id and the
// clock, in one small MULTI; then every order in chunks, put back as it was at that
// MULTI), then the activity's outbox up to that entry. Every change reaches
// MySQL only after it happened in Redis, so a healthy MySQL is never ahead of a Redis
// snapshot taken after it: whatever MySQL lacks is either in the outbox (replayed here
// through the writer's transition table), on Kafka, or lost. The last two look the same
// in one run; a difference is a mismatch when a later run still sees it ConfirmAfter
// after it was first seen and after the writer's consumer group has committed past the
// topic's end offsets of that first sight (so nothing that was on Kafka then is pending). Anything a healthy system cannot show at all (MySQL
// ahead of Redis, a negative counter, counters that disagree with their own book's
// orders) is a mismatch at once.
package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

// Status is a run's verdict.
type Status string

const (
	// Consistent: both books agree.
	Consistent Status = "consistent"
	// InFlight: they differ, but only by events not yet applied (in the outbox, or not
	// yet seen long enough to call lost).
	InFlight Status = "in_flight"
	// Mismatch: a difference persisted, or something no pipeline state explains.
	Mismatch Status = "mismatch"
)

// Conf tunes reconciliation.
type Conf struct {
	// ConfirmAfter: a difference no outbox entry explains becomes a mismatch when a later
	// run still sees it this long after it was first seen (and, with Brokers, once the
	// writer has consumed past what was on Kafka then). Without Brokers keep it above the
	// writer's normal lag behind the relay, or a slow writer reads as lost events.
	ConfirmAfter time.Duration `json:",default=10s"`
	// HistoryTTL: how long the record of unexplained differences outlives the last run.
	HistoryTTL time.Duration `json:",default=24h"`
	// MaxOutbox: the most outbox entries one run replays; beyond it differences are
	// reported in flight without detail (a huge backlog is a relay problem of its own).
	MaxOutbox int `json:",default=200000,range=[1:100000000]"`
	// MaxDiffLines caps the per-order lines of a report.
	MaxDiffLines int `json:",default=50,range=[1:100000]"`
	// Brokers and WriterGroup locate the writer's Kafka consumer group (brokers default to
	// the relay's). With them a difference is confirmed only once the group has committed
	// past the topic's end as it was when the difference was first seen: an event still on
	// Kafka is in flight however far the writer lags. Without them only ConfirmAfter counts.
	Brokers     []string `json:",optional"`
	WriterGroup string   `json:",default=seckill-writer"`
	// ReadDuty is the share of wall time a run's reading of Redis may take: after each
	// chunk of orders (orderChunk) it pauses (1/ReadDuty - 1) times as long as the chunk
	// took, 1 = no pause. A run goes on inside the inventory service, beside the sale it
	// audits; unpaced, reading a 100,000-order activity back to back took most of a core
	// of this 2-core machine and tripled the p50 of the reservations beside it.
	ReadDuty float64 `json:",default=0.5,range=(0:1]"`
	// Timeout bounds one Reconcile or Repair call on the inventory service, which gives
	// these two methods this instead of its zRPC Timeout (2 s, meant for the sale's calls)
	// unless its MethodTimeouts names them: a run over 100,000 orders takes seconds.
	Timeout time.Duration `json:",default=1m"`
}

// Pipeline tells how far the writer has got through Kafka (kafkax.Progress).
type Pipeline interface {
	Ends(ctx context.Context) (kafkax.Offsets, error)
	Reached(ctx context.Context, marks kafkax.Offsets) (bool, error)
}

// DB is MySQL's side: the inventory row and the activity's total.
type DB struct {
	Total, Available, Locked, Sold int64
}

// Class says why an order differs.
type Class string

const (
	// InOutbox: an outbox entry brings MySQL to Redis's state.
	InOutbox Class = "in_outbox"
	// Pending: nothing in the outbox explains it yet; on Kafka, or lost (not yet confirmed).
	Pending Class = "pending"
	// Missing: still unexplained after ConfirmAfter: the event is lost; Repair re-emits it.
	Missing Class = "missing"
	// Broken: MySQL holds something Redis never did (ahead of it, or another quantity).
	Broken Class = "broken"
)

// OrderDiff is one order whose state differs between the books.
type OrderDiff struct {
	OrderNo string
	Redis   string // state in Redis ("" absent)
	MySQL   string // state of the MySQL row ("" absent)
	Class   Class
}

// Report is one run's result.
type Report struct {
	ActivityID int64
	Status     Status
	Redis      *stock.Counters // nil when the activity is not warm
	DB         DB
	// InFlight counts events not yet applied: outbox entries MySQL still lacks plus
	// orders whose difference nothing in the outbox explains yet (their events are
	// presumably on Kafka).
	InFlight int64
	// Drift is the total absolute difference of remaining/available, locked and sold.
	Drift  int64
	Orders []OrderDiff
	Diffs  []string // human-readable, with the numbers
}

// Reconciler compares the books of one deployment. Safe for concurrent use; several
// instances may run at once (reads plus one small history key per activity).
type Reconciler struct {
	c     Conf
	store *stock.Store
	db    sqlx.SqlConn // opens the snapshot transaction the models read in
	books books
	pipe  Pipeline                                         // nil: confirmation by ConfirmAfter alone
	sleep func(ctx context.Context, d time.Duration) error // the pause of ReadDuty
}

// books are the writer's MySQL tables, read through their goctl models.
type books struct {
	inventory   model.InventoryModel
	orders      model.SeckillOrderModel
	adjustments model.StockAdjustmentModel
}

// New returns a reconciler over the given Redis store and MySQL connection. c comes from
// go-zero's config loader (or conf.FillDefault): its defaults are not applied here.
func New(c Conf, store *stock.Store, db sqlx.SqlConn) *Reconciler {
	return &Reconciler{c: c, store: store, db: db, books: books{inventory: model.NewInventoryModel(db),
		orders: model.NewSeckillOrderModel(db), adjustments: model.NewStockAdjustmentModel(db)},
		sleep: sleepCtx}
}

// sleepCtx waits for d, or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pace pauses after a chunk of reading that began at start, as ReadDuty says.
func (r *Reconciler) pace(ctx context.Context, start time.Time) error {
	if r.c.ReadDuty <= 0 || r.c.ReadDuty >= 1 {
		return nil
	}
	return r.sleep(ctx, time.Duration(float64(time.Since(start))*(1/r.c.ReadDuty-1)))
}

// WithPipeline makes confirmation also wait until the writer has consumed everything that
// was on Kafka when a difference was first seen.
func (r *Reconciler) WithPipeline(p Pipeline) *Reconciler {
	r.pipe = p
	return r
}

// Run compares the books of one activity and records its unexplained differences, so the
// next run (from any instance) can tell a lingering difference from one in flight.
func (r *Reconciler) Run(ctx context.Context, aid int64) (Report, error) {
	res, err := r.compare(ctx, aid)
	if err != nil {
		return Report{}, err
	}
	if res.rds.warm {
		if err := r.saveHistory(ctx, aid, res.seen); err != nil {
			return Report{}, fmt.Errorf("reconcile %d: save history: %w", aid, err)
		}
	}
	return res.report, nil
}

// ErrRefused: re-emitting what MySQL lacks would not make the books agree (MySQL was
// changed behind the pipeline, or Redis itself is broken); it needs a person.
var ErrRefused = errors.New("reconcile: repair refused")

// Repair re-appends to the activity's outbox an event for every order whose MySQL row is
// missing or behind Redis and whose change is not already in the outbox, so the relay
// carries it and the writer (idempotent by order state) applies it. Harmless when the
// event was merely late: the writer ignores a repeat. It refuses (ErrRefused) unless
// applying those events would bring every MySQL counter to Redis's value, and does
// nothing while the outbox holds more than MaxOutbox entries (a burst still running).
func (r *Reconciler) Repair(ctx context.Context, aid int64) (int, Report, error) {
	res, err := r.compare(ctx, aid)
	if err != nil {
		return 0, Report{}, err
	}
	switch {
	case !res.rds.warm:
		return 0, res.report, fmt.Errorf("%w: activity %d is not in Redis: nothing to re-emit from",
			ErrRefused, aid)
	case !res.db.found:
		return 0, res.report, fmt.Errorf("%w: activity %d has no MySQL inventory row", ErrRefused, aid)
	case !res.rds.exact || res.truncated:
		return 0, res.report, xerr.Newf(xerr.Busy, "activity %d is changing too fast to repair now", aid)
	case res.broken:
		return 0, res.report, fmt.Errorf("%w: %s", ErrRefused, strings.Join(res.report.Diffs, "; "))
	case res.full != res.rds.counters():
		return 0, res.report, fmt.Errorf("%w: re-emitting the %d missing events would leave MySQL at %s, Redis has %s",
			ErrRefused, len(res.candidates), res.full, res.rds.counters())
	}
	if len(res.candidates) == 0 {
		return 0, res.report, nil
	}
	keys := r.store.Keys()
	sku := strconv.FormatInt(res.rds.sku, 10)
	now := strconv.FormatInt(res.rds.nowMs, 10)
	err = r.store.Redis().PipelinedCtx(ctx, func(p red.Pipeliner) error {
		for _, o := range res.candidates {
			p.XAdd(ctx, &red.XAddArgs{Stream: keys.Events(aid), Values: []any{
				event.FieldType, o.State, event.FieldActivity, strconv.FormatInt(aid, 10),
				event.FieldSku, sku, event.FieldOrderNo, o.OrderNo,
				event.FieldUID, strconv.FormatInt(o.UID, 10), event.FieldQuantity, strconv.FormatInt(o.Quantity, 10),
				event.FieldAt, now, event.FieldRequestID, o.RequestID,
				event.FieldCreated, strconv.FormatInt(o.CreatedAt, 10), event.FieldExpire, strconv.FormatInt(o.ExpireAt, 10),
			}})
		}
		return nil
	})
	if err != nil {
		return 0, res.report, fmt.Errorf("reconcile %d: re-emit: %w", aid, err)
	}
	// The relay walks the active set; make sure the activity is in it.
	if err := r.store.MarkActive(ctx, aid, res.rds.end); err != nil {
		return len(res.candidates), res.report, err
	}
	return len(res.candidates), res.report, nil
}

// result is a comparison plus what Run and Repair need beyond the report.
type result struct {
	report     Report
	db         dbBook
	rds        redisBook
	seen       map[string]string // unexplained differences -> "first seen (ms)[|kafka marks]"
	ends       *string           // the topic's end offsets, encoded, taken once a run when needed
	reached    map[string]bool   // marks -> whether the writer has consumed past them
	candidates []stock.Order     // orders MySQL lacks that no outbox entry explains
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

type dbOrder struct {
	state    string
	qty      int64
	expireAt int64 // unix s
}

type dbBook struct {
	found    bool
	c        counters
	orders   map[string]dbOrder
	adjusted map[string]bool
}

// readDB reads inventory, orders and applied adjustments in one transaction: under
// REPEATABLE READ (the MySQL and MariaDB default) they are one snapshot, in which the
// writer's invariants hold exactly.
func (r *Reconciler) readDB(ctx context.Context, aid int64) (dbBook, error) {
	b := dbBook{orders: map[string]dbOrder{}, adjusted: map[string]bool{}}
	err := r.db.TransactCtx(ctx, func(ctx context.Context, s sqlx.Session) error {
		return b.read(ctx, r.books, s, aid)
	})
	if err != nil {
		return b, fmt.Errorf("reconcile %d: read mysql: %w", aid, err)
	}
	return b, nil
}

// read fills b from the tables inside session.
func (b *dbBook) read(ctx context.Context, m books, s sqlx.Session, aid int64) error {
	inv, err := m.inventory.FindBook(ctx, s, aid)
	switch {
	case errors.Is(err, model.ErrNotFound):
	case err != nil:
		return err
	default:
		b.found = true
		b.c = counters{Total: int64(inv.Total), Available: int64(inv.Available), Locked: int64(inv.Locked),
			Sold: int64(inv.Sold)}
	}
	orders, err := m.orders.FindStatesByActivity(ctx, s, aid)
	if err != nil {
		return err
	}
	for _, o := range orders {
		b.orders[o.OrderNo] = dbOrder{state: o.Status, qty: int64(o.Quantity), expireAt: o.ExpireAt}
	}
	ids, err := m.adjustments.FindEventIdsByActivity(ctx, s, aid)
	if err != nil {
		return err
	}
	for _, id := range ids {
		b.adjusted[id] = true
	}
	return nil
}

type redisBook struct {
	warm    bool
	exact   bool // the order list and the counters are one snapshot
	c       counters
	sku     int64
	end     int64    // the last due time: end + pay timeout (the active set's score)
	nos     []string // oldest first
	orders  map[string]stock.Order
	lastID  string // newest outbox entry at the snapshot; "" when empty
	nowMs   int64
	history map[string]string
}

func (b redisBook) counters() counters { return b.c }

// orderChunk is how many orders one read of readRedis takes: each read is a short
// pipeline, so reconciliation never holds the activity's shard for long.
const orderChunk = 500

// readRedis takes the activity as it was at one moment without blocking its shard: one
// small MULTI (stock hash with its change count 'seq', the order count, the newest outbox
// entry id, the clock, the recon history), then every order in chunks (ZSCAN of the
// orders zset, which returns every member present throughout, and pipelined HMGETs;
// paced by ReadDuty).
// Orders changed meanwhile are put back as they were at the MULTI's seq: created after it
// ('cseq' > seq) are left out, changed after it ('useq' > seq) were reserved then (every
// change leaves reserved). So the snapshot is exact however busy the activity is.
func (r *Reconciler) readRedis(ctx context.Context, aid int64) (redisBook, error) {
	keys := r.store.Keys()
	var b redisBook
	pipe, err := r.store.Redis().TxPipeline()
	if err != nil {
		return b, err
	}
	stockCmd := pipe.HGetAll(ctx, keys.Stock(aid))
	lastCmd := pipe.XRevRangeN(ctx, keys.Events(aid), "+", "-", 1)
	timeCmd := pipe.Time(ctx)
	histCmd := pipe.HGetAll(ctx, keys.Recon(aid))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, red.Nil) {
		return b, fmt.Errorf("reconcile %d: read redis: %w", aid, err)
	}
	m := stockCmd.Val()
	n := func(f string) int64 { v, _ := strconv.ParseInt(m[f], 10, 64); return v }
	_, warm := m["remaining"]
	seq := n("seq")
	b = redisBook{warm: warm, exact: true, sku: n("sku"), end: n("end") + n("ttl"),
		c:      counters{Total: n("total"), Available: n("remaining"), Locked: n("locked"), Sold: n("sold")},
		orders: map[string]stock.Order{}, nowMs: timeCmd.Val().UnixMilli(), history: histCmd.Val()}
	if last := lastCmd.Val(); len(last) > 0 {
		b.lastID = last[0].ID
	}
	if !warm {
		return b, nil
	}
	rds := r.store.Redis()
	var cursor uint64
	for {
		start := time.Now()
		var cmd *red.ScanCmd
		err := rds.PipelinedCtx(ctx, func(p red.Pipeliner) error {
			cmd = p.ZScan(ctx, keys.Orders(aid), cursor, "", orderChunk)
			return nil
		})
		if err != nil && !errors.Is(err, red.Nil) {
			return b, fmt.Errorf("reconcile %d: list orders: %w", aid, err)
		}
		var page []string
		page, cursor = cmd.Val()
		var nos []string
		for i := 0; i+1 < len(page); i += 2 { // member, score
			if _, seen := b.orders[page[i]]; !seen {
				nos = append(nos, page[i])
			}
		}
		if err := r.readOrders(ctx, aid, seq, nos, &b); err != nil {
			return b, err
		}
		if cursor == 0 {
			break
		}
		if err := r.pace(ctx, start); err != nil {
			return b, err
		}
	}
	for no := range b.orders {
		b.nos = append(b.nos, no)
	}
	sort.Slice(b.nos, func(i, j int) bool {
		oi, oj := b.orders[b.nos[i]], b.orders[b.nos[j]]
		return oi.CreatedAt < oj.CreatedAt || oi.CreatedAt == oj.CreatedAt && oi.OrderNo < oj.OrderNo
	})
	return b, nil
}

// readOrders reads one chunk of order hashes in a pipeline and adds each, as it was at seq,
// to b.
func (r *Reconciler) readOrders(ctx context.Context, aid, seq int64, nos []string, b *redisBook) error {
	if len(nos) == 0 {
		return nil
	}
	keys := r.store.Keys()
	cmds := make([]*red.SliceCmd, len(nos))
	err := r.store.Redis().PipelinedCtx(ctx, func(p red.Pipeliner) error {
		for i, no := range nos {
			cmds[i] = p.HMGet(ctx, keys.Order(aid, no), "uid", "qty", "state", "expire_at", "request_id", "created_at", "cseq", "useq")
		}
		return nil
	})
	if err != nil && !errors.Is(err, red.Nil) {
		return fmt.Errorf("reconcile %d: read orders: %w", aid, err)
	}
	for i, no := range nos {
		v := cmds[i].Val()
		s := func(j int) string {
			if j < len(v) && v[j] != nil {
				if str, ok := v[j].(string); ok {
					return str
				}
				return fmt.Sprint(v[j])
			}
			return ""
		}
		num := func(j int) int64 { x, _ := strconv.ParseInt(s(j), 10, 64); return x }
		if s(2) == "" {
			continue // listed but gone: expired with the activity's keys
		}
		if num(6) > seq {
			continue // created after the snapshot
		}
		o := stock.Order{OrderNo: no, ActivityID: aid, UID: num(0), Quantity: num(1), State: s(2),
			ExpireAt: num(3), RequestID: s(4), CreatedAt: num(5)}
		if num(7) > seq {
			o.State = domain.StateReserved // changed after the snapshot, from reserved
		}
		b.orders[no] = o
	}
	return nil
}

// outboxPage is how many entries one XRANGE reads.
const outboxPage = 1000

// readOutbox returns the activity's outbox entries up to lastID (those the Redis snapshot
// already reflects), oldest first. truncated: there were more than MaxOutbox.
func (r *Reconciler) readOutbox(ctx context.Context, aid int64, lastID string) (evs []event.Event, truncated bool, err error) {
	if lastID == "" {
		return nil, false, nil
	}
	keys := r.store.Keys()
	start := "-"
	for {
		var cmd *red.XMessageSliceCmd
		err := r.store.Redis().PipelinedCtx(ctx, func(p red.Pipeliner) error {
			cmd = p.XRangeN(ctx, keys.Events(aid), start, lastID, outboxPage)
			return nil
		})
		if err != nil && !errors.Is(err, red.Nil) {
			return nil, false, fmt.Errorf("reconcile %d: read outbox: %w", aid, err)
		}
		msgs := cmd.Val()
		for _, m := range msgs {
			ev, err := event.FromStream(m.ID, m.Values)
			if err != nil {
				continue // the relay dead-letters it; its order shows up as a difference
			}
			evs = append(evs, ev)
		}
		if len(evs) > r.c.MaxOutbox {
			return evs, true, nil
		}
		if len(msgs) < outboxPage {
			return evs, false, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
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

// read takes both books, MySQL first: a healthy MySQL is never ahead of a Redis snapshot
// taken after it.
func (r *Reconciler) read(ctx context.Context, aid int64) (*result, error) {
	if err := domain.CheckActivityID(aid); err != nil {
		return nil, err
	}
	db, err := r.readDB(ctx, aid)
	if err != nil {
		return nil, err
	}
	rds, err := r.readRedis(ctx, aid)
	if err != nil {
		return nil, err
	}
	if !db.found && !rds.warm {
		return nil, xerr.ErrActivityNotFound
	}
	return &result{db: db, rds: rds, seen: map[string]string{}, reached: map[string]bool{},
		report: Report{ActivityID: aid, DB: DB(db.c)}}, nil
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
	res.report.Redis = &stock.Counters{Total: rc.Total, Remaining: rc.Available, Locked: rc.Locked, Sold: rc.Sold}
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
func (r *Reconciler) compareOrder(ctx context.Context, res *result, sim map[string]string, o stock.Order) (l diffLine, differs, missing bool) {
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
	res.report.Diffs = append(res.report.Diffs, fmt.Sprintf("counters: with every order event applied mysql would hold %s; "+
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

// classify looks a difference up in the previous run's record, notes it in this one's,
// and says whether it is confirmed: seen for ConfirmAfter and, with a pipeline, still
// there after the writer consumed everything that was on Kafka when it was first seen.
// While the outbox could not be read to its end, nothing is confirmed (the rest of it
// may explain the difference).
func (r *Reconciler) classify(ctx context.Context, res *result, fp string) (Class, string) {
	first, marks := res.rds.nowMs, ""
	if v, ok := res.rds.history[fp]; ok {
		ms, m, _ := strings.Cut(v, "|")
		if n, err := strconv.ParseInt(ms, 10, 64); err == nil && n <= first {
			first, marks = n, m
		}
	}
	age := time.Duration(res.rds.nowMs-first) * time.Millisecond
	if res.truncated {
		return Pending, "outbox too long to read to its end"
	}
	if marks == "" {
		marks = r.endsNow(ctx, res)
	}
	res.seen[fp] = strconv.FormatInt(first, 10)
	if marks != "" {
		res.seen[fp] += "|" + marks
	}
	if age < r.c.ConfirmAfter {
		return Pending, fmt.Sprintf("not in the outbox, not applied yet, first seen %s ago", age.Round(time.Millisecond))
	}
	if marks != "" {
		done, ok := res.reached[marks]
		if !ok {
			var err error
			if done, err = r.pipe.Reached(ctx, decodeOffsets(marks)); err != nil {
				// Kafka unreachable: fall back to time alone (and say so).
				res.reached[marks] = true
				return Missing, fmt.Sprintf("unexplained for %s: mismatch (kafka unreachable: %v)",
					age.Round(time.Millisecond), err)
			}
			res.reached[marks] = done
		}
		if !done {
			return Pending, fmt.Sprintf("first seen %s ago; the writer has not yet applied everything "+
				"that was on Kafka then", age.Round(time.Millisecond))
		}
	}
	return Missing, fmt.Sprintf("unexplained for %s: mismatch", age.Round(time.Millisecond))
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

func encodeOffsets(o kafkax.Offsets) string {
	parts := make([]string, 0, len(o))
	for p, off := range o {
		parts = append(parts, strconv.Itoa(p)+":"+strconv.FormatInt(off, 10))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

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

// saveHistory replaces the activity's record of unexplained differences with this run's.
func (r *Reconciler) saveHistory(ctx context.Context, aid int64, seen map[string]string) error {
	key := r.store.Keys().Recon(aid)
	pipe, err := r.store.Redis().TxPipeline()
	if err != nil {
		return err
	}
	pipe.Del(ctx, key)
	if len(seen) > 0 {
		pipe.HSet(ctx, key, seen)
		pipe.PExpire(ctx, key, r.c.HistoryTTL)
	}
	_, err = pipe.Exec(ctx)
	return err
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
