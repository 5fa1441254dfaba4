package edge

import (
	"context"
	"strconv"
	"time"

	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/syncx"

	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/internal/redisx"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

const (
	// windowFetchTimeout bounds the background read of an activity's window.
	windowFetchTimeout = 2 * time.Second
	// subscribeWait bounds how long Subscribe waits for the first subscription.
	subscribeWait = 3 * time.Second
)

// A Gate is the reservation route's marks: it checks a decoded reservation (Check) and
// learns from the inventory service's answer to it (Observe).
type Gate struct {
	marks   *Marks   // nil: the edge answers nothing
	holders *holders // nil (not connected): a mark answers without asking the buyers hash
	inv     inventoryclient.Inventory
	windows syncx.SingleFlight

	sub     red.UniversalClient
	stop    context.CancelFunc
	stopped <-chan struct{}
}

// NewGate returns a gate answering from marks (nil: Edge off) and reading windows from inv.
func NewGate(marks *Marks, inv inventoryclient.Inventory) *Gate {
	return &Gate{marks: marks, inv: inv, windows: syncx.NewSingleFlight()}
}

// Connect opens c's Redis for the gate until Close: it drops marks on the stock-back
// messages of keys' channel, waiting at most subscribeWait for the first subscription, and
// asks the buyers hash before a mark answers (a replay is never answered from a mark).
// Without marks it does nothing.
func (g *Gate) Connect(c redis.RedisConf, keys stock.Keys) {
	if g.marks == nil {
		return
	}
	g.sub = redisx.NewClient(c)
	g.holders = newHolders(g.sub, keys, g.marks.c.ReplayCheck)
	ctx, cancel := context.WithCancel(context.Background())
	g.stop = cancel
	wait, waited := context.WithTimeout(ctx, subscribeWait)
	defer waited()
	g.stopped = Subscribe(ctx, g.sub, keys.StockBack(), g.marks, wait.Done())
}

// Check validates buyer uid's reservation req and asks the marks: err is the answer when
// the request ends here (bad input, or the marks know); gen goes to Observe.
func (g *Gate) Check(ctx context.Context, uid int64, req *types.ReserveReq) (gen uint64, err error) {
	if err = validate.Reserve(req); err != nil {
		return 0, err
	}
	gen = g.marks.Gen()
	if err = g.answer(ctx, uid, req); err != nil {
		return 0, err
	}
	return gen, nil
}

// answer is the marks' answer to uid's reservation req, nil when none holds or when the
// buyer may hold an order for req's request id: a replay is the service's to answer, with
// the order as it is now (docs/DESIGN.md "The edge never overrides a replay").
func (g *Gate) answer(ctx context.Context, uid int64, req *types.ReserveReq) error {
	err := g.marks.Check(req.ActivityId)
	if err == nil || g.holders == nil || !g.holders.mayHold(ctx, req.ActivityId, uid, req.RequestId) {
		return err
	}
	return nil
}

// Observe learns from answer, the error a reservation of aid checked at gen was answered
// with (nil: it succeeded): a sold-out mark, or the activity's window.
func (g *Gate) Observe(aid int64, gen uint64, answer *xerr.Error) {
	if answer == nil {
		return
	}
	switch answer.Code {
	case xerr.SoldOut:
		if answer != xerr.ErrDrawLost { // a draw's verdict on one entry says nothing of stock now
			g.marks.SoldOut(aid, gen)
		}
	case xerr.NotStarted, xerr.Ended:
		g.learn(aid)
	}
}

// StockBack drops aid's sold-out mark: this gateway returned stock to it.
func (g *Gate) StockBack(aid int64) { g.marks.StockBack(aid) }

// learn reads aid's window from the inventory service in the background (one read per
// activity at a time), for the NOT_STARTED / ENDED answers.
func (g *Gate) learn(aid int64) {
	if g.marks == nil || g.marks.HasWindow(aid) {
		return
	}
	go func() {
		_, _ = g.windows.Do(strconv.FormatInt(aid, 10), func() (any, error) {
			wgen := g.marks.WindowGen()
			ctx, cancel := context.WithTimeout(context.Background(), windowFetchTimeout)
			defer cancel()
			res, err := g.inv.GetStock(ctx, &inventoryclient.GetStockReq{ActivityId: aid})
			if err != nil {
				logx.Infof("edge: window of activity %d: %v", aid, err)
				return nil, err
			}
			if a := res.GetActivity(); a != nil && a.GetEndTime() > a.GetStartTime() {
				g.marks.Window(aid, a.GetStartTime(), a.GetEndTime(), wgen)
			}
			return nil, nil
		})
	}()
}

// Close stops the stock-back subscription.
func (g *Gate) Close() {
	if g.stop != nil {
		g.stop()
		<-g.stopped
		_ = g.sub.Close()
	}
}
