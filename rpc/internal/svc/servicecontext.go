package svc

import (
	"context"
	"errors"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/service"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/reconcile"
	"github.com/seckill/seckill/internal/redisx"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/book"
	"github.com/seckill/seckill/rpc/internal/config"
	"github.com/seckill/seckill/rpc/internal/degrade"
	"github.com/seckill/seckill/rpc/internal/draw"
)

// ServiceContext holds everything that outlives a request, created once.
type ServiceContext struct {
	Config config.Config
	Redis  *redis.Redis
	Store  *stock.Store
	DB     sqlx.SqlConn
	Orders model.SeckillOrderModel
	// Activities is the activity table (CreateActivity, GetActivity, the loader).
	Activities model.ActivityModel
	// Adjustments is the stock_adjustment table (the merchant's stock history).
	Adjustments model.StockAdjustmentModel
	Loader      *activity.Loader
	// Known is the Bloom filter of activity ids MySQL has, consulted before the loader
	// reads MySQL.
	Known *activity.Known
	// Relay moves the outbox to Kafka; nil when not configured (Relay.Brokers empty).
	Relay *relay.Relay
	// Reconciler compares Redis with MySQL (Reconcile, Repair); Reconciles shares its runs
	// (one per activity at a time across instances, its report for every caller meanwhile).
	Reconciler *reconcile.Reconciler
	Reconciles *reconcile.Single
	// Degrade is degrade mode's fence (Degrade: mysql); it routes every call to Redis when off.
	Degrade *degrade.Fence
	// Book serves reservations and order changes from the book the fence chooses.
	Book *book.Router
	// Draws decides the opening draws of the active activities as they fall due.
	Draws *draw.Loop
	// Seeds holds the draw seeds of the activities buyers view (from MySQL, once each).
	Seeds *activity.Seeds
	// Prices holds the unit prices of started activities (from MySQL, once each): amounts.
	Prices *activity.Prices
}

// NewServiceContext builds the context and loads the Lua scripts; it panics on error,
// like the other go-zero Must constructors.
func NewServiceContext(c config.Config) *ServiceContext {
	ctx, err := New(c)
	if err != nil {
		panic(err)
	}
	return ctx
}

// New builds the context: Redis and MySQL clients, the script store (scripts loaded
// before serving, so EVALSHA never meets NOSCRIPT) and the activity loader.
func New(c config.Config) (*ServiceContext, error) {
	rds, keys, store, err := newStore(c)
	if err != nil {
		return nil, err
	}
	db := book.Conn(c.Mysql.DataSource)
	activities := model.NewActivityModel(db)
	inventory, orders := model.NewInventoryModel(db), model.NewSeckillOrderModel(db)
	known := activity.NewKnown(rds, activity.BloomKey(keys.Prefix), c.Stock.BloomBits,
		activities.FindActivityIdsAfter, time.Duration(c.Stock.BloomRefreshMs)*time.Millisecond)
	seedKnown(known)
	rl, err := newRelay(c, store)
	if err != nil {
		return nil, err
	}
	rec := reconcile.New(c.Reconcile, store, rds, keys.Prefix, db)
	progress, err := writerProgress(c)
	if err != nil {
		return nil, err
	}
	if progress != nil {
		rec.WithPipeline(progress)
	}
	loader := newLoader(c, store, db, activity.NewMySQLSource(activities, inventory, orders), known, progress)
	if rl != nil {
		rl.OnGone = resolveGone(loader)
	}
	fence := newFence(c, store, inventory, loader, known, progress)
	// A change runs its script, then (Acknowledge: kafka) the Acker, then (Degrade: mysql) the fence.
	redisBook := book.Redis{Store: store, Fence: booksFence(fence)}
	if rl != nil && c.Relay.AckAfterKafka() {
		redisBook.Acker = rl.Acker()
	}
	router := &book.Router{Fence: booksFence(fence), Redis: redisBook, Loader: loader, MySQL: &book.MySQL{DB: db,
		Inventory: inventory, Orders: orders, Activities: activities, Store: store,
		Concurrency: c.DegradeMode.Concurrency, Seen: fence.Seen}}
	drawer := &draw.Drawer{Store: store, Server: redisBook, Seeds: activities, Chunk: c.Draw.Chunk,
		Lease: time.Duration(c.Draw.LeaseSeconds) * time.Second}
	draws := draw.NewLoop(drawer, func(ctx context.Context) ([]int64, error) {
		due, err := store.Active(ctx, time.Now().Unix(), math.MaxInt64)
		return slices.Sorted(maps.Keys(due)), err
	})
	return &ServiceContext{
		Config: c, Redis: rds, Store: store, DB: db, Orders: orders, Activities: activities,
		Adjustments: model.NewStockAdjustmentModel(db), Loader: loader, Known: known, Relay: rl,
		Reconciler: rec, Reconciles: reconcile.NewSingle(rec), Degrade: fence, Book: router, Draws: draws,
		Seeds: activity.NewSeeds(activities), Prices: activity.NewPrices(store, activities),
	}, nil
}

// Close releases what the context opened beyond go-zero's shared clients: degrade mode's
// Redis probe, a client of its own. The fence asks it while calls come in: close once
// nothing serves (rpcserver's Stop, after the gRPC server).
func (s *ServiceContext) Close() {
	if s.Degrade.Probe != nil {
		_ = s.Degrade.Probe.Close()
	}
}

