package main

import "github.com/seckill/seckill/internal/domain"

// idPattern is the characters of request_id, trade_no and Idempotency-Key ([A-Za-z0-9_-]).
const idPattern = "^[A-Za-z0-9_-]+$"

// stringBounds are docs/API.md's bounds on strings, by definition and property ("" for a
// path parameter): goctl's range= bounds numbers only. The numbers' bounds are range= tags in
// api/seckill.api, which go-zero enforces; these are enforced by internal/domain.
var stringBounds = map[string]map[string]any{
	"ReserveReq.request_id":     {"minLength": 8, "maxLength": 64, "pattern": idPattern},
	"CreateActivityReq.name":    {"minLength": 1, "maxLength": domain.MaxNameChars},
	"PaymentNotifyReq.trade_no": {"minLength": 1, "maxLength": domain.MaxTradeNoLen, "pattern": idPattern},
	"PaymentNotifyReq.order_no": {"maxLength": domain.MaxOrderNoLen, "pattern": domain.OrderNoPattern},
	".order_no":                 {"maxLength": domain.MaxOrderNoLen, "pattern": domain.OrderNoPattern},
}

// boundStrings writes stringBounds into the definitions' properties and the path parameters.
func boundStrings(doc map[string]any) {
	defs, _ := doc["definitions"].(map[string]any)
	for name, d := range defs {
		props, _ := d.(map[string]any)["properties"].(map[string]any)
		for prop, p := range props {
			merge(p, stringBounds[name+"."+prop])
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		for _, op := range item.(map[string]any) {
			params, _ := op.(map[string]any)["parameters"].([]any)
			for _, p := range params {
				if m, _ := p.(map[string]any); m != nil && m["in"] == "path" {
					merge(m, stringBounds["."+m["name"].(string)])
				}
			}
		}
	}
}

func merge(into any, from map[string]any) {
	m, _ := into.(map[string]any)
	if m == nil {
		return
	}
	for k, v := range from {
		m[k] = v
	}
}
