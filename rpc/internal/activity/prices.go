package activity

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/zeromicro/go-zero/core/collection"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
)

// PriceSource reads an activity's unit price and start (model.ActivityModel).
type PriceSource interface {
	FindPrice(ctx context.Context, id int64) (price, start int64, err error)
}

// WarmPrices reads the price and start the warm-up copied into an activity's stock hash
// (stock.Store.Stock); an error (not warm, Redis down) sends the read to MySQL.
type WarmPrices interface {
	Stock(ctx context.Context, aid int64) (domain.Activity, error)
}

// Prices keeps the unit prices of started activities, read once per activity and process from
// the stock hash (the warm-up's copy) or, when the activity is not warm, from MySQL: a price is
// fixed once its activity starts (nothing changes it after; docs/DESIGN.md, "Prices and
// payments"), and an order, hence an amount, exists only after the start. A price read before
// the start is not kept.
type Prices struct {
	warm  WarmPrices
	src   PriceSource
	cache *collection.Cache
	now   func() time.Time
}

// pricesKept bounds the prices held: activities selling at the same time.
const pricesKept = 10_000

// NewPrices reads prices from warm, else from src.
func NewPrices(warm WarmPrices, src PriceSource) *Prices {
	c, err := collection.NewCache(time.Hour, collection.WithLimit(pricesKept), collection.WithName("prices"))
	if err != nil {
		panic(err) // only for a non-positive interval or slot count: not these constants
	}
	return &Prices{warm: warm, src: src, cache: c, now: time.Now}
}

// Price is activity aid's unit price; ACTIVITY_NOT_FOUND for an activity MySQL does not have.
func (p *Prices) Price(ctx context.Context, aid int64) (int64, error) {
	k := strconv.FormatInt(aid, 10)
	if v, ok := p.cache.Get(k); ok {
		return v.(int64), nil
	}
	a, err := p.warm.Stock(ctx, aid)
	price, start := a.Price, a.Start
	if err != nil { // not warm, or Redis down (degrade mode sells from MySQL): MySQL has it
		price, start, err = p.src.FindPrice(ctx, aid)
		if errors.Is(err, model.ErrNotFound) {
			return 0, xerr.ErrActivityNotFound
		}
		if err != nil {
			return 0, DBError(err)
		}
	}
	if p.now().Unix() >= start {
		p.cache.Set(k, price)
	}
	return price, nil
}

// Amount is quantity x activity aid's unit price.
func (p *Prices) Amount(ctx context.Context, aid, quantity int64) (int64, error) {
	price, err := p.Price(ctx, aid)
	if err != nil {
		return 0, err
	}
	return quantity * price, nil
}
