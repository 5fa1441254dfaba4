package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"github.com/zeromicro/go-zero/rest/handler"
	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/reserve"
	"github.com/seckill/seckill/internal/authtoken"
)

const (
	buyerSecret    = "test-buyer-9f3c1a7e5b2d4c8f0a6e1b3d5c7f9a2e"
	merchantSecret = "test-merchant-4e8b2f6a0c1d3e5f7a9b8c6d4e2f0a1b"
)

// buyerRoute is a buyer route behind BuyerJWT (the pipeline's Authenticated with a's
// Verify): it answers 200 with the uid.
func buyerRoute(t testing.TB, limit int) (*middleware.TokenAuth, http.HandlerFunc) {
	t.Helper()
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	a := middleware.NewTokenAuth(buyerSecret, authtoken.BuyerClaim, limit)
	return a, reserve.New(reserve.Stages{Authenticate: a.Verify}, reserve.Front{}).Authenticated(uidHandler)
}

func uidHandler(w http.ResponseWriter, r *http.Request) {
	uid, err := auth.UID(r.Context())
	if err != nil {
		httpx.ErrorCtx(r.Context(), w, err)
		return
	}
	_, _ = w.Write([]byte(strconv.FormatInt(uid, 10)))
}

// goZeroRoute is the same route on go-zero's jwt middleware (rest.WithJwt), then the
// claim checks on the claims it put in the context.
func goZeroRoute() http.Handler {
	return handler.Authorize(buyerSecret, handler.WithUnauthorizedCallback(reply.Unauthorized))(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := auth.RequireExpiry(r); err != nil {
				middleware.Refuse(w, r, err)
				return
			}
			uid, ok := auth.Claim(r.Context(), authtoken.BuyerClaim)
			if !ok {
				middleware.Refuse(w, r, auth.ErrNoClaim)
				return
			}
			uidHandler(w, r.WithContext(auth.WithUID(r.Context(), uid)))
		}))
}

func get(h http.Handler, tok string) (int, string) {
	r := httptest.NewRequest(http.MethodGet, "/v1/seckill/orders/x", nil)
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func sign(t *testing.T, method jwt.SigningMethod, secret string, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mint(tok string, err error) string {
	if err != nil {
		panic(err)
	}
	return tok
}

// parsed is a buyer token that fastHS256 leaves to go-zero's parser (a string claim): what
// the cache holds.
func parsed(t *testing.T, uid int64, ttl time.Duration) string {
	t.Helper()
	now := time.Now()
	return sign(t, jwt.SigningMethodHS256, buyerSecret,
		jwt.MapClaims{"uid": uid, "iat": now.Unix(), "exp": now.Add(ttl).Unix(), "jti": "parsed"})
}

// TestTokenAuthAgreesWithGoZero: for every kind of token, the first answer and the
// answer from the cache are the answers of go-zero's jwt middleware plus the claim checks
// (the route as it was), and only the accepted tokens fastHS256 does not accept are cached.
func TestTokenAuthAgreesWithGoZero(t *testing.T) {
	a, route := buyerRoute(t, 0)
	old := goZeroRoute()
	now := time.Now().Unix()
	valid := mint(authtoken.Buyer(buyerSecret, 42, time.Hour))
	tampered := valid[:len(valid)-2] + map[bool]string{true: "AA", false: "BB"}[valid[len(valid)-2:] != "AA"]
	cases := map[string]struct {
		tok    string
		accept bool
	}{
		"valid": {valid, true},
		"HS512 with the secret": { // HS256 only
			sign(t, jwt.SigningMethodHS512, buyerSecret, jwt.MapClaims{"uid": 43, "exp": now + 3600}),
			false,
		},
		"a string claim": {
			sign(t, jwt.SigningMethodHS256, buyerSecret, jwt.MapClaims{"uid": 43, "exp": now + 3600, "jti": "x"}),
			true,
		},
		"expired": {mint(authtoken.Buyer(buyerSecret, 44, -time.Minute)), false},
		"wrong secret": {
			mint(authtoken.Buyer("another-secret-0123456789abcdef0123456789", 45, time.Hour)),
			false,
		},
		"merchant token":            {mint(authtoken.Merchant(merchantSecret, 7, time.Hour)), false},
		"merchant claim, buyer key": {mint(authtoken.Merchant(buyerSecret, 7, time.Hour)), false},
		"no exp":                    {sign(t, jwt.SigningMethodHS256, buyerSecret, jwt.MapClaims{"uid": 46}), false},
		"string exp": {
			sign(t, jwt.SigningMethodHS256, buyerSecret, jwt.MapClaims{"uid": 47, "exp": "2999999999"}),
			false,
		},
		"not before in an hour": {
			sign(
				t,
				jwt.SigningMethodHS256,
				buyerSecret,
				jwt.MapClaims{"uid": 48, "exp": now + 7200, "nbf": now + 3600},
			),
			false,
		},
		"uid zero": {
			sign(t, jwt.SigningMethodHS256, buyerSecret, jwt.MapClaims{"uid": 0, "exp": now + 3600}),
			false,
		},
		"alg none": {
			mint(
				jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"uid": 49, "exp": now + 3600}).
					SignedString(jwt.UnsafeAllowNoneSignatureType),
			),
			false,
		},
		"tampered signature": {tampered, false},
		"garbage":            {"a.b.c", false},
		"no token":           {"", false},
	}
	for name, c := range cases {
		wantCode, wantBody := get(old, c.tok)
		if (wantCode == http.StatusOK) != c.accept {
			t.Fatalf(
				"%s: go-zero's route answered %d %s; the case expects accept=%v",
				name,
				wantCode,
				wantBody,
				c.accept,
			)
		}
		for round := range 2 {
			code, body := get(route, c.tok)
			if code != wantCode || body != wantBody {
				t.Errorf("%s, round %d: %d %s; go-zero's route: %d %s", name, round, code, body, wantCode, wantBody)
			}
		}
		_, fast := a.FastVerify(c.tok)
		if want := c.accept && !fast; c.tok != "" && a.Cached(c.tok) != want {
			t.Errorf("%s: cached = %v, want %v (accepted %v, by fastHS256 %v)", name, !want, want, c.accept, fast)
		}
	}
}

