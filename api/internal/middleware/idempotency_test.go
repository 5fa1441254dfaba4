package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/authtoken"
)

func TestFingerprintIsTheJSONValue(t *testing.T) {
	a := middleware.Fingerprint(http.MethodPost, "/v1/admin/activities", []byte(`{"a":1,"b":[1,2],"c":{"x":"y","w":2}}`))
	same := []string{"{ \"c\": {\"w\":2, \"x\":\"y\"},\n \"b\":[1, 2], \"a\":1 }\n"}
	other := []string{`{"a":1.0,"b":[1,2],"c":{"x":"y","w":2}}`, `{"a":1,"b":[2,1],"c":{"x":"y","w":2}}`,
		`{"a":1,"b":[1,2],"c":{"x":"y","w":2}} {}`}
	for _, b := range same {
		if got := middleware.Fingerprint(http.MethodPost, "/v1/admin/activities", []byte(b)); got != a {
			t.Errorf("%q: another fingerprint", b)
		}
	}
	for _, b := range other {
		if got := middleware.Fingerprint(http.MethodPost, "/v1/admin/activities", []byte(b)); got == a {
			t.Errorf("%q: the same fingerprint", b)
		}
	}
	if middleware.Fingerprint(http.MethodPost, "/v1/admin/activities/1/stock", []byte(`{}`)) ==
		middleware.Fingerprint(http.MethodPost, "/v1/admin/activities/2/stock", []byte(`{}`)) {
		t.Error("another path, the same fingerprint")
	}
}

// A 5xx is not kept (the retry runs again); a repeat while the first runs is BUSY.
func TestIdempotencyKeepsNo5xx(t *testing.T) {
	httpx.SetErrorHandlerCtx(reply.ErrorHandler) // as the gateway does (apiserver)
	rds, keys := testenv.Redis(t)
	m := middleware.NewIdempotencyMiddleware(rds, gatekeys.Keys{Prefix: keys.Prefix}.Idempotency)
	status, runs := http.StatusServiceUnavailable, 0
	var inner func()
	h := m.Handle(func(w http.ResponseWriter, _ *http.Request) {
		runs++
		if inner != nil {
			inner()
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"n":1}`))
	})
	send := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/v1/admin/activities", strings.NewReader(`{"a":1}`))
		r.Header.Set("Idempotency-Key", "unit-key-1")
		//nolint:staticcheck // go-zero's jwt puts claims in the context under their names
		ctx, err := auth.WithMerchant(context.WithValue(r.Context(), authtoken.MerchantClaim, "7"))
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h(w, r.WithContext(ctx))
		return w
	}
	if w := send(); w.Code != http.StatusServiceUnavailable || runs != 1 {
		t.Fatalf("first: %d, runs %d", w.Code, runs)
	}
	status = http.StatusOK
	inner = func() { // a repeat while this one runs
		inner = nil
		if w := send(); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
			t.Errorf("repeat in flight: %d %v", w.Code, w.Header())
		}
	}
	if w := send(); w.Code != http.StatusOK || runs != 2 {
		t.Fatalf("retry after the 5xx: %d, runs %d", w.Code, runs)
	}
	if w := send(); w.Code != http.StatusOK || w.Body.String() != `{"n":1}` || runs != 2 {
		t.Fatalf("repeat: %d %s, runs %d", w.Code, w.Body, runs)
	}
}