// newLoader returns the activity loader: warm-up, cache backfill and rebuilds from MySQL.
func newLoader(c config.Config, store *stock.Store, db sqlx.SqlConn, source activity.Source, known *activity.Known,
	progress *kafkax.Progress) *activity.Loader {
	loader := &activity.Loader{
		Store: store,
		// The Bloom filter of known ids stops a random id before MySQL.
		Source:     activity.KnownSource{Source: source, Known: known},
		Grace:      time.Duration(c.Stock.GraceSeconds) * time.Second,
		MissingTTL: time.Duration(c.Stock.MissingTTLSeconds) * time.Second,
		Wait:       time.Duration(c.Stock.BackfillWaitMs) * time.Millisecond,
		Lease:      time.Duration(c.Stock.RebuildLeaseSeconds) * time.Second,
		Entries:    model.NewDrawEntryModel(db),
	}
	if progress != nil {
		loader.Pipeline = progress
	}
	return loader
}

// newFence returns degrade mode's fence (on with Degrade: mysql).
func newFence(c config.Config, store *stock.Store, inventory model.InventoryModel, loader *activity.Loader,
	known *activity.Known, progress *kafkax.Progress) *degrade.Fence {
	fence := &degrade.Fence{On: c.Degrade == "mysql", Conf: c.DegradeMode, Inventory: inventory, Store: store,
		Rebuild: loader, Known: known.MayExist}
	if fence.On {
		fence.Probe = redisx.NewProbe(c.StockRedis) // closed by Close
	}
	if progress != nil {
		fence.Pipeline = progress
	}
	return fence
}

// booksFence is the fence the books consult: fence in degrade mode (Degrade: mysql); nil
// without it, when the fence would route every call to Redis and read nothing.
func booksFence(fence *degrade.Fence) *degrade.Fence {
	if !fence.On {
		return nil
	}
	return fence
}

// newStore connects to the stock Redis and loads the scripts into it.
func newStore(c config.Config) (*redis.Redis, stock.Keys, *stock.Store, error) {
	rds, err := redis.NewRedis(c.StockRedis)
	if err != nil {
		return nil, stock.Keys{}, nil, err
	}
	keys := stock.Keys{Prefix: c.KeyPrefix}
	opts := []stock.Option{stock.WithDrawEntriesPerAddress(c.Draw.EntriesPerAddress)}
	if c.Relay.Active() && c.Relay.AckAfterKafka() {
		opts = append(opts, stock.WithEntries()) // for the Acker (New)
	}
	if c.OrderKey != "" {
		opts = append(opts, stock.WithOrderKey([]byte(c.OrderKey)))
	}
	store := stock.NewStore(rds, keys, opts...)
	ctx, cancel := context.WithTimeout(event.Untraced(context.Background()), 5*time.Second)
	defer cancel()
	if err := store.LoadScripts(ctx); err != nil {
		return nil, stock.Keys{}, nil, err
	}
	return rds, keys, store, nil
}

// seedKnown fills the Bloom filter of known activity ids from MySQL.
func seedKnown(known *activity.Known) {
	seedCtx, seedCancel := context.WithTimeout(event.Untraced(context.Background()), time.Minute)
	defer seedCancel()
	if n, err := known.Seed(seedCtx); err != nil {
		// Not fatal: an unseeded filter lets every lookup through to MySQL, as before.
		logx.Errorf(
			"seeding the activity bloom filter from MySQL (lookups read MySQL until it is seeded at the next start): %v",
			err,
		)
	} else {
		logx.Infof("activity bloom filter seeded with %d ids", n)
	}
}

// newRelay returns the outbox relay, nil when not configured (Relay.Brokers empty).
func newRelay(c config.Config, store *stock.Store) (*relay.Relay, error) {
	if !c.Relay.Active() {
		return nil, nil
	}
	if err := kafkax.CheckEventKey(c.Relay.EventKey, c.Mode == service.ProMode); err != nil {
		return nil, err
	}
	return relay.New(c.Relay, store, time.Duration(c.Stock.GraceSeconds)*time.Second)
}

// writerProgress returns the writer group's progress: reconciliation tells in-flight events
// from lost ones by it, and a rebuild waits on it. Without Kafka configured there is no
// pipeline (nil), and a rebuild does not wait (nothing can be in flight to MySQL).
func writerProgress(c config.Config) (*kafkax.Progress, error) {
	brokers := c.Reconcile.Brokers
	if len(brokers) == 0 && len(c.Relay.Brokers) == 0 {
		return nil, nil
	}
	if len(brokers) == 0 {
		brokers = c.Relay.Brokers
	}
	return kafkax.NewProgress(brokers, c.Relay.Topic, c.Reconcile.WriterGroup).WithAuth(c.Relay.Kafka)
}

// resolveGone: the relay sees an activity vanish from the active set (or its stream lose
// its group), a loss on its path. Resolve it like any miss (BUSY meanwhile).
func resolveGone(loader *activity.Loader) func(aid int64) {
	return func(aid int64) {
		_, err := loader.Stock(event.Untraced(context.Background()), aid)
		if err != nil && !errors.Is(err, stock.ErrNotWarm) {
			logx.Errorf("relay: activity %d left the active set: %v", aid, err)
		}
	}
}
