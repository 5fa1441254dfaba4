package activity_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
)

// priceRows is a price source counting its reads.
type priceRows struct {
	price, start int64
	err          error
	reads        int
}

func (p *priceRows) FindPrice(context.Context, int64) (int64, int64, error) {
	p.reads++
	return p.price, p.start, p.err
}

// warmPrices is the stock hash's copy, or its failure.
type warmPrices struct{ priceRows }

func (w *warmPrices) Stock(ctx context.Context, aid int64) (domain.Activity, error) {
	price, start, err := w.FindPrice(ctx, aid)
	return domain.Activity{ActivityID: aid, Price: price, Start: start}, err
}

// A started activity's price is read once (the stock hash first, MySQL when Redis is down or the
// activity cold) and kept; one not started is read each time; one MySQL lacks is not found.
func TestPrices(t *testing.T) {
	ctx := context.Background()
	now := time.Now().Unix()
	for _, tc := range []struct {
		name             string
		warm             error
		start            int64
		wantWarm, wantDB int
	}{
		{"warm, started", nil, now - 1, 1, 0},
		{"cold, started", stock.ErrNotWarm, now - 1, 1, 1},
		{"redis down (degrade mode), started", xerr.Unavailable(errors.New("redis down")), now - 1, 1, 1},
		{"warm, not started", nil, now + 3600, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &warmPrices{priceRows{price: 250, start: tc.start, err: tc.warm}}
			db := &priceRows{price: 250, start: tc.start}
			p := activity.NewPrices(w, db)
			for range 3 {
				if a, err := p.Amount(ctx, 1, 4); err != nil || a != 1000 {
					t.Fatalf("amount %d, %v; want 1000", a, err)
				}
			}
			if w.reads != tc.wantWarm || db.reads != tc.wantDB {
				t.Fatalf("reads: stock hash %d, MySQL %d; want %d, %d", w.reads, db.reads, tc.wantWarm, tc.wantDB)
			}
		})
	}
	p := activity.NewPrices(&warmPrices{priceRows{err: stock.ErrNotWarm}}, &priceRows{err: model.ErrNotFound})
	if _, err := p.Price(ctx, 9); !errors.Is(err, xerr.ErrActivityNotFound) {
		t.Fatalf("an activity MySQL lacks: %v", err)
	}
}
