package apiserver_test

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/seckill/seckill/api/internal/apidoc"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/internal/domain"
)

// pathParam is a go-zero path parameter (:order_no), which the document writes {order_no}.
var pathParam = regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)

// servedDocument fetches /openapi.json from the gateway, checks it is the embedded document,
// and loads and validates it with kin-openapi.
func servedDocument(t *testing.T, e *env) *openapi3.T {
	t.Helper()
	resp, err := e.client.Get(e.base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /openapi.json: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !bytes.Equal(body, apidoc.Document) {
		t.Fatalf("the gateway served %d bytes, not the embedded document (%d bytes)", len(body), len(apidoc.Document))
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("the served document does not validate: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	return doc
}

// TestOpenAPIDocumentMatchesRoutes: the gateway serves the embedded document at /openapi.json,
// an OpenAPI 3 document that kin-openapi validates; every route the gateway registered is in
// it with its method, every operation in it is a registered route, and every operation
// answers errors as {code, msg}.
func TestOpenAPIDocumentMatchesRoutes(t *testing.T) {
	e := start(t)
	doc := servedDocument(t, e)
	var registered, documented []string
	for _, r := range e.api.Routes() {
		registered = append(registered, r.Method+" "+pathParam.ReplaceAllString(r.Path, "{$1}"))
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			documented = append(documented, method+" "+path)
			if d := op.Responses.Default(); d == nil || d.Value.Content.Get("application/json").Schema.Ref !=
				"#/components/schemas/Error" {
				t.Errorf("%s %s: no default error response", method, path)
			}
		}
	}
	slices.Sort(registered)
	slices.Sort(documented)
	for _, r := range registered {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in /openapi.json", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(registered, d) {
			t.Errorf("/openapi.json has %s, which the gateway does not register", d)
		}
	}
	if len(registered) < 12 {
		t.Errorf("the gateway registered %d routes: %v", len(registered), registered)
	}
	codes := doc.Components.Schemas["Error"].Value.Properties["code"].Value.Enum
	for _, c := range []string{"INVALID_ARGUMENT", "SOLD_OUT", "BUSY", "IDEMPOTENCY_CONFLICT"} {
		if !slices.Contains(codes, any(c)) {
			t.Errorf("the Error schema's codes %v lack %s", codes, c)
		}
	}
	t.Logf("%d routes registered: %v", len(registered), registered)
}

// TestOpenAPIDocumentSaysWhatTheGatewayDoes: the served document carries the security schemes
// and each route's, the 202 of a queued reservation, Retry-After on every 429, 503 and 202,
// the Idempotency-Key header exactly on the routes the gateway reads it on, the enums and
// bounds of docs/API.md (the bounds as internal/domain has them).
func TestOpenAPIDocumentSaysWhatTheGatewayDoes(t *testing.T) {
	e := start(t)
	doc := servedDocument(t, e)
	t.Run("security", func(t *testing.T) { documentSecurity(t, doc) })
	t.Run("responses", func(t *testing.T) { documentResponses(t, doc) })
	t.Run("idempotency key", func(t *testing.T) { documentIdempotencyKey(t, e, doc) })
	t.Run("enums and bounds", func(t *testing.T) { documentEnumsAndBounds(t, doc) })
}

func documentSecurity(t *testing.T, doc *openapi3.T) {
	schemes := doc.Components.SecuritySchemes
	for _, name := range []string{"BuyerJWT", "MerchantJWT"} {
		s := schemes[name]
		if s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" || s.Value.BearerFormat != "JWT" {
			t.Errorf("%s: %+v", name, s)
		}
	}
	for name, header := range map[string]string{"PaymentSignature": "Seckill-Signature",
		"PaymentTimestamp": "Seckill-Timestamp"} {
		s := schemes[name]
		if s == nil || s.Value.Type != "apiKey" || s.Value.In != "header" || s.Value.Name != header {
			t.Errorf("%s: %+v", name, s)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			var want []string
			switch {
			case strings.HasPrefix(path, "/v1/admin/"):
				want = []string{"MerchantJWT"}
			case strings.HasPrefix(path, "/v1/seckill/"), strings.HasPrefix(path, "/v1/activities/"):
				want = []string{"BuyerJWT"}
			case path == "/v1/payments/notify":
				want = []string{"PaymentSignature", "PaymentTimestamp"}
			}
			var got []string
			if op.Security != nil {
				for _, req := range *op.Security {
					for name := range req {
						got = append(got, name)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: security %v, want %v", method, path, got, want)
			}
		}
	}
}

func documentResponses(t *testing.T, doc *openapi3.T) {
	reserve := doc.Paths.Find("/v1/seckill/orders").Post
	queued := reserve.Responses.Status(http.StatusAccepted)
	if queued == nil || queued.Value.Content.Get("application/json").Schema.Ref != "#/components/schemas/EntryResp" {
		t.Fatalf("POST /v1/seckill/orders: no 202 with the entry: %+v", queued)
	}
	status := queued.Value.Content.Get("application/json").Schema.Value.Properties["status"].Value.Enum
	if !slices.Contains(status, any("queued")) {
		t.Errorf("the 202's status enum %v lacks queued", status)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, code := range []int{http.StatusAccepted, http.StatusTooManyRequests, http.StatusServiceUnavailable} {
				r := op.Responses.Status(code)
				if r == nil {
					if code != http.StatusAccepted {
						t.Errorf("%s %s: no %d", method, path, code)
					}
					continue
				}
				if h := r.Value.Headers["Retry-After"]; h == nil || !h.Value.Schema.Value.Type.Is("integer") {
					t.Errorf("%s %s: the %d has no Retry-After", method, path, code)
				}
			}
		}
	}
	orders := doc.Paths.Find("/v1/admin/activities/{id}/orders").Get.Responses.Status(http.StatusOK)
	if csv := orders.Value.Content.Get("text/csv"); csv == nil || !csv.Schema.Value.Type.Is("string") {
		t.Errorf("GET .../orders: the 200 has no text/csv body: %v", orders.Value.Content)
	}
	for code, word := range map[int]string{409: "LIMIT_EXCEEDED", 404: "ACTIVITY_NOT_FOUND", 401: "UNAUTHORIZED"} {
		if r := reserve.Responses.Status(code); r == nil || !strings.Contains(*r.Value.Description, word) {
			t.Errorf("POST /v1/seckill/orders: %d does not name %s", code, word)
		}
	}
}

// documentIdempotencyKey: every merchant operation of the document that declares the header is
// one whose answer to a malformed key is the Idempotency middleware's 400, and every other
// merchant operation ignores the header.
func documentIdempotencyKey(t *testing.T, e *env, doc *openapi3.T) {
	a := e.warm(map[string]any{"stock": 5})
	merchant := merchantToken(t, merchantID)
	declared := 0
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/v1/admin/") {
			continue
		}
		for method, op := range item.Operations() {
			p := op.Parameters.GetByInAndName("header", middleware.IdempotencyHeader)
			if p != nil {
				declared++
				if p.Required || p.Schema.Value.MinLength != 8 || *p.Schema.Value.MaxLength != 64 {
					t.Errorf("%s %s: %+v", method, path, p.Schema.Value)
				}
			}
			url := e.base + strings.ReplaceAll(path, "{id}", strconv.FormatInt(a.ActivityID, 10))
			req, err := http.NewRequest(method, url, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+merchant)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(middleware.IdempotencyHeader, "bad key")
			resp, err := e.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			refused := resp.StatusCode == http.StatusBadRequest && bytes.Contains(raw, []byte(middleware.IdempotencyHeader))
			if refused != (p != nil) {
				t.Errorf("%s %s declares the header: %v; a malformed key answered %d %s", method, path, p != nil,
					resp.StatusCode, raw)
			}
		}
	}
	if declared < 3 {
		t.Errorf("%d operations declare %s", declared, middleware.IdempotencyHeader)
	}
}

