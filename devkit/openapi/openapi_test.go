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

// TestRunIsDeterministic rewrites a goctl-shaped document twice: the same bytes, without
// the generation date, with the Error definition and a default error response everywhere.
func TestRunIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	src := `{"swagger":"2.0","schemes":["https"],"x-date":"2026-12-02 00:48:53","paths":{` +
		`"/healthz":{"get":{"schemes":["https"],"responses":{"200":{"description":""}}}},` +
		`"/v1/seckill/orders":{"post":{"responses":{"200":{"description":""}}}}}}`
	if err := os.WriteFile(in, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var outs [][]byte
	for i, name := range []string{"a.json", "b.json"} {
		out := filepath.Join(dir, name)
		if err := run(in, "../../docs/API.md", out); err != nil {
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
		XDate       *string `json:"x-date"`
		Definitions map[string]json.RawMessage
		Paths       map[string]map[string]struct {
			Schemes   []string
			Responses map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(outs[0], &doc); err != nil {
		t.Fatal(err)
	}
	if doc.XDate != nil || doc.Definitions["Error"] == nil {
		t.Fatalf("x-date %v, Error definition %s", doc.XDate, doc.Definitions["Error"])
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if !strings.Contains(string(op.Responses["default"]), "503 BUSY") || op.Schemes != nil {
				t.Errorf("%s %s: default %s, schemes %v", method, path, op.Responses["default"], op.Schemes)
			}
		}
	}
}
