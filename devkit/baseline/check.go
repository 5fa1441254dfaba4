package baseline

import (
	"encoding/json"
	"net/http"
)

// Well-formed outcomes: the expected status and a JSON body with the expected content.
// Anything else is counted apart (LoadResult.Other), never as throughput.

// IsReserved: 200 and a JSON body with a non-empty order_no (a reservation, or the echo).
func IsReserved(status int, body []byte) bool {
	var b struct {
		OrderNo string `json:"order_no"`
	}
	return status == http.StatusOK && json.Unmarshal(body, &b) == nil && b.OrderNo != ""
}

// IsSoldOut: 409 and a JSON body with code SOLD_OUT (the gateway's rejection).
func IsSoldOut(status int, body []byte) bool {
	return status == http.StatusConflict && codeIs(body, "SOLD_OUT")
}

// IsBare: 200 and the bare handler's JSON body {"code":"SOLD_OUT"}.
func IsBare(status int, body []byte) bool {
	return status == http.StatusOK && codeIs(body, "SOLD_OUT")
}

func codeIs(body []byte, code string) bool {
	var b struct {
		Code string `json:"code"`
	}
	return json.Unmarshal(body, &b) == nil && b.Code == code
}