// documentEnumsAndBounds: the enums of docs/API.md, and its bounds as internal/domain has them.
func documentEnumsAndBounds(t *testing.T, doc *openapi3.T) {
	schema := func(name, prop string) *openapi3.Schema {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value.Properties[prop] == nil {
			t.Fatalf("no %s.%s", name, prop)
		}
		return s.Value.Properties[prop].Value
	}
	orderStates := []any{domain.StateReserved, domain.StatePaid, domain.StateCancelled, domain.StateExpired}
	for name, want := range map[string][]any{
		"ReserveResp.status":      orderStates,
		"OrderResp.status":        orderStates,
		"EntryResp.status":        {domain.StateQueued, "won", "lost"},
		"ActivityViewResp.status": {"upcoming", "active", "sold_out", "ended"},
		"ReconcileResp.status":    {"consistent", "in_flight", "mismatch"},
	} {
		def, prop, _ := strings.Cut(name, ".")
		got := schema(def, prop).Enum
		if len(got) != len(want) {
			t.Errorf("%s: enum %v, want %v", name, got, want)
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: enum %v lacks %v", name, got, w)
			}
		}
	}
	for name, want := range map[string][2]float64{
		"ReserveReq.quantity":                   {1, domain.MaxQuantity},
		"CreateActivityReq.stock":               {1, domain.MaxStock},
		"CreateActivityReq.per_user_limit":      {1, domain.MaxQuantity},
		"CreateActivityReq.pay_timeout_seconds": {1, domain.MaxPayTimeoutSecs},
		"CreateActivityReq.draw_seconds":        {0, domain.MaxDrawSeconds},
		"CreateActivityReq.price":               {0, domain.MaxPrice},
		"AdjustStockReq.delta":                  {-domain.MaxDelta, domain.MaxDelta},
		"PaymentNotifyReq.amount":               {0, domain.MaxAmount},
	} {
		def, prop, _ := strings.Cut(name, ".")
		s := schema(def, prop)
		if s.Min == nil || s.Max == nil || *s.Min != want[0] || *s.Max != want[1] {
			t.Errorf("%s: bounds %v..%v, want %v", name, s.Min, s.Max, want)
		}
	}
	for _, name := range []string{"ReserveReq.activity_id", "CreateActivityReq.sku_id"} {
		def, prop, _ := strings.Cut(name, ".")
		if s := schema(def, prop); s.Min == nil || *s.Min != 1 {
			t.Errorf("%s: minimum %v, want 1", name, s.Min)
		}
	}
	if s := schema("ReserveReq", "request_id"); s.MinLength != 8 || s.MaxLength == nil || *s.MaxLength != 64 {
		t.Errorf("request_id: length %d..%v", s.MinLength, s.MaxLength)
	}
	if s := schema("CreateActivityReq", "name"); s.MinLength != 1 || *s.MaxLength != domain.MaxNameChars {
		t.Errorf("name: length %d..%v", s.MinLength, s.MaxLength)
	}
	order := doc.Paths.Find("/v1/seckill/orders/{order_no}").Get.Parameters.GetByInAndName("path", "order_no")
	if order == nil || order.Schema.Value.Pattern != domain.OrderNoPattern {
		t.Errorf("order_no: %+v", order)
	}
	size := doc.Paths.Find("/v1/admin/activities").Get.Parameters.GetByInAndName("query", "size")
	if size == nil || *size.Schema.Value.Max != domain.MaxPageSize {
		t.Errorf("size: %+v", size)
	}
}
