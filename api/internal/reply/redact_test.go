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
func (c *captured) Info(v any, _ ...logx.LogField)  { c.lines = append(c.lines, v.(string)) }

func TestRedactingWriterDropsCredentials(t *testing.T) {
	c := &captured{}
	w := redactingWriter{c}
	dump := "slow request\n=> POST /v1/admin/activities HTTP/1.1\r\n" +
		"Host: 127.0.0.1:8888\r\nAuthorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJ1aWQiOjF9.c2lnbmF0dXJl\r\n" +
		"authorization:bearer second.token.here\r\n" +
		"Authorization: eyJbare.token.withoutbearer\r\n" +
		"Cookie: session=eyJcookie.token; other=1\r\n\r\n{}"
	w.Info(dump)
	got := c.lines[0]
	for _, secret := range []string{"eyJ", "second.token.here", "session="} {
		if strings.Contains(got, secret) {
			t.Fatalf("%q left in the log: %q", secret, got)
		}
	}
	if strings.Count(got, "[redacted]") != 4 || !strings.Contains(got, "Host: 127.0.0.1:8888") {
		t.Fatalf("redaction took too much or too little: %q", got)
	}
}

// go-zero's JWT middleware logs every 401 with the whole request, body included: that
// line is dropped (Unauthorized logs one line of its own).
func TestRedactingWriterDropsGoZeroAuthDump(t *testing.T) {
	c := &captured{}
	w := redactingWriter{c}
	w.Error("authorize failed: token is expired\n=> POST /v1/admin/activities HTTP/1.1\r\n" +
		"Host: x\r\n\r\n{\"flood\": \"" + strings.Repeat("A", 1000) + "\"}")
	w.Error("another error")
	if len(c.lines) != 1 || c.lines[0] != "another error" {
		t.Fatalf("got %q", c.lines)
	}
}
