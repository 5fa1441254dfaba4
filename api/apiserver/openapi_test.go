package apiserver_test

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/seckill/seckill/api/internal/apidoc"
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
