package reply

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/zeromicro/go-zero/core/logc"
	"github.com/zeromicro/go-zero/core/logx"
)

// credentialHeader matches the value of a header that carries credentials in a dumped
// request: Authorization with or without "Bearer " (go-zero's extractor accepts a bare
// token), Cookie, Set-Cookie, Proxy-Authorization.
var credentialHeader = regexp.MustCompile(`(?im)^((?:proxy-)?authorization|cookie|set-cookie)([ \t]*:[ \t]*)[^\r\n]*`)

// authFailedPrefix starts the line go-zero's JWT middleware logs, at error level, on
// every 401: the reason, then the whole dumped request (headers and body).
const authFailedPrefix = "authorize failed: "

// redactingWriter keeps credentials and request bodies out of the logs. go-zero's line on
// each 401 is dropped: Unauthorized logs one line per 401 instead, without headers or body
// (an unauthenticated client must not be able to write its bodies into the logs).
type redactingWriter struct{ logx.Writer }

func (w redactingWriter) Error(v any, fields ...logx.LogField) {
	if s, ok := v.(string); ok && strings.HasPrefix(s, authFailedPrefix) {
		return
	}
	w.Writer.Error(redact(v), fields...)
}

func (w redactingWriter) Info(v any, fields ...logx.LogField) {
	w.Writer.Info(redact(v), fields...)
}

func (w redactingWriter) Debug(v any, fields ...logx.LogField) {
	w.Writer.Debug(redact(v), fields...)
}

func redact(v any) any {
	if s, ok := v.(string); ok {
		return escapeControl(credentialHeader.ReplaceAllString(s, "${1}${2}[redacted]"))
	}
	return v
}

// escapeControl writes control characters as Go escapes (\n, \x1b): nothing logged can
// start a line or drive a terminal.
func escapeControl(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// RedactLogs wraps go-zero's process-wide log writer (once) so that no credential is
// written. Call it after the server's logging is set up.
func RedactLogs() {
	w := logx.Reset()
	switch w.(type) {
	case nil:
		return
	case redactingWriter:
		logx.SetWriter(w)
	default:
		logx.SetWriter(redactingWriter{w})
	}
}

// LogUnauthorized is the one log line of a 401: method, path, client and reason; never a
// header or the body.
func LogUnauthorized(r *http.Request, reason string) {
	logc.Infof(r.Context(), "unauthorized: %s %s from %s: %s", r.Method, r.URL.Path, r.RemoteAddr, reason)
}
