package reply

import (
	"regexp"

	"github.com/zeromicro/go-zero/core/logx"
)

// bearerToken matches the credentials of an Authorization header in a dumped request.
var bearerToken = regexp.MustCompile(`(?i)(authorization:[ \t]*bearer[ \t]+)[^\s]+`)

// redactingWriter keeps bearer tokens out of the logs: go-zero's JWT middleware logs the
// whole request, Authorization header included, at error level on every 401 — a buyer
// token presented on a merchant route would land in the logs intact.
type redactingWriter struct{ logx.Writer }

func (w redactingWriter) Error(v any, fields ...logx.LogField) {
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
		return bearerToken.ReplaceAllString(s, "${1}[redacted]")
	}
	return v
}

// RedactLogs wraps go-zero's process-wide log writer (once) so that no bearer token is
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
