package middleware

import "time"

// Cached reports whether raw is in a's cache of verified tokens.
func (a *TokenAuth) Cached(raw string) bool {
	_, ok := a.cache.get(raw)
	return ok
}

// SetCacheClock replaces the clock of a's cache.
func (a *TokenAuth) SetCacheClock(now func() time.Time) { a.cache.now = now }

// FastVerify is a's plain-token check (fastHS256) at jwt's clock: the id and ok.
func (a *TokenAuth) FastVerify(raw string) (int64, bool) {
	return a.fast.verify(raw, jwtNow())
}

// HS256Header is the header segment fastHS256 takes.
const HS256Header = hs256Header
