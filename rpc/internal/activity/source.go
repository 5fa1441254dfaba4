// Package activity loads activities from MySQL into Redis: warm-up, the backfill of a miss and
// the rebuild after a loss, under a per-activity lock, with "no such activity" cached.
// docs/DESIGN.md, "Warm-up, cache backfill and recovery from Redis loss".
package activity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/logc"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

// Record is an activity and its MySQL inventory.
type Record struct {
	Activity  model.Activity
	Available int64
	Locked    int64
	Sold      int64
	// Epoch counts the warm-ups and rebuilds of the activity into Redis; 0: never warmed,
	// so a missing stock hash is a cold cache. Above 0, a missing hash before the keys'
	// expiry is a loss.
	Epoch int64
}

// Source reads an activity from the book of record. ErrNotFound when absent.
type Source interface {
	Load(ctx context.Context, id int64) (*Record, error)
	// Orders returns every order of the activity, as Redis holds them (times in ms).
	Orders(ctx context.Context, id int64) ([]domain.Order, error)
	// BumpEpoch moves the activity's epoch from `from` to from+1; ErrEpochMoved when it
	// was not `from` (another rebuild moved it since it was read).
	BumpEpoch(ctx context.Context, id, from int64) error
}

// ErrNotFound is returned by a Source that has no such activity.
var ErrNotFound = errors.New("activity: not found")

// ErrEpochMoved is returned by BumpEpoch when another rebuild moved the epoch first: BUSY,
// the caller's retry meets that rebuild's result.
var ErrEpochMoved = xerr.New(xerr.Busy, "the activity was rebuilt meanwhile, retry with the same request_id")

// MySQLSource reads activity, inventory and orders from MySQL.
type MySQLSource struct {
	Activities model.ActivityModel
	Inventory  model.InventoryModel
	OrderRows  model.SeckillOrderModel
}

// NewMySQLSource is the source over one database connection.
func NewMySQLSource(
	activities model.ActivityModel,
	inventory model.InventoryModel,
	orders model.SeckillOrderModel,
) MySQLSource {
	return MySQLSource{Activities: activities, Inventory: inventory, OrderRows: orders}
}

// Load implements Source.
func (s MySQLSource) Load(ctx context.Context, id int64) (*Record, error) {
	row, err := s.Activities.FindOneWithInventory(ctx, uint64(id))
	if errors.Is(err, model.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, DBError(fmt.Errorf("load activity %d: %w", id, err))
	}
	return &Record{Activity: row.Activity, Available: int64(row.Available), Locked: int64(row.Locked),
		Sold: int64(row.Sold), Epoch: int64(row.Epoch)}, nil
}

// ordersPage is how many order rows one MySQL read of a rebuild takes.
const ordersPage = 2000

// Orders implements Source.
func (s MySQLSource) Orders(ctx context.Context, id int64) ([]domain.Order, error) {
	var out []domain.Order
	var after uint64
	for {
		rows, err := s.OrderRows.FindPageByActivity(ctx, id, after, ordersPage)
		if err != nil {
			return nil, DBError(fmt.Errorf("orders of activity %d: %w", id, err))
		}
		for _, r := range rows {
			out = append(out, domain.Order{OrderNo: r.OrderNo, ActivityID: id, UID: int64(r.Uid),
				Quantity: int64(r.Quantity), State: r.Status, ExpireAt: r.ExpireAt * 1000,
				CreatedAt: r.PlacedAt * 1000, RequestID: r.RequestId})
			after = r.Id
		}
		if len(rows) < ordersPage {
			return out, nil
		}
	}
}

// BumpEpoch implements Source.
func (s MySQLSource) BumpEpoch(ctx context.Context, id, from int64) error {
	moved, err := s.Inventory.BumpEpoch(ctx, id, from)
	switch {
	case errors.Is(err, model.ErrNotFound):
		return ErrNotFound
	case err != nil:
		return DBError(fmt.Errorf("bump epoch of activity %d: %w", id, err))
	case !moved:
		return ErrEpochMoved
	}
	return nil
}

// Pipeline tells when the writer has consumed everything that was on Kafka at a moment:
// kafkax.Progress.
type Pipeline interface {
	Ends(ctx context.Context) (kafkax.Offsets, error)
	Reached(ctx context.Context, ends kafkax.Offsets) (bool, error)
}

// Loader warms activities up, backfills cache misses and rebuilds lost activities.
type Loader struct {
	Store      *stock.Store
	Source     Source
	Grace      time.Duration // keys live this long after the activity's last order falls due
	MissingTTL time.Duration // how long "no such activity" is cached
	Wait       time.Duration // how long a miss waits for a backfill or rebuild before BUSY
	// Lease is the rebuild lock's lifetime, renewed while the rebuild runs: a rebuilder
	// that dies is taken over once it lapses. Default 10 s.
	Lease time.Duration
	// Pipeline, when set, makes a rebuild wait until the writer group has consumed what
	// was on the order topic when the loss was seen. Nil only where the service has no
	// Kafka configured (no relay): nothing can be in flight to MySQL then.
	Pipeline Pipeline
	// Entries, when set, gives a rebuild the entries of an activity's draw (draw_entry).
	Entries EntrySource
	Now     func() time.Time

	rebuilds rebuilds
}

