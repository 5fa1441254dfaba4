package middleware

import "time"

// Cached reports whether raw is in a's cache of verified tokens.
func (a *TokenAuth) Cached(raw string) bool {
	_, ok := a.cache.get(raw)
	return ok
}

// CacheLen is how many tokens a's cache holds.
func (a *TokenAuth) CacheLen() int { return a.cache.len() }

// SetCacheClock replaces the clock of a's cache.
func (a *TokenAuth) SetCacheClock(now func() time.Time) { a.cache.now = now }