// TestTokenAuthCachedTokenExpires: a cached token is refused once its exp passed (the
// claims are checked at every use) and leaves the cache; a plain token (fastHS256, never
// cached) is refused once its exp passed too.
func TestTokenAuthCachedTokenExpires(t *testing.T) {
	a, route := buyerRoute(t, 0)
	tok := parsed(t, 42, time.Minute)
	plain := mint(authtoken.Buyer(buyerSecret, 43, time.Minute))
	if code, body := get(route, tok); code != http.StatusOK || body != "42" || !a.Cached(tok) {
		t.Fatalf("fresh token: %d %s, cached %v", code, body, a.Cached(tok))
	}
	if code, body := get(route, plain); code != http.StatusOK || body != "43" || a.Cached(plain) {
		t.Fatalf("fresh plain token: %d %s, cached %v", code, body, a.Cached(plain))
	}
	setTime(t, time.Now().Add(2*time.Minute))
	if code, body := get(route, tok); code != http.StatusUnauthorized {
		t.Fatalf("expired cached token: %d %s, want 401", code, body)
	}
	if a.Cached(tok) {
		t.Fatal("an expired token stayed in the cache")
	}
	if code, body := get(route, plain); code != http.StatusUnauthorized {
		t.Fatalf("expired plain token: %d %s, want 401", code, body)
	}
}

// setTime moves jwt's clock (jwt.TimeFunc: what the parser and MapClaims.Valid read).
func setTime(t *testing.T, at time.Time) {
	old := jwt.TimeFunc
	jwt.TimeFunc = func() time.Time { return at }
	t.Cleanup(func() { jwt.TimeFunc = old })
}

// TestTokenAuthCacheBounded: the cache never holds more than its limit, keeps the most
// recent tokens, and a token dropped from it is still accepted (verified again).
func TestTokenAuthCacheBounded(t *testing.T) {
	const limit = 4
	a, route := buyerRoute(t, limit)
	var toks []string
	for i := range 25 {
		tok := parsed(t, int64(100+i), time.Hour)
		toks = append(toks, tok)
		if code, _ := get(route, tok); code != http.StatusOK {
			t.Fatalf("token %d: %d", i, code)
		}
	}
	// Exactly the most recent limit tokens are held (oldest first: a lookup of an evicted
	// token adds nothing).
	for i, tok := range toks {
		if want := i >= len(toks)-limit; a.Cached(tok) != want {
			t.Fatalf("token %d of %d cached %v with a limit of %d", i+1, len(toks), !want, limit)
		}
	}
	if code, body := get(route, toks[0]); code != http.StatusOK || body != "100" {
		t.Fatalf("evicted token: %d %s, want 200 100", code, body)
	}
}

// TestTokenAuthCacheTTL: a cached token is verified again after TokenCacheTTL (a token
// still valid is then accepted and cached again).
func TestTokenAuthCacheTTL(t *testing.T) {
	a, route := buyerRoute(t, 0)
	tok := parsed(t, 42, time.Hour)
	if code, _ := get(route, tok); code != http.StatusOK || !a.Cached(tok) {
		t.Fatalf("fresh token: %d, cached %v", code, a.Cached(tok))
	}
	later := time.Now().Add(middleware.TokenCacheTTL)
	a.SetCacheClock(func() time.Time { return later })
	if a.Cached(tok) {
		t.Fatal("a token cached TokenCacheTTL ago is still returned")
	}
}

// TestTokenAuthConcurrent: buyers retrying with their tokens from many goroutines each get
// their own uid (run with -race), plain tokens (fastHS256) and cached ones.
func TestTokenAuthConcurrent(t *testing.T) {
	_, route := buyerRoute(t, 8)
	toks := make([]string, 32) // more parsed tokens than the cache holds: hits, misses, evictions
	for i := range toks {
		if i%2 == 0 {
			toks[i] = mint(authtoken.Buyer(buyerSecret, int64(i+1), time.Hour))
		} else {
			toks[i] = parsed(t, int64(i+1), time.Hour)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := (g*7 + i) % len(toks)
				if code, body := get(route, toks[k]); code != http.StatusOK || body != strconv.Itoa(k+1) {
					errs <- strconv.Itoa(code) + " " + body
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