func (l *Loader) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// KeysExpireAt is when an activity's keys go (unix s): its last order can fall due at end
// + pay timeout, and the keys outlive that by the grace (expiry, relay drain).
func (l *Loader) KeysExpireAt(a model.Activity) int64 {
	return a.EndTime + int64(a.PayTimeoutSeconds) + int64(l.Grace/time.Second)
}

// Warmup loads the activity's stock into Redis if it is absent and ends it active; ENDED after
// the activity's end, unless it is a lost one, which is rebuilt (BUSY until it is).
func (l *Loader) Warmup(ctx context.Context, id int64) (created bool, snap domain.Activity, err error) {
	if err := domain.CheckActivityID(id); err != nil {
		return false, snap, err
	}
	rec, err := l.Source.Load(ctx, id)
	if errors.Is(err, ErrNotFound) {
		l.cacheMissing(ctx, id)
		return false, snap, xerr.ErrActivityNotFound
	}
	if err != nil {
		return false, snap, err
	}
	// An explicit warm-up of a known activity clears a stale "missing" flag.
	if err := l.Store.SetMissing(ctx, id, 0); err != nil {
		return false, snap, xerr.Unavailable(err)
	}
	snap, err = l.Store.Stock(ctx, id)
	switch {
	case err == nil:
		// Warm already: make sure the jobs and the relay see it.
		return false, snap, l.Store.Activate(ctx, id, snap.LastDue())
	case !errors.Is(err, stock.ErrNotWarm):
		return false, snap, err
	}
	now := l.now().Unix()
	if lost := rec.Epoch > 0 && now < l.KeysExpireAt(rec.Activity); !lost && now >= rec.Activity.EndTime {
		return false, snap, xerr.ErrEnded
	}
	return l.ensure(ctx, id)
}

func (l *Loader) cacheMissing(ctx context.Context, id int64) {
	secs := int(l.MissingTTL / time.Second)
	if secs < 1 {
		secs = 1
	}
	if err := l.Store.SetMissing(ctx, id, secs); err != nil {
		logc.Errorf(ctx, "cache missing activity %d: %v", id, err)
	}
}

// Stock returns the activity's stock from Redis; a miss is resolved by one rebuild per activity,
// which the caller waits for up to Wait (then BUSY).
func (l *Loader) Stock(ctx context.Context, id int64) (domain.Activity, error) {
	if err := domain.CheckActivityID(id); err != nil {
		return domain.Activity{}, err
	}
	snap, err := l.Store.Stock(ctx, id)
	if !errors.Is(err, stock.ErrNotWarm) {
		return snap, err
	}
	if err := l.checkMissing(ctx, id); err != nil {
		return snap, err
	}
	_, snap, err = l.ensure(ctx, id)
	return snap, err
}

// ensure starts the activity's rebuild unless one runs (here or on another instance) and
// waits for the stock hash up to Wait. created: this call's rebuild wrote the hash.
func (l *Loader) ensure(ctx context.Context, id int64) (bool, domain.Activity, error) {
	run, started, err := l.rebuilds.start(l, id)
	if err != nil {
		return false, domain.Activity{}, err
	}
	wait := time.NewTimer(l.Wait)
	defer wait.Stop()
	if run != nil {
		select {
		case <-ctx.Done():
			return false, domain.Activity{}, ctx.Err()
		case <-wait.C:
			return false, domain.Activity{}, stock.ErrNotWarm
		case <-run.done:
		}
		if run.err != nil {
			return false, domain.Activity{}, run.err
		}
		snap, err := l.Store.Stock(ctx, id)
		return started && run.created, snap, err
	}
	// Another instance rebuilds: poll Redis.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, domain.Activity{}, ctx.Err()
		case <-wait.C:
			return false, domain.Activity{}, stock.ErrNotWarm
		case <-tick.C:
		}
		snap, err := l.Store.Stock(ctx, id)
		if !errors.Is(err, stock.ErrNotWarm) {
			return false, snap, err
		}
		if err := l.checkMissing(ctx, id); err != nil {
			return false, snap, err
		}
	}
}

// checkMissing returns ErrActivityNotFound while "no such activity" is cached for id.
func (l *Loader) checkMissing(ctx context.Context, id int64) error {
	missing, err := l.Store.Missing(ctx, id)
	if err != nil {
		return xerr.Unavailable(err)
	}
	if missing {
		return xerr.ErrActivityNotFound
	}
	return nil
}

// Close stops the rebuilds this loader runs (their locks lapse after the lease).
func (l *Loader) Close() { l.rebuilds.close() }

// transientMySQL are server errors that a retry can clear: lock wait timeout, deadlock,
// too many connections, server shutdown, statement timeout.
var transientMySQL = map[uint16]bool{1205: true, 1213: true, 1040: true, 1053: true, 3024: true, 1969: true}

// DBError types a MySQL error for the edge: a dependency failure (BUSY) unless a retry cannot
// change it (INTERNAL); business outcomes pass through.
func DBError(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) && !transientMySQL[me.Number] {
		return err
	}
	return xerr.Unavailable(err)
}
