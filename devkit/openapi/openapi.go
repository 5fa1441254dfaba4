// Command openapi turns goctl's Swagger 2.0 document of api/seckill.api into the OpenAPI 3
// document the gateway serves at /openapi.json: it adds what goctl has no option for (the
// error shape and the code words of docs/API.md, the statuses every route answers,
// Retry-After, the 202's body, Idempotency-Key, string bounds: swagger2.go, strings.go),
// converts with kin-openapi's openapi2conv (openapi3.go), validates the result and writes it
// deterministically. make gen runs it; docs/DESIGN.md "The API document" says why.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"

	"github.com/seckill/seckill/internal/xerr"
)

// A codeWord is one row of docs/API.md's code table.
type codeWord struct {
	Code string `json:"code"`
	HTTP int    `json:"http"`
	When string `json:"when"`
}

// codeRow matches a row of the code table: | `SOLD_OUT` | 409 | when |.
var codeRow = regexp.MustCompile("^\\| `([A-Z_]+)` \\| ([0-9]{3}) \\| (.+) \\|$")

// readCodes returns the rows of the table under "### Code words" in docs/API.md, each
// checked against internal/xerr: a word the code does not know, or another status, is an error.
func readCodes(r io.Reader) ([]codeWord, error) {
	var words []codeWord
	in := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "### Code words":
			in = true
		case in && strings.HasPrefix(line, "#"):
			in = false
		case in:
			m := codeRow.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			status, _ := strconv.Atoi(m[2])
			c := xerr.Code(m[1])
			if c != xerr.Internal && xerr.GRPCCode(c) == codes.Internal {
				return nil, fmt.Errorf("code word %s of docs/API.md is not in internal/xerr", c)
			}
			if xerr.HTTPStatus(c) != status {
				return nil, fmt.Errorf("code word %s: docs/API.md says %d, internal/xerr %d", c, status, xerr.HTTPStatus(c))
			}
			words = append(words, codeWord{Code: m[1], HTTP: status, When: m[3]})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(words) == 0 {
		return nil, errors.New("no code table under \"### Code words\"")
	}
	return words, nil
}

// errorSchema is the definition of the body of every error answer.
func errorSchema(words []codeWord) map[string]any {
	enum := make([]string, len(words))
	for i, w := range words {
		enum[i] = w.Code
	}
	return map[string]any{
		"type":        "object",
		"description": "Every error answer: the HTTP status of its code word, and this body (docs/API.md).",
		"required":    []string{"code", "msg"},
		"properties": map[string]any{
			"code": map[string]any{"type": "string", "enum": enum,
				"description": "the word clients switch on; x-codes gives each one's HTTP status and meaning"},
			"msg": map[string]any{"type": "string", "description": "human readable"},
		},
		"x-codes": words,
	}
}

// errorResponse is the default response of every operation: an error, listed by status.
// The statuses a route answers are its own responses; default names them all.
func errorResponse(words []codeWord) map[string]any {
	byStatus := map[int][]string{}
	var statuses []int
	for _, w := range words {
		if _, ok := byStatus[w.HTTP]; !ok {
			statuses = append(statuses, w.HTTP)
		}
		byStatus[w.HTTP] = append(byStatus[w.HTTP], w.Code)
	}
	slices.Sort(statuses)
	parts := make([]string, len(statuses))
	for i, s := range statuses {
		parts[i] = strconv.Itoa(s) + " " + strings.Join(byStatus[s], ", ")
	}
	return map[string]any{
		"description": "an error {code, msg}; code words by status: " + strings.Join(parts, "; "),
		"schema":      map[string]any{"$ref": "#/definitions/Error"},
	}
}

// encode writes doc as indented JSON (map keys sorted: the same bytes on every run).
func encode(doc map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func run(swaggerFile, apiFile, codesFile, out string) error {
	raw, err := os.ReadFile(swaggerFile)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", swaggerFile, err)
	}
	f, err := os.Open(codesFile)
	if err != nil {
		return err
	}
	defer f.Close()
	words, err := readCodes(f)
	if err != nil {
		return fmt.Errorf("%s: %w", codesFile, err)
	}
	idempotent, err := idempotentRoutes(apiFile)
	if err != nil {
		return err
	}
	if err := rewrite2(doc, words, idempotent); err != nil {
		return fmt.Errorf("%s: %w", swaggerFile, err)
	}
	doc3, err := toV3(doc)
	if err != nil {
		return err
	}
	b, err := encode3(doc3)
	if err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

func main() {
	swaggerFile := flag.String("swagger", "", "goctl api swagger's output")
	apiFile := flag.String("api", "api/seckill.api", "the goctl API file the document was made from")
	codesFile := flag.String("codes", "docs/API.md", "the document whose \"Code words\" table lists the error codes")
	out := flag.String("o", "", "the document to write")
	flag.Parse()
	if *swaggerFile == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*swaggerFile, *apiFile, *codesFile, *out); err != nil {
		log.Fatalf("openapi: %v", err)
	}
}
