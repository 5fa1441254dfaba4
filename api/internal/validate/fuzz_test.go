package validate_test

import (
	"bytes"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
)

// parse decodes body as the gateway does (go-zero httpx.Parse of a JSON POST).
func parse(t *testing.T, body []byte, v any) error {
	r, err := http.NewRequest(http.MethodPost, "/v1/seckill/orders", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.ContentLength = int64(len(body))
	return httpx.Parse(r, v)
}

// invalid requires err to be an INVALID_ARGUMENT *xerr.Error with a message.
func invalid(t *testing.T, err error) {
	t.Helper()
	var e *xerr.Error
	if !errors.As(err, &e) || e.Code != xerr.InvalidArgument || e.Msg == "" {
		t.Fatalf("a refused request must be INVALID_ARGUMENT with a message, got %#v", err)
	}
}

var requestID = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

// FuzzReserveRequest: whatever the body, decoding and validation never panic, a refusal
// is INVALID_ARGUMENT, and what passes is within docs/API.md's bounds.
func FuzzReserveRequest(f *testing.F) {
	f.Add([]byte(`{"activity_id":1,"request_id":"abcdefgh"}`))
	f.Add([]byte(`{"activity_id":1,"quantity":1000000000,"request_id":"r-1_23456789"}`))
	f.Add([]byte(`{"activity_id":"1","request_id":"abcdefgh"}`))
	f.Add([]byte(`{"activity_id":1.5,"request_id":"abcdefgh","quantity":-1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req types.ReserveReq
		if err := parse(t, body, &req); err != nil {
			return // a body that does not decode: 400 by reply.Classify
		}
		if err := validate.Reserve(&req); err != nil {
			invalid(t, err)
			return
		}
		if req.ActivityId < 1 || req.Quantity < 1 || req.Quantity > domain.MaxQuantity ||
			!requestID.MatchString(req.RequestId) {
			t.Fatalf("accepted out of bounds: %+v", req)
		}
	})
}

// FuzzCreateActivityRequest: as FuzzReserveRequest, for a new activity.
func FuzzCreateActivityRequest(f *testing.F) {
	f.Add([]byte(`{"sku_id":1,"name":"phone","stock":10,"start_time":1790000000,"end_time":1790003600}`))
	f.Add([]byte(`{"sku_id":1,"name":"\u00e9t\u00e9","stock":1000000000,"start_time":0,"end_time":1,` +
		`"per_user_limit":2,"pay_timeout_seconds":86400}`))
	f.Add([]byte(`{"sku_id":1,"name":"","stock":0,"start_time":5,"end_time":4}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req types.CreateActivityReq
		if err := parse(t, body, &req); err != nil {
			return
		}
		if err := validate.CreateActivity(&req); err != nil {
			invalid(t, err)
			return
		}
		n := utf8.RuneCountInString(req.Name)
		if req.SkuId < 1 || req.Stock < 1 || req.Stock > 1_000_000_000 || !utf8.ValidString(req.Name) || n < 1 || n > 128 ||
			req.StartTime < 0 ||
			req.EndTime <= req.StartTime ||
			req.PerUserLimit < 1 ||
			req.PayTimeoutSeconds < 1 ||
			req.PayTimeoutSeconds > 86400 {
			t.Fatalf("accepted out of bounds: %+v", req)
		}
	})
}

// FuzzOrderNo: an order number that passes validation has the documented shape and names
// a positive activity id.
func FuzzOrderNo(f *testing.F) {
	f.Add(domain.NewOrderNo(1))
	f.Add("1-deadbeef")
	f.Add("0-deadbeef")
	f.Add("9223372036854775808-deadbeef")
	f.Fuzz(func(t *testing.T, s string) {
		if err := validate.OrderNo(s); err != nil {
			invalid(t, err)
			return
		}
		aid, ok := domain.ParseOrderNo(s)
		if !ok || aid < 1 || len(s) > domain.MaxOrderNoLen ||
			s[:len(strconv.FormatInt(aid, 10))] != strconv.FormatInt(aid, 10) {
			t.Fatalf("accepted %q (activity %d)", s, aid)
		}
	})
}

// FuzzReserveBody: the gateway's fast decoding of a reservation (ReserveBody) accepts only
// bodies that go-zero's httpx.Parse decodes to exactly the same request; whatever it
// refuses goes through httpx.Parse as before, so the answers to bad input do not change.
func FuzzReserveBody(f *testing.F) {
	for _, s := range reserveBodySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := validate.ReserveBody(body)
		if !ok {
			return
		}
		var req types.ReserveReq
		if err := parse(t, body, &req); err != nil {
			t.Fatalf("ReserveBody accepted %q, httpx.Parse refuses it: %v", body, err)
		}
		if fast != req {
			t.Fatalf("ReserveBody decoded %q as %+v, httpx.Parse as %+v", body, fast, req)
		}
	})
}

