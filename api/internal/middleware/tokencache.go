package middleware

import (
	"sync"
	"time"
)

// tokenCache is a bounded map of verified tokens, two generations of at most limit/2 entries
// and no goroutine; an entry older than ttl is not returned.
type tokenCache struct {
	half int
	ttl  time.Duration
	now  func() time.Time

	mu        sync.Mutex
	cur, prev map[string]cachedToken
}

type cachedToken struct {
	v  *verifiedToken
	at int64 // unix ns of the Set
}

func newTokenCache(limit int, ttl time.Duration) *tokenCache {
	half := max(limit/2, 1) // limit >= 2 (NewTokenAuth)
	return &tokenCache{half: half, ttl: ttl, now: time.Now, cur: make(map[string]cachedToken, half)}
}

func (c *tokenCache) get(key string) (*verifiedToken, bool) {
	now := c.now().UnixNano()
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.cur[key]
	if !ok {
		if e, ok = c.prev[key]; !ok {
			return nil, false
		}
		delete(c.prev, key)
		c.put(key, e)
	}
	if now-e.at >= int64(c.ttl) {
		delete(c.cur, key)
		return nil, false
	}
	return e.v, true
}

func (c *tokenCache) set(key string, v *verifiedToken) {
	e := cachedToken{v: v, at: c.now().UnixNano()}
	c.mu.Lock()
	c.put(key, e)
	c.mu.Unlock()
}

func (c *tokenCache) del(key string) {
	c.mu.Lock()
	delete(c.cur, key)
	delete(c.prev, key)
	c.mu.Unlock()
}

// put adds to the current generation, first turning a full one into the previous.
func (c *tokenCache) put(key string, e cachedToken) {
	if _, ok := c.cur[key]; !ok && len(c.cur) >= c.half {
		c.prev, c.cur = c.cur, make(map[string]cachedToken, c.half)
	}
	c.cur[key] = e
}

func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.prev)
}
