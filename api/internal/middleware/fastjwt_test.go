package middleware_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"
	"github.com/zeromicro/go-zero/rest/token"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/internal/authtoken"
)

// parserAccepts is TokenAuth's answer by go-zero's token parser (the path before
// fastHS256): the token verifies with the secret, has a numeric exp and a positive uid.
func parserAccepts(t testing.TB, raw string) (int64, bool) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer "+raw)
	tok, err := token.NewTokenParser().ParseToken(r, buyerSecret, "")
	if err != nil || !tok.Valid {
		return 0, false
	}
	claims, ok := tok.Claims.(jwt.MapClaims)
	if !ok || auth.Expiry(claims) != nil {
		return 0, false
	}
	return auth.ClaimID(claims[authtoken.BuyerClaim])
}

// signRaw is a token of the header segment fastHS256 takes, with claims as given (any
// bytes) and a valid HS256 signature over both.
func signRaw(secret string, claims []byte) string {
	s := middleware.HS256Header + "." + base64.RawURLEncoding.EncodeToString(claims)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(s))
	return s + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkFast fails when fastHS256 accepts raw and the parser does not, or with another id.
func checkFast(t testing.TB, a *middleware.TokenAuth, raw string) bool {
	t.Helper()
	id, ok := a.FastVerify(raw)
	if !ok {
		return false
	}
	want, wantOK := parserAccepts(t, raw)
	if !wantOK || id != want {
		t.Fatalf("fastHS256 accepts %q as uid %d; the parser: uid %d, accepted %v", raw, id, want, wantOK)
	}
	return true
}

// TestFastHS256AgreesWithParser: fastHS256 accepts the tokens authtoken mints (what the
// load of a sale sends) and, of the others, only what go-zero's parser accepts, with the
// same uid.
func TestFastHS256AgreesWithParser(t *testing.T) {
	a := middleware.NewTokenAuth(buyerSecret, authtoken.BuyerClaim, 0)
	now := time.Now().Unix()
	minted := mint(authtoken.Buyer(buyerSecret, 42, time.Hour))
	if id, ok := a.FastVerify(minted); !ok || id != 42 {
		t.Fatalf("a minted buyer token: uid %d, accepted %v; want 42 by fastHS256", id, ok)
	}
	checkFast(t, a, minted)
	at := func(v int64) string { return itoa(v) }
	cases := map[string]struct {
		raw    string
		accept bool // by fastHS256
	}{
		"minted": {minted, true},
		"plain":  {signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"uid":7}`)), true},
		"extra claims": {
			signRaw(
				buyerSecret,
				[]byte(`{"a":1,"exp":`+at(now+60)+`,"iat":`+at(now)+`,"nbf":`+at(now)+`,"uid":7,"z_9":0}`),
			),
			true,
		},
		"expired": {mint(authtoken.Buyer(buyerSecret, 44, -time.Minute)), false},
		"exp now": {signRaw(buyerSecret, []byte(`{"exp":`+at(now)+`,"uid":7}`)), false},
		"issued later": {
			signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"iat":`+at(now+30)+`,"uid":7}`)),
			false,
		},
		"not before later": {
			signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"nbf":`+at(now+30)+`,"uid":7}`)),
			false,
		},
		"no exp":     {signRaw(buyerSecret, []byte(`{"uid":7}`)), false},
		"no uid":     {signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`}`)), false},
		"uid zero":   {signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"uid":0}`)), false},
		"uid string": {signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"uid":"7"}`)), false},
		"uid twice":  {signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"uid":7,"uid":8}`)), false},
		"exp twice":  {signRaw(buyerSecret, []byte(`{"exp":1,"exp":`+at(now+60)+`,"uid":7}`)), false},
		"nbf twice": {
			signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"nbf":`+at(now+30)+`,"nbf":1,"uid":7}`)),
			false,
		},
		"uid leading zero": {signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"uid":07}`)), false},
		"uid fraction":     {signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"uid":7.0}`)), false},
		"exp 16 digits":    {signRaw(buyerSecret, []byte(`{"exp":1000000000000000,"uid":7}`)), false},
		"whitespace":       {signRaw(buyerSecret, []byte(`{"exp": `+at(now+60)+`,"uid":7}`)), false},
		"trailing bytes":   {signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"uid":7}x`)), false},
		"escaped key":      {signRaw(buyerSecret, []byte(`{"exp":`+at(now+60)+`,"\u0075id":7}`)), false},
		"wrong secret": {
			signRaw("another-secret-0123456789abcdef0123456789", []byte(`{"exp":`+at(now+60)+`,"uid":7}`)),
			false,
		},
		"HS512": {
			sign(t, jwt.SigningMethodHS512, buyerSecret, jwt.MapClaims{"uid": 43, "exp": now + 3600}),
			false,
		},
		"merchant token": {mint(authtoken.Merchant(buyerSecret, 7, time.Hour)), false},
		"tampered signature": {
			minted[:len(minted)-1] + map[bool]string{true: "A", false: "B"}[minted[len(minted)-1] != 'A'],
			false,
		},
		"four segments": {minted + ".x", false},
		"garbage":       {"a.b.c", false},
	}
	for name, c := range cases {
		if got := checkFast(t, a, c.raw); got != c.accept {
			t.Errorf("%s: fastHS256 accepted = %v, want %v", name, got, c.accept)
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// FuzzFastHS256: whatever the claims bytes of a correctly signed token, fastHS256 accepts
// only what go-zero's parser accepts, with the same uid.
func FuzzFastHS256(f *testing.F) {
	now := time.Now().Unix()
	for _, s := range []string{
		`{"exp":` + itoa(now+60) + `,"uid":7}`,
		`{"exp":` + itoa(now+60) + `,"iat":` + itoa(now) + `,"uid":7}`,
		`{"exp":` + itoa(now+60) + `,"nbf":` + itoa(now+1) + `,"uid":7}`,
		`{"exp":` + itoa(now+60) + `,"uid":7,"uid":8}`,
		`{"exp":` + itoa(now+60) + `,"uid":"7"}`,
		`{"exp":999999999999999,"uid":1}`,
		`{"exp":` + itoa(now+60) + `,"uid":7}  `,
	} {
		f.Add([]byte(s))
	}
	a := middleware.NewTokenAuth(buyerSecret, authtoken.BuyerClaim, 0)
	f.Fuzz(func(t *testing.T, claims []byte) {
		checkFast(t, a, signRaw(buyerSecret, claims))
	})
}
