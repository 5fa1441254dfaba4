package apiserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/seckill/seckill/api/internal/apidoc"
)

// pathParam is a go-zero path parameter (:order_no), which the document writes {order_no}.
var pathParam = regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)

// TestOpenAPIDocumentMatchesRoutes fetches /openapi.json from a running gateway: it is the
// embedded document; every route the gateway registered is in it with its method, every
// operation in it is a registered route, and every operation answers errors as {code, msg}.
func TestOpenAPIDocumentMatchesRoutes(t *testing.T) {
	e := start(t)
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
	var doc struct {
		Swagger     string
		Paths       map[string]map[string]struct{ Responses map[string]json.RawMessage }
		Definitions map[string]struct {
			Properties map[string]struct{ Enum []string }
		}
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Swagger != "2.0" {
		t.Fatalf("swagger %q", doc.Swagger)
	}

	var registered, documented []string
	for _, r := range e.api.Routes() {
		registered = append(registered, r.Method+" "+pathParam.ReplaceAllString(r.Path, "{$1}"))
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
			if !strings.Contains(string(op.Responses["default"]), `"#/definitions/Error"`) {
				t.Errorf("%s %s: no default error response: %s", method, path, op.Responses["default"])
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
	codes := doc.Definitions["Error"].Properties["code"].Enum
	for _, c := range []string{"INVALID_ARGUMENT", "SOLD_OUT", "BUSY"} {
		if !slices.Contains(codes, c) {
			t.Errorf("the Error definition's codes %v lack %s", codes, c)
		}
	}
	t.Logf("%d routes registered: %v", len(registered), registered)
}
