package middleware

import (
	"time"

	"github.com/zeromicro/go-zero/core/collection"
	"github.com/zeromicro/go-zero/core/logx"
)

// tokenCache holds verified tokens in go-zero's collection.Cache (an LRU of at most limit
// entries, expired by its timing wheel), each with the time it was verified: an entry older
// than ttl is not returned, by the cache's clock (tests move it). The hand-written
// two-generation map it replaced was no faster under a sale's mix (parallel lookups, an insert
// in 64, 4,096 tokens): 149-257 ns/op against the library's 169-174 ns/op, one noisy run.
type tokenCache struct {
	c   *collection.Cache
	ttl time.Duration
	now func() time.Time
}

type cachedToken struct {
	v  *verifiedToken
	at time.Time // when it was verified
}

func newTokenCache(limit int, ttl time.Duration) *tokenCache {
	c, err := collection.NewCache(ttl, collection.WithLimit(limit), collection.WithName("verified-tokens"))
	logx.Must(err) // fails only for a timing wheel of no slots, which NewCache never builds
	return &tokenCache{c: c, ttl: ttl, now: time.Now}
}

func (c *tokenCache) get(key string) (*verifiedToken, bool) {
	v, ok := c.c.Get(key)
	if !ok {
		return nil, false
	}
	e, _ := v.(cachedToken)
	if e.v == nil || c.now().Sub(e.at) >= c.ttl {
		c.c.Del(key)
		return nil, false
	}
	return e.v, true
}

func (c *tokenCache) set(key string, v *verifiedToken) { c.c.Set(key, cachedToken{v: v, at: c.now()}) }

func (c *tokenCache) del(key string) { c.c.Del(key) }
