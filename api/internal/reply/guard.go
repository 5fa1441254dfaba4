package reply

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/internal/xerr"
)

// Router wraps go-zero's router (rest.WithRouter), outside every route's chain: it bounds the
// body at MaxBytes (inflated, for gzip), reads a JSON body sent without the JSON content type
// (415 when it is not JSON) and gives go-zero's bare error statuses a {"code","msg"} body.
type Router struct {
	httpx.Router
	MaxBytes int64
}

// ServeHTTP implements http.Handler.
func (rt Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rt.MaxBytes > 0 && r.Body != nil && r.Body != http.NoBody {
		r.Body = http.MaxBytesReader(w, r.Body, rt.MaxBytes)
	}
	wasGzip := r.Body != nil && r.Body != http.NoBody && strings.Contains(r.Header.Get("Content-Encoding"), "gzip")
	if !inflate(w, r, rt.MaxBytes) || !readAsJSON(w, r) {
		return
	}
	if wasGzip {
		r = r.WithContext(context.WithValue(r.Context(), inflatedKey{}, true))
	}
	g := &guardWriter{ResponseWriter: w}
	rt.Router.ServeHTTP(g, r)
	g.finish()
}

type inflatedKey struct{}

// Inflated reports whether the request of ctx came gzip-compressed (the router inflated it and
// dropped its Content-Encoding): a route signed over the sent bytes refuses it.
func Inflated(ctx context.Context) bool {
	v, _ := ctx.Value(inflatedKey{}).(bool)
	return v
}

type guardWriter struct {
	http.ResponseWriter
	held        int // an error status written without a JSON content type, body pending
	wroteHeader bool
}

func (g *guardWriter) WriteHeader(code int) {
	if g.wroteHeader || g.held != 0 {
		return
	}
	if code >= http.StatusBadRequest && !isJSON(g.Header()) {
		g.held = code
		return
	}
	g.wroteHeader = true
	retryAfter(g.Header(), code)
	g.ResponseWriter.WriteHeader(code)
}

// retryAfter gives a 429 or a 503 (go-zero's own shedding and timeout answers included) a
// Retry-After of one second unless the answer set its own (docs/API.md "Errors").
func retryAfter(h http.Header, code int) {
	if (code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable) && h.Get("Retry-After") == "" {
		h.Set("Retry-After", "1")
	}
}

func (g *guardWriter) Write(p []byte) (int, error) {
	if g.held != 0 {
		return len(p), nil // a plain-text error body: replaced in finish
	}
	g.wroteHeader = true
	return g.ResponseWriter.Write(p)
}

// Flush passes through unless an error body is pending.
func (g *guardWriter) Flush() {
	if f, ok := g.ResponseWriter.(http.Flusher); ok && g.held == 0 {
		f.Flush()
	}
}

// Hijack passes through: go-zero's timeout writer hijacks only a writer that is a Hijacker
// (a streamed answer that fails mid-way breaks its connection, Abort).
func (g *guardWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(g.ResponseWriter).Hijack()
}

// Unwrap lets http.ResponseController reach the connection.
func (g *guardWriter) Unwrap() http.ResponseWriter { return g.ResponseWriter }

func (g *guardWriter) finish() {
	if g.held != 0 {
		writeStatus(g.ResponseWriter, g.held, forStatus(g.held))
	}
}

// inflate replaces a gzip body (which go-zero's gunzip handler would inflate without a
// bound) by its inflated bytes, at most maxBytes of them; otherwise it answers (413, 400).
func inflate(w http.ResponseWriter, r *http.Request, maxBytes int64) bool {
	if r.Body == nil || r.Body == http.NoBody || !strings.Contains(r.Header.Get("Content-Encoding"), "gzip") {
		return true
	}
	defer r.Body.Close()
	zr, err := gzip.NewReader(r.Body)
	var body []byte
	if err == nil {
		var in io.Reader = zr
		if maxBytes > 0 {
			in = io.LimitReader(zr, maxBytes+1)
		}
		body, err = io.ReadAll(in)
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge) || maxBytes > 0 && int64(len(body)) > maxBytes:
		Write(w, xerr.Newf(xerr.TooLarge, "request body larger than %d bytes", maxBytes))
		return false
	case err != nil:
		Write(w, xerr.New(xerr.InvalidArgument, "the gzip request body does not inflate"))
		return false
	}
	r.Header.Del("Content-Encoding")
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return true
}

// readAsJSON makes a body without the JSON content type readable by httpx.Parse when it is
// JSON; otherwise it answers (415, or 413 over MaxBytes) and returns false.
func readAsJSON(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || isJSON(r.Header) {
		return true
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			Write(w, xerr.New(xerr.TooLarge, "request body too large"))
		} else {
			Write(w, xerr.New(xerr.InvalidArgument, "cannot read the request body"))
		}
		return false
	}
	if len(bytes.TrimSpace(body)) == 0 {
		r.Body, r.ContentLength = http.NoBody, 0
		return true
	}
	if !json.Valid(body) {
		ct := r.Header.Get("Content-Type")
		if ct == "" {
			ct = "none"
		}
		Write(w, xerr.New(xerr.UnsupportedMedia, "the request body must be JSON sent with "+
			"\"Content-Type: application/json\" (got Content-Type: "+Clip(ct)+")"))
		return false
	}
	r.Header.Set("Content-Type", "application/json")
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return true
}

func jsonBody(e *xerr.Error) ([]byte, error) {
	return json.Marshal(Body{Code: string(e.Code), Msg: e.Msg})
}