var reserveBodySeeds = []string{
	`{"activity_id":1,"request_id":"abcdefgh"}`,
	`{"activity_id":12,"quantity":3,"request_id":"r-1_23456789"}`,
	" {\n\t\"request_id\" : \"abcdefgh\" , \"quantity\":0,\"activity_id\": 999999999999999999 } \r\n",
	`{"activity_id":"1","request_id":"abcdefgh"}`,
	`{"activity_id":1,"quantity":0,"request_id":"abcdefgh"}`,          // out of range: httpx.Parse refuses it
	`{"activity_id":0,"request_id":"abcdefgh"}`,                       // as above
	`{"activity_id":1,"quantity":1000000001,"request_id":"abcdefgh"}`, // as above
	`{"activity_id":1.5,"request_id":"abcdefgh","quantity":-1}`,
	`{"activity_id":1,"activity_id":2,"request_id":"abcdefgh"}`,
	`{"activity_id":1,"request_id":"abc\u0064efgh"}`,
	`{"activity_id":01,"request_id":"abcdefgh"}`,
	`{"activity_id":1e3,"request_id":"abcdefgh"}`,
	`{"activity_id":1,"request_id":"abcdefgh","x":1}`,
	`{"activity_id":1,"request_id":"abcdefgh"} {}`,
	`{"activity_id":1,"request_id":"abcdefgh",}`,
	`{"activity_id":1}`,
	`{}`,
	``,
}

// TestReserveBody: what the fast decoding takes and what it leaves to httpx.Parse.
func TestReserveBody(t *testing.T) {
	for body, want := range map[string]types.ReserveReq{
		`{"activity_id":1,"request_id":"abcdefgh"}`: {ActivityId: 1, Quantity: 1,
			RequestId: "abcdefgh"},
		`{"activity_id":12,"quantity":3,"request_id":"r-1_23456789"}`: {ActivityId: 12, Quantity: 3,
			RequestId: "r-1_23456789"},
		//nolint:gocritic // mapKey: the whitespace around the JSON is the case
		" {\n\t\"request_id\" : \"x\" , \"quantity\":1000000000,\"activity_id\": 999999999999999999 } \r\n": {
			ActivityId: 999999999999999999, Quantity: 1000000000, RequestId: "x"},
	} {
		got, ok := validate.ReserveBody([]byte(body))
		if !ok || got != want {
			t.Errorf("ReserveBody(%q) = %+v, %v; want %+v", body, got, ok, want)
		}
		var req types.ReserveReq
		if err := parse(t, []byte(body), &req); err != nil || req != want {
			t.Errorf("httpx.Parse(%q) = %+v, %v; want %+v", body, req, err, want)
		}
	}
	for _, body := range reserveBodySeeds[3:] {
		if got, ok := validate.ReserveBody([]byte(body)); ok {
			t.Errorf("ReserveBody(%q) = %+v: must be left to httpx.Parse", body, got)
		}
	}
	if _, ok := validate.ReserveBody([]byte(`{"activity_id":1234567890123456789,"request_id":"abcdefgh"}`)); ok {
		t.Error("19 digits must be left to httpx.Parse (overflow)")
	}
}
