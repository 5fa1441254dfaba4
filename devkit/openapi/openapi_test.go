package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadCodesOfAPIDoc(t *testing.T) {
	f, err := os.Open("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	words, err := readCodes(f)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, w := range words {
		got[w.Code] = w.HTTP
	}
	for code, status := range map[string]int{"INVALID_ARGUMENT": 400, "SOLD_OUT": 409, "RATE_LIMITED": 429, "BUSY": 503} {
		if got[code] != status {
			t.Errorf("%s: %d, want %d (all: %v)", code, got[code], status, got)
		}
	}
	if _, ok := got["NOT_DUE"]; ok {
		t.Errorf("NOT_DUE is not in docs/API.md's table, yet read")
	}
}

func TestReadCodesRejectsWhatXerrDoesNotSay(t *testing.T) {
	for _, table := range []string{
		"### Code words\n\n| code | HTTP | when |\n| --- | --- | --- |\n| `SOLD_OUT` | 410 | gone |\n",
		"### Code words\n\n| code | HTTP | when |\n| --- | --- | --- |\n| `NO_SUCH_WORD` | 500 | never |\n",
		"### Other\n\n| `SOLD_OUT` | 409 | remaining < quantity |\n",
	} {
		if words, err := readCodes(strings.NewReader(table)); err == nil {
			t.Errorf("%q: read %v, want an error", table, words)
		}
	}
}

// TestRunIsDeterministic rewrites a goctl-shaped document twice: the same bytes, an OpenAPI 3
// document without the generation date, with the Error schema, a default error response
// everywhere and the 202's body.
func TestRunIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	src := `{"swagger":"2.0","schemes":["https"],"x-date":"2026-12-02 00:48:53","info":{"title":"t","version":"v1"},` +
		`"definitions":{"EntryResp":{"type":"object"},"Unused":{"type":"object"}},"paths":{` +
		`"/healthz":{"get":{"schemes":["https"],"responses":{"200":{"description":""}}}},` +
		`"/v1/seckill/orders":{"post":{"responses":{"200":{"description":""},"202":{"description":"queued"},` +
		`"409":{"description":"SOLD_OUT"}}}}}}`
	if err := os.WriteFile(in, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	for i, name := range []string{"a.json", "b.json"} {
		out := filepath.Join(dir, name)
		if err := run(in, "../../api/seckill.api", "../../docs/API.md", out); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
		if i == 1 && !bytes.Equal(outs[0], b) {
			t.Fatalf("two runs differ:\n%s\n%s", outs[0], b)
		}
	}
	var doc struct {
		OpenAPI    string
		XDate      *string `json:"x-date"`
		Components struct{ Schemas map[string]json.RawMessage }
		Paths      map[string]map[string]struct {
			Responses map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(outs[0], &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" || doc.XDate != nil || doc.Components.Schemas["Error"] == nil ||
		doc.Components.Schemas["Unused"] != nil {
		t.Fatalf("openapi %q, x-date %v, schemas %v", doc.OpenAPI, doc.XDate, doc.Components.Schemas)
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if !strings.Contains(string(op.Responses["default"]), "503 BUSY") || op.Responses["503"] == nil {
				t.Errorf("%s %s: default %s, 503 %s", method, path, op.Responses["default"], op.Responses["503"])
			}
		}
	}
	if r := string(doc.Paths["/v1/seckill/orders"]["post"].Responses["202"]); !strings.Contains(r, "EntryResp") ||
		!strings.Contains(r, "Retry-After") {
		t.Errorf("202: %s", r)
	}
}

// TestRunRefusesAWrongCodeWord: a response of api/seckill.api whose code word has another
// status in docs/API.md (or is no code word) fails make gen.
func TestRunRefusesAWrongCodeWord(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []string{`"404":{"description":"SOLD_OUT"}`, `"409":{"description":"NO_SUCH_WORD"}`,
		`"409":{"description":"conflict"}`} {
		in := filepath.Join(dir, "in.json")
		src := `{"swagger":"2.0","info":{"title":"t","version":"v1"},"definitions":{"EntryResp":{"type":"object"}},` +
			`"paths":{"/v1/x":{"get":{"responses":{"200":{"description":"ok"},` + r + `}}}}}`
		if err := os.WriteFile(in, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := run(in, "../../api/seckill.api", "../../docs/API.md", filepath.Join(dir, "out.json")); err == nil {
			t.Errorf("%s: no error", r)
		}
	}
}

// TestIdempotentRoutes: the routes of api/seckill.api the Idempotency middleware runs on.
func TestIdempotentRoutes(t *testing.T) {
	routes, err := idempotentRoutes("../../api/seckill.api")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"POST /v1/admin/activities", "POST /v1/admin/activities/{id}/stock",
		"POST /v1/admin/activities/{id}/end"} {
		if !routes[r] {
			t.Errorf("%s is not idempotent: %v", r, routes)
		}
	}
	for _, r := range []string{"GET /v1/admin/activities", "POST /v1/admin/activities/{id}/warmup",
		"POST /v1/seckill/orders"} {
		if routes[r] {
			t.Errorf("%s is idempotent: %v", r, routes)
		}
	}
}
