package main

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/seckill/seckill/internal/xerr"
)

// What this file adds to goctl's Swagger 2.0 document, each because goctl has no option for
// it (goctl writes a response's description only, one security scheme per route, and string
// fields without lengths or patterns). Everything else comes from api/seckill.api.

// queuedSchema is the body of every 202: a reservation received during an activity's opening
// draw is an entry, answered 202 with the entry (docs/API.md "The opening draw"); goctl gives
// a route one response type, the 200's.
const queuedSchema = "EntryResp"

// idempotencyHeader is the header of the Idempotency middleware (api/internal/middleware,
// IdempotencyHeader; api/apiserver's document test checks the two agree).
const idempotencyHeader = "Idempotency-Key"

// signatureScheme and timestampScheme: a payment notification carries both headers, and goctl's
// authType names one scheme a route.
const (
	signatureScheme = "PaymentSignature"
	timestampScheme = "PaymentTimestamp"
)

// retryAfter is the header of every 429 and 503, and of the draw's 202 (docs/API.md
// "Conventions"); goctl declares no response headers.
var retryAfter = map[string]any{
	"type": "integer", "minimum": 1,
	"description": "whole seconds to wait before asking again (for a 202, the seconds until draw_at)",
}

// everywhere are the statuses any route may answer (docs/API.md "Conventions"): 429 from a
// client address with too many failed authentications, 500 INTERNAL, 503 BUSY from load
// shedding, timeouts and dependencies. The routes list only their own in api/seckill.api.
var everywhere = map[int]string{
	http.StatusTooManyRequests:     "RATE_LIMITED",
	http.StatusInternalServerError: "INTERNAL",
	http.StatusServiceUnavailable:  "BUSY",
}

// wordInText matches a code word in a response's description.
var wordInText = regexp.MustCompile(`\b[A-Z][A-Z_]{2,}\b`)

// rewrite2 turns goctl's Swagger 2.0 document into the one openapi2conv converts.
func rewrite2(doc map[string]any, words []codeWord, idempotent map[string]bool) error {
	delete(doc, "x-date") // the generation time: the document must be the same on every run
	doc["schemes"] = []string{"http", "https"}
	defs, _ := doc["definitions"].(map[string]any)
	if defs == nil || defs[queuedSchema] == nil {
		return fmt.Errorf("no definition %s: api/seckill.api must set useDefinitions", queuedSchema)
	}
	defs["Error"] = errorSchema(words)
	paths, _ := doc["paths"].(map[string]any)
	if len(paths) == 0 {
		return errors.New("the document has no paths")
	}
	byWord := map[string]int{}
	for _, w := range words {
		byWord[w.Code] = w.HTTP
	}
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, op := range ops {
			o, _ := op.(map[string]any)
			delete(o, "schemes") // the document's own
			if idempotent[strings.ToUpper(method)+" "+path] {
				addIdempotencyKey(o)
			}
			pairSignature(o)
			if err := responses(o, words, byWord); err != nil {
				return fmt.Errorf("%s %s: %w", method, path, err)
			}
		}
	}
	boundStrings(doc)
	prune(doc)
	return nil
}

// addIdempotencyKey declares the header on a route the Idempotency middleware runs on, and its
// 409 (a key used again with another route or body).
func addIdempotencyKey(op map[string]any) {
	params, _ := op["parameters"].([]any)
	op["parameters"] = append(params, map[string]any{
		"in": "header", "name": idempotencyHeader, "required": false, "type": "string",
		"minLength": 8, "maxLength": 64, "pattern": idPattern,
		"description": "optional, per merchant, remembered 24 h: the same key with the same route and body " +
			"answers the first 2xx or 4xx again (Idempotent-Replayed: true) and changes nothing more",
	})
	responses, _ := op["responses"].(map[string]any)
	if responses == nil {
		responses = map[string]any{}
		op["responses"] = responses
	}
	r, _ := responses["409"].(map[string]any)
	if r == nil {
		responses["409"] = map[string]any{"description": "IDEMPOTENCY_CONFLICT"}
		return
	}
	r["description"] = fmt.Sprint(r["description"]) + ", IDEMPOTENCY_CONFLICT"
}

