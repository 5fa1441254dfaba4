// Package gatekeys builds the Redis key names of the gateway's own state: its rate limits and
// its merchants' Idempotency-Key records (docs/DESIGN.md, "Redis keys"). Nothing else spells
// them; the inventory's keys are stock.Keys'. The package is outside api/internal so that the
// fault suite's ACL test (devkit/faults) can name them too.
package gatekeys

import "strconv"

// Keys builds the gateway's key names under Prefix (config KeyPrefix, the one stock.Keys has).
type Keys struct {
	Prefix string
}

// RateLimit is the per-user request counter of the gateway's limiter (go-zero
// PeriodLimit). It is not activity-scoped: the limit is per buyer across activities.
func (k Keys) RateLimit(uid int64) string {
	return k.Prefix + "sk:rl:" + strconv.FormatInt(uid, 10)
}

// RateLimitAddr is the gateway's per-client-address counter of one kind ("reserve": the
// reservations; "authfail": the 401 answers), go-zero PeriodLimit like RateLimit.
func (k Keys) RateLimitAddr(kind, addr string) string {
	return k.Prefix + "sk:rla:" + kind + ":" + addr
}

// RateLimitMerchant is the gateway's per-merchant counter of writes and heavy reads (go-zero
// PeriodLimit), shared by every gateway.
func (k Keys) RateLimitMerchant(mid int64) string {
	return k.Prefix + "sk:rlm:" + strconv.FormatInt(mid, 10)
}

// Idempotency is the gateway's record of one merchant's Idempotency-Key (a JSON value: pending
// with the request's fingerprint, then done with the first answer), kept 24 h.
func (k Keys) Idempotency(mid int64, key string) string {
	return k.Prefix + "sk:idem:" + strconv.FormatInt(mid, 10) + ":" + key
}
