package book_test

import (
	"testing"

	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/book"
	"github.com/seckill/seckill/rpc/internal/degrade"
)

// TestRedisDownSwitchesEveryCall: with degrade mode on, each of the Router's calls that finds
// Redis unreachable switches its activity to the MySQL book and answers BUSY (ExpireDue included).
func TestRedisDownSwitchesEveryCall(t *testing.T) {
	db := testenv.MySQL(t)
	conf := testenv.RedisConf()
	conf.Host = "127.0.0.1:1" // nothing listens there: every Redis call fails
	store := stock.NewStore(redis.MustNewRedis(conf), stock.Keys{Prefix: testenv.RandomName("t") + ":"})
	inventory := model.NewInventoryModel(db.Conn)
	fence := &degrade.Fence{On: true, Conf: degrade.Conf{Concurrency: 4, LeaseMs: 50}, Inventory: inventory,
		Store: store}
	r := &book.Router{Fence: fence, Redis: book.Redis{Store: store}, MySQL: &book.MySQL{}}
	calls := map[string]func(aid int64) error{
		"reserve": func(aid int64) error {
			_, err := r.Reserve(ctx, aid, 1, 1, rid(1))
			return err
		},
		"confirm": func(aid int64) error { return r.Confirm(ctx, store.NewOrderNo(aid), 1) },
		"release": func(aid int64) error {
			return r.Release(ctx, store.NewOrderNo(aid), 1, domain.StateCancelled)
		},
		"expire_due": func(aid int64) error {
			_, err := r.ExpireDue(ctx, aid, 10)
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			res, err := db.DB.Exec("INSERT INTO activity (sku_id, name, total, start_time, end_time) " +
				"VALUES (7, 'kettle', 5, 0, 4000000000)")
			if err != nil {
				t.Fatal(err)
			}
			aid, _ := res.LastInsertId()
			if _, err := db.DB.Exec("INSERT INTO inventory (activity_id, available) VALUES (?, 5)", aid); err != nil {
				t.Fatal(err)
			}
			want(t, name+" with Redis down", call(aid), xerr.Busy)
			if mode, err := inventory.FindMode(ctx, aid); err != nil || mode != model.ModeMySQL {
				t.Fatalf("mode after %s with Redis down: %q %v, want mysql", name, mode, err)
			}
		})
	}
}

// TestRouterWithoutFence: without degrade mode the Router has no fence (svc passes none): it
// sells from the Redis book without asking one, and answers a Redis failure as it is (BUSY),
// switching nothing.
func TestRouterWithoutFence(t *testing.T) {
	conf := testenv.RedisConf()
	conf.Host = "127.0.0.1:1" // nothing listens there: every Redis call fails
	store := stock.NewStore(redis.MustNewRedis(conf), stock.Keys{Prefix: testenv.RandomName("t") + ":"})
	r := &book.Router{Redis: book.Redis{Store: store}, MySQL: &book.MySQL{}}
	_, err := r.Reserve(ctx, 1, 1, 1, rid(1))
	want(t, "reserve with Redis down and no fence", err, xerr.Busy)
	if !degrade.RedisDown(err) {
		t.Fatalf("reserve with Redis down and no fence: %v, want Redis's own failure", err)
	}
}
