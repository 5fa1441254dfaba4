package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/zeromicro/go-zero/tools/goctl/pkg/parser/api/parser"
)

// idempotencyMiddleware is the middleware of api/seckill.api's groups whose routes take an
// Idempotency-Key: the routes in such a group are the merchant's idempotent writes.
const idempotencyMiddleware = "Idempotency"

// goPathParam is a go-zero path parameter (:id), which the document writes {id}.
var goPathParam = regexp.MustCompile(`:([A-Za-z_][A-Za-z0-9_]*)`)

// idempotentRoutes reads api/seckill.api with goctl's parser: "POST /v1/admin/activities"
// and the other routes of the groups the Idempotency middleware runs on.
func idempotentRoutes(apiFile string) (map[string]bool, error) {
	spec, err := parser.Parse(apiFile, nil)
	if err != nil {
		return nil, err
	}
	routes := map[string]bool{}
	for _, g := range spec.Service.Groups {
		middleware := strings.Split(g.GetAnnotation("middleware"), ",")
		for i := range middleware {
			middleware[i] = strings.TrimSpace(middleware[i])
		}
		if !slices.Contains(middleware, idempotencyMiddleware) {
			continue
		}
		for _, r := range g.Routes {
			p := goPathParam.ReplaceAllString(path.Join("/", g.GetAnnotation("prefix"), r.Path), "{$1}")
			routes[strings.ToUpper(r.Method)+" "+p] = true
		}
	}
	if len(routes) == 0 {
		return nil, fmt.Errorf("%s: no route runs the %s middleware", apiFile, idempotencyMiddleware)
	}
	return routes, nil
}

// toV3 converts the rewritten Swagger 2.0 document with kin-openapi's openapi2conv, then says
// in OpenAPI 3 what Swagger 2.0 cannot: an apiKey on Authorization (how api/seckill.api
// declares a JWT) is an http bearer scheme of JWTs. The result must validate.
func toV3(doc2 map[string]any) (*openapi3.T, error) {
	raw, err := json.Marshal(doc2)
	if err != nil {
		return nil, err
	}
	var d2 openapi2.T
	if err := json.Unmarshal(raw, &d2); err != nil {
		return nil, err
	}
	d3, err := openapi2conv.ToV3(&d2)
	if err != nil {
		return nil, err
	}
	for _, s := range d3.Components.SecuritySchemes {
		if v := s.Value; v.Type == "apiKey" && v.In == "header" && v.Name == "Authorization" {
			*v = openapi3.SecurityScheme{Type: "http", Scheme: "bearer", BearerFormat: "JWT",
				Description: v.Description}
		}
	}
	if err := addCSV(d3); err != nil {
		return nil, err
	}
	if err := d3.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI 3 document does not validate: %w", err)
	}
	return d3, nil
}

// encode3 writes doc as indented JSON with its keys sorted: the same bytes on every run.
func encode3(doc *openapi3.T) ([]byte, error) {
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return encode(m)
}

// csvRoute answers every matching order as CSV, streamed, when asked with Accept: text/csv
// (docs/API.md); goctl has no way to give a route a second media type.
const (
	csvRoute  = "/v1/admin/activities/{id}/orders"
	csvHeader = "order_no,uid,quantity,amount,status,trade_no,created_at,updated_at"
)

// addCSV gives csvRoute's 200 its text/csv body beside the JSON page (a document without the
// route, as devkit/openapi's own tests write, is left alone; the gateway's document test
// checks that the served one has it).
func addCSV(d3 *openapi3.T) error {
	item := d3.Paths.Value(csvRoute)
	if item == nil || item.Get == nil {
		return nil
	}
	ok := item.Get.Responses.Value("200")
	if ok == nil || ok.Value == nil {
		return fmt.Errorf("GET %s has no 200", csvRoute)
	}
	ok.Value.Content["text/csv"] = &openapi3.MediaType{Schema: openapi3.NewSchemaRef("", &openapi3.Schema{
		Type: &openapi3.Types{openapi3.TypeString},
		Description: "with Accept: text/csv, every matching order, streamed; the header line " + csvHeader +
			"; a failure mid-stream breaks the connection (no final chunk), never a short 200",
	})}
	return nil
}
