// Package auth reads the caller's identity that go-zero's jwt middleware left in the
// request context. The user always comes from the token, never from the body.
package auth

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/internal/xerr"
)

type ctxKey int

const (
	uidKey ctxKey = iota
	midKey
)

var errNoClaim = xerr.New(xerr.Unauthorized, "token lacks the claim this route needs")

// Claim returns the positive integer claim name of the verified token. go-zero puts
// non-standard claims into the context under their names, as json.Number.
func Claim(ctx context.Context, name string) (int64, bool) {
	return ClaimID(ctx.Value(name))
}

// ClaimID reads a claim's value as a positive integer id: a json.Number (go-zero's token
// parser decodes numbers so) or a string.
func ClaimID(v any) (int64, bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case string:
		s = v
	default:
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	return id, err == nil && id > 0
}

// ErrNoClaim is the answer to a verified token without the claim of its route.
var ErrNoClaim = errNoClaim

// WithUID stores a buyer id read from a verified token's claims (auth.ClaimID).
func WithUID(ctx context.Context, uid int64) context.Context {
	return context.WithValue(ctx, uidKey, uid)
}

// WithMerchant checks the merchant claim and stores it typed; Unauthorized when absent.
func WithMerchant(ctx context.Context) (context.Context, error) {
	mid, ok := Claim(ctx, authtoken.MerchantClaim)
	if !ok {
		return ctx, errNoClaim
	}
	return context.WithValue(ctx, midKey, mid), nil
}

// UID is the buyer of the request (set by the BuyerJWT middleware, reserve.Pipeline.Authenticated).
func UID(ctx context.Context) (int64, error) {
	if uid, ok := ctx.Value(uidKey).(int64); ok {
		return uid, nil
	}
	return 0, errNoClaim
}

// MID is the merchant of the request (set by the MerchantClaim middleware).
func MID(ctx context.Context) (int64, error) {
	if mid, ok := ctx.Value(midKey).(int64); ok {
		return mid, nil
	}
	return 0, errNoClaim
}
