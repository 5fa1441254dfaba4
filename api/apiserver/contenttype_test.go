package apiserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBodyWithoutJSONContentType: a JSON body sent without "Content-Type:
// application/json" (none at all, or curl -d's form type) is read as JSON; a body that is
// not JSON is 415 UNSUPPORTED_MEDIA_TYPE with a message naming the header, and changes
// nothing.
func TestBodyWithoutJSONContentType(t *testing.T) {
	e := start(t)
	a := e.warm(map[string]any{"stock": 10, "per_user_limit": 5})
	buyer := buyerToken(t, 501)
	send := func(contentType, body string, chunked bool) (int, []byte) {
		t.Helper()
		var rd io.Reader = strings.NewReader(body)
		if chunked { // no Content-Length: net/http sends it chunked
			rd = io.MultiReader(strings.NewReader(body))
		}
		req, err := http.NewRequest(http.MethodPost, e.base+"/v1/seckill/orders", rd)
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Authorization", "Bearer "+buyer)
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}

	for i, tc := range []struct {
		name, contentType string
		chunked           bool
	}{
		{"no content type", "", false},
		{"no content type, chunked", "", true},
		{"curl -d form type", "application/x-www-form-urlencoded", false},
		{"text/plain", "text/plain", false},
	} {
		body := fmt.Sprintf(`{"activity_id":%d,"request_id":"no-ct-%d-abc"}`, a.ActivityID, i)
		code, raw := send(tc.contentType, body, tc.chunked)
		var r reserved
		if code != http.StatusOK || json.Unmarshal(raw, &r) != nil || r.OrderNo == "" || r.Quantity != 1 {
			t.Errorf("%s: got %d %s, want 200 with an order", tc.name, code, raw)
		}
	}
	rem, _, _ := e.redisStock(a.ActivityID)
	if rem != 6 {
		t.Fatalf("remaining %d after 4 reservations of 10, want 6", rem)
	}

	for _, tc := range []struct{ name, contentType, body string }{
		{"form body", "application/x-www-form-urlencoded", "activity_id=1&request_id=abcdefgh"},
		{"no content type, not json", "", "activity_id: 1"},
		{"text, truncated json", "text/plain", `{"activity_id":1,`},
	} {
		code, raw := send(tc.contentType, tc.body, false)
		var eb errBody
		_ = json.Unmarshal(raw, &eb)
		if code != http.StatusUnsupportedMediaType || eb.Code != "UNSUPPORTED_MEDIA_TYPE" ||
			!strings.Contains(eb.Msg, "Content-Type: application/json") {
			t.Errorf("%s: got %d %s, want 415 UNSUPPORTED_MEDIA_TYPE naming the header", tc.name, code, raw)
		}
	}
	// With the header, a malformed body stays 400 INVALID_ARGUMENT.
	code, raw := e.do(http.MethodPost, "/v1/seckill/orders", buyer, bytes.NewBufferString(`{"activity_id":1,`).Bytes())
	if code != http.StatusBadRequest {
		t.Errorf("malformed json with the header: got %d %s, want 400", code, raw)
	}
	if rem2, _, _ := e.redisStock(a.ActivityID); rem2 != rem || e.orderCount(a.ActivityID) != 4 {
		t.Fatalf("a refused body changed stock: remaining %d -> %d, orders %d", rem, rem2, e.orderCount(a.ActivityID))
	}
}
