package apiserver_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"

	"github.com/seckill/seckill/internal/authtoken"
)

func TestAuthFailures(t *testing.T) {
	e := start(t)
	a := e.warm(nil)
	sign := func(secret string, claims jwt.MapClaims, ttl time.Duration) string {
		return signToken(t, secret, claims, ttl)
	}
	unsigned := unsignedToken(t)
	noExp := func(secret string, claims jwt.MapClaims) string { return noExpToken(t, secret, claims) }
	buyerRoute := struct{ method, path string }{http.MethodPost, "/v1/seckill/orders"}
	merchantRoute := struct{ method, path string }{
		http.MethodPost,
		fmt.Sprintf("/v1/admin/activities/%d/stock", a.ActivityID),
	}

	for _, tc := range []struct {
		name          string
		header        string // full Authorization header; "" sends none
		buyer, seller bool   // which routes it is tried on
	}{
		{"missing", "", true, true},
		{"not a jwt", "Bearer not.a.token", true, true},
		{"wrong scheme", "Basic " + buyerToken(t, 1), true, false},
		{"forged buyer (wrong secret)", "Bearer " + sign("some-other-secret-xxxxxxxx", jwt.MapClaims{"uid": 1},
			time.Hour), true, false},
		{"forged merchant (wrong secret)", "Bearer " + sign("some-other-secret-xxxxxxxx",
			jwt.MapClaims{"mid": merchantID}, time.Hour), false, true},
		{"alg none", "Bearer " + unsigned, true, true},
		{"expired buyer", "Bearer " + sign(buyerSecret, jwt.MapClaims{"uid": 1}, -time.Minute), true, false},
		{"expired merchant", "Bearer " + sign(merchantSecret, jwt.MapClaims{"mid": merchantID}, -time.Minute),
			false, true},
		{"buyer token without exp", "Bearer " + noExp(buyerSecret, jwt.MapClaims{"uid": 1}), true, false},
		{"merchant token without exp", "Bearer " + noExp(merchantSecret, jwt.MapClaims{"mid": merchantID}),
			false, true},
		{"buyer token, exp a string", "Bearer " + noExp(buyerSecret, jwt.MapClaims{"uid": 1, "exp": "never"}),
			true, false},
		{"buyer token on merchant route", "Bearer " + buyerToken(t, 1), false, true},
		{"merchant token on buyer route", "Bearer " + merchantToken(t, merchantID), true, false},
		{"buyer secret, merchant claim", "Bearer " + sign(buyerSecret, jwt.MapClaims{"mid": merchantID},
			time.Hour), true, true},
		{"merchant secret, buyer claim", "Bearer " + sign(merchantSecret, jwt.MapClaims{"uid": 1}, time.Hour),
			true, true},
		{"uid not an integer", "Bearer " + sign(buyerSecret, jwt.MapClaims{"uid": "abc"}, time.Hour), true, false},
		{"uid zero", "Bearer " + sign(buyerSecret, jwt.MapClaims{"uid": 0}, time.Hour), true, false},
		{"uid negative", "Bearer " + sign(buyerSecret, jwt.MapClaims{"uid": -5}, time.Hour), true, false},
		{"mid fractional", "Bearer " + sign(merchantSecret, jwt.MapClaims{"mid": 1.5}, time.Hour), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			try := func(method, path string, body any) {
				t.Helper()
				code, raw := e.doHeader(method, path, tc.header, body)
				var eb errBody
				if code != http.StatusUnauthorized || decode(raw, &eb) != nil || eb.Code != "UNAUTHORIZED" ||
					eb.Msg == "" {
					t.Errorf("%s %s: got %d %s, want 401 UNAUTHORIZED", method, path, code, raw)
				}
			}
			if tc.buyer {
				try(buyerRoute.method, buyerRoute.path, reserveBody(a.ActivityID, "auth-attempt", 1))
			}
			if tc.seller {
				try(merchantRoute.method, merchantRoute.path, map[string]any{"delta": -5})
			}
		})
	}
	if rem, _, _ := e.redisStock(a.ActivityID); rem != 10 || e.orderCount(a.ActivityID) != 0 {
		t.Fatalf("rejected requests changed stock: remaining %d, orders %d", rem, e.orderCount(a.ActivityID))
	}
}

func signToken(t *testing.T, secret string, claims jwt.MapClaims, ttl time.Duration) string {
	t.Helper()
	tok, err := authtoken.Sign(secret, claims, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// unsignedToken is a token with both claims and alg none.
func unsignedToken(t *testing.T) string {
	t.Helper()
	none := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"uid": 1, "mid": merchantID,
		"exp": time.Now().Add(time.Hour).Unix()})
	unsigned, err := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return unsigned
}

// noExpToken is signed with the secret, but without exp: such a token would never expire.
func noExpToken(t *testing.T, secret string, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
