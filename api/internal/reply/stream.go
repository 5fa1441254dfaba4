package reply

import (
	"mime"
	"net/http"
	"strings"
)

// CSVType is the content type of a CSV answer.
const CSVType = "text/csv; charset=utf-8"

// WantsCSV reports whether r's Accept header names text/csv (the orders list's CSV export).
func WantsCSV(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if t, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && t == "text/csv" {
			return true
		}
	}
	return false
}

// Flush sends what w holds to the client now (through go-zero's timeout writer, which holds
// everything written until a Flush).
func Flush(w http.ResponseWriter) error {
	return http.NewResponseController(w).Flush()
}

// Abort breaks the connection of a streamed answer that failed after its status went out: the
// client sees the connection end without the final chunk (an unexpected EOF), never a short
// 200. go-zero's recover middleware swallows panic(http.ErrAbortHandler) and lets the answer
// end cleanly, so the connection is hijacked and closed; only when that fails is it the panic.
func Abort(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}