// pairSignature: a route secured by the payment signature also needs its timestamp (both
// headers in one requirement: OpenAPI's "and").
func pairSignature(op map[string]any) {
	security, _ := op["security"].([]any)
	for _, req := range security {
		if r, _ := req.(map[string]any); r != nil && r[signatureScheme] != nil {
			r[timestampScheme] = []any{}
		}
	}
}

// responses completes an operation's responses: the statuses every route may answer, the
// Error body of each error status, whose code words must be the document's at that status,
// Retry-After, the 202's body, a description where goctl left none, and the default.
func responses(op map[string]any, words []codeWord, byWord map[string]int) error {
	rs, _ := op["responses"].(map[string]any)
	if rs == nil {
		return errors.New("no responses")
	}
	for status, word := range conventional(op) {
		if rs[strconv.Itoa(status)] == nil {
			rs[strconv.Itoa(status)] = map[string]any{"description": word}
		}
	}
	for key, v := range rs {
		r, _ := v.(map[string]any)
		status, err := strconv.Atoi(key)
		if err != nil || r == nil {
			return fmt.Errorf("response %q", key)
		}
		if r["description"] == nil || r["description"] == "" {
			r["description"] = http.StatusText(status)
		}
		if status >= 400 {
			if err := checkWords(fmt.Sprint(r["description"]), status, byWord); err != nil {
				return err
			}
			r["schema"] = map[string]any{"$ref": "#/definitions/Error"}
		}
		if status == http.StatusAccepted {
			r["schema"] = map[string]any{"$ref": "#/definitions/" + queuedSchema}
		}
		if status == http.StatusAccepted || status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			r["headers"] = map[string]any{"Retry-After": retryAfter}
		}
	}
	rs["default"] = errorResponse(words)
	return nil
}

// conventional is everywhere, plus 401 on a route with security and 400 on one with
// parameters (docs/API.md "Conventions"), 413 and 415 on one with a body.
func conventional(op map[string]any) map[int]string {
	out := map[int]string{}
	for s, w := range everywhere {
		out[s] = w
	}
	if security, _ := op["security"].([]any); len(security) > 0 {
		out[http.StatusUnauthorized] = "UNAUTHORIZED"
	}
	params, _ := op["parameters"].([]any)
	if len(params) > 0 {
		out[http.StatusBadRequest] = "INVALID_ARGUMENT"
	}
	for _, p := range params {
		if m, _ := p.(map[string]any); m != nil && m["in"] == "body" {
			out[http.StatusRequestEntityTooLarge] = "PAYLOAD_TOO_LARGE"
			out[http.StatusUnsupportedMediaType] = "UNSUPPORTED_MEDIA_TYPE"
		}
	}
	return out
}

// checkWords: every code word an error response of api/seckill.api names is one of
// docs/API.md's, at that status.
func checkWords(description string, status int, byWord map[string]int) error {
	found := wordInText.FindAllString(description, -1)
	if len(found) == 0 {
		return fmt.Errorf("the %d response names no code word: %q", status, description)
	}
	for _, w := range found {
		if got, ok := byWord[w]; !ok || got != status {
			return fmt.Errorf("the %d response names %s, whose status is %d (docs/API.md, internal/xerr %d)",
				status, w, got, xerr.HTTPStatus(xerr.Code(w)))
		}
	}
	return nil
}

// prune drops the definitions nothing refers to: goctl writes one for every type, also for
// the requests whose fields are all path, query or header parameters.
func prune(doc map[string]any) {
	defs, _ := doc["definitions"].(map[string]any)
	used := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if ref, ok := t["$ref"].(string); ok {
				name := strings.TrimPrefix(ref, "#/definitions/")
				if !used[name] {
					used[name] = true
					walk(defs[name])
				}
			}
			for _, x := range t {
				walk(x)
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	walk(doc["paths"])
	for name := range defs {
		if !used[name] {
			delete(defs, name)
		}
	}
}
