package middleware

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/zeromicro/go-zero/core/limit"
	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/internal/xerr"
)

var errMerchantLimited = xerr.New(xerr.RateLimited, "too many changes or heavy reads by this merchant, slow down")

// MerchantLimit bounds each merchant's writes and heavy reads (a reconciliation reads every
// order) across every gateway: go-zero's PeriodLimit in Redis, keyed per merchant.
type MerchantLimit struct {
	Limiter *limit.PeriodLimit
	Period  int                    // seconds: the Retry-After of a refusal
	Key     func(mid int64) string // the limiter's Redis key (gatekeys.Keys.RateLimitMerchant)
	Failure FailurePolicy          // when the limiter's Redis fails
}

// counted: every write, and the reads that are not a cheap lookup (a reconciliation, an
// orders CSV export: each reads every order of the activity).
func counted(r *http.Request) bool {
	return r.Method != http.MethodGet || strings.HasSuffix(r.URL.Path, "/reconcile") ||
		strings.HasSuffix(r.URL.Path, "/orders") && reply.WantsCSV(r)
}

// allow takes one unit of mid's quota for r; the error is the request's answer.
func (l *MerchantLimit) allow(ctx context.Context, w http.ResponseWriter, r *http.Request, mid int64) error {
	if l == nil || l.Limiter == nil || !counted(r) {
		return nil
	}
	state, err := l.Limiter.TakeCtx(ctx, l.Key(mid))
	switch {
	case err != nil:
		return l.Failure.Failed(ctx, "merchant", err)
	case state == limit.OverQuota:
		w.Header().Set("Retry-After", strconv.Itoa(max(l.Period, 1)))
		return errMerchantLimited
	}
	return nil
}

// MerchantClaimMiddleware runs after the MerchantAuth signature check: it requires the `mid`
// claim and applies the merchant's limit (nil: none).
type MerchantClaimMiddleware struct {
	limit *MerchantLimit
}

func NewMerchantClaimMiddleware(limit *MerchantLimit) *MerchantClaimMiddleware {
	return &MerchantClaimMiddleware{limit: limit}
}

func (m *MerchantClaimMiddleware) Handle(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := auth.RequireExpiry(r); err != nil {
			reply.LogUnauthorized(r, err.Error())
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		ctx, err := auth.WithMerchant(r.Context())
		if err != nil {
			reply.LogUnauthorized(r, err.Error())
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		mid, _ := auth.MID(ctx)
		if err := m.limit.allow(ctx, w, r, mid); err != nil {
			httpx.ErrorCtx(ctx, w, err)
			return
		}
		next(w, r.WithContext(ctx))
	}
}
