// Package reconcile compares an activity's two books, Redis and MySQL, and on request
// re-emits the events MySQL is missing; it never overwrites either book. Reading is in
// read.go, comparing in compare.go, classifying a difference in classify.go and history.go
// (docs/DESIGN.md, "Reconciliation").
package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
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
	// MaxOutbox: the most outbox events one run replays (a batch entry's each); beyond it differences are
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
	// ReadDuty is the share of wall time a run's reading of Redis may take: after each chunk
	// of orders it pauses (1/ReadDuty - 1) times as long as the chunk took; 1 = no pause.
	ReadDuty float64 `json:",default=0.5,range=(0:1]"`
	// Timeout bounds one Reconcile, Repair or DrawAudit call on the inventory service, which
	// gives these methods this instead of its zRPC Timeout (2 s, meant for the sale's calls)
	// unless its MethodTimeouts names them: a run over 100,000 orders takes seconds, an
	// audit of 20,000 entrants can outlast 2 s under load.
	Timeout time.Duration `json:",default=1m"`
}

// Pipeline tells how far the writer has got through Kafka (kafkax.Progress).
type Pipeline interface {
	Ends(ctx context.Context) (kafkax.Offsets, error)
	Reached(ctx context.Context, ends kafkax.Offsets) (bool, error)
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
	Redis      *domain.Counters // nil when the activity is not warm
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
	c       Conf
	store   *stock.Store
	records records      // the differences' history and the shared reports
	db      sqlx.SqlConn // opens the snapshot transaction the models read in
	books   books
	pipe    Pipeline                                         // nil: confirmation by ConfirmAfter alone
	sleep   func(ctx context.Context, d time.Duration) error // the pause of ReadDuty
}

// books are the writer's MySQL tables, read through their goctl models.
type books struct {
	inventory   model.InventoryModel
	orders      model.SeckillOrderModel
	adjustments model.StockAdjustmentModel
}

// New returns a reconciler over the given Redis store and MySQL connection; it keeps its own
// records through rds, under the deployment's key prefix (records). c comes from go-zero's
// config loader (or conf.FillDefault): its defaults are not applied here.
func New(c Conf, store *stock.Store, rds *redis.Redis, prefix string, db sqlx.SqlConn) *Reconciler {
	return &Reconciler{c: c, store: store, records: records{rds: rds, prefix: prefix}, db: db,
		books: books{inventory: model.NewInventoryModel(db), orders: model.NewSeckillOrderModel(db),
			adjustments: model.NewStockAdjustmentModel(db)},
		sleep: sleepCtx}
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
		if err := r.records.saveHistory(ctx, aid, res.seen, r.c.HistoryTTL); err != nil {
			return Report{}, fmt.Errorf("reconcile %d: save history: %w", aid, err)
		}
	}
	return res.report, nil
}
