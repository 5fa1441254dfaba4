package middleware_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"hash"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

var b64 = base64.RawURLEncoding.EncodeToString

func mac(h func() hash.Hash, signed string) []byte {
	m := hmac.New(h, []byte(buyerSecret))
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// FuzzTokenSegments: whatever a buyer token's header and signature segments, the buyer
// routes accept it only when its header names HS256 and its signature is the HS256 of the
// token's first two segments.
func FuzzTokenSegments(f *testing.F) {
	claims := b64([]byte(`{"exp":` + strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10) + `,"uid":7}`))
	for _, s := range []struct {
		header string
		h      func() hash.Hash
	}{
		{`{"alg":"HS256","typ":"JWT"}`, sha256.New},
		{`{"typ":"JWT","alg":"HS256","kid":"1"}`, sha256.New},
		{`{"alg":"HS512","typ":"JWT"}`, sha512.New},
		{`{"alg":"HS384","typ":"JWT"}`, sha512.New384},
		{`{"alg":"none","typ":"JWT"}`, nil},
	} {
		sig := []byte{}
		if s.h != nil {
			sig = mac(s.h, b64([]byte(s.header))+"."+claims)
		}
		f.Add([]byte(s.header), sig)
	}
	_, h := buyerRoute(f, 0)
	f.Fuzz(func(t *testing.T, header, sig []byte) {
		signed := b64(header) + "." + claims
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Bearer "+signed+"."+b64(sig))
		w := httptest.NewRecorder()
		h(w, r)
		if w.Code != http.StatusOK {
			return
		}
		var hd struct{ Alg string }
		if err := json.Unmarshal(header, &hd); err != nil || hd.Alg != "HS256" {
			t.Fatalf("accepted with the header %q", header)
		}
		if !hmac.Equal(sig, mac(sha256.New, signed)) {
			t.Fatalf("accepted with a signature that is not the HS256 of %q", signed)
		}
	})
}
