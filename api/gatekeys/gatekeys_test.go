package gatekeys_test

import (
	"testing"

	"github.com/seckill/seckill/api/gatekeys"
)

// The names stay those every gateway of a deployment shares, and deploy/'s Redis ACL grants
// (the sk:rl*, sk:idem:* patterns): a gateway of an earlier version counts on the same keys.
func TestKeepTheirNames(t *testing.T) {
	k := gatekeys.Keys{Prefix: "p:"}
	for got, want := range map[string]string{
		k.RateLimit(7):                   "p:sk:rl:7",
		k.RateLimitAddr("reserve", "ip"): "p:sk:rla:reserve:ip",
		k.RateLimitMerchant(8):           "p:sk:rlm:8",
		k.Idempotency(8, "key"):          "p:sk:idem:8:key",
	} {
		if got != want {
			t.Errorf("key %q, want %q", got, want)
		}
	}
}
