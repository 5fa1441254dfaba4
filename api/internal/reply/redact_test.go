package reply

import (
	"strings"
	"testing"

	"github.com/zeromicro/go-zero/core/logx"
)

type captured struct {
	logx.Writer
	lines []string
}

func (c *captured) Error(v any, _ ...logx.LogField) { c.lines = append(c.lines, v.(string)) }

func TestRedactingWriterDropsBearerTokens(t *testing.T) {
	c := &captured{}
	w := redactingWriter{c}
	dump := "authorize failed: token is expired\n=> POST /v1/admin/activities HTTP/1.1\r\n" +
		"Host: 127.0.0.1:8888\r\nAuthorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJ1aWQiOjF9.c2lnbmF0dXJl\r\n" +
		"authorization:bearer second.token.here\r\n\r\n{}"
	w.Error(dump)
	got := c.lines[0]
	if strings.Contains(got, "eyJ") || strings.Contains(got, "second.token.here") {
		t.Fatalf("token left in the log: %q", got)
	}
	if strings.Count(got, "[redacted]") != 2 || !strings.Contains(got, "Host: 127.0.0.1:8888") {
		t.Fatalf("redaction took too much or too little: %q", got)
	}
}
