package edge

import (
	"bytes"
	"io"
	"net/http"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/api/internal/validate"
)

// Decode is r's reservation: a plain JSON body decoded without reflection
// (validate.ReserveBody), anything else by go-zero's httpx.Parse from the same bytes; err is
// Parse's answer. With plainOnly (in front of go-zero's chain, whose handlers bound and inflate
// bodies) it decodes only a plain body: !ok leaves r's body as Parse would read it. A body it
// decoded stays readable, as read.
func Decode(r *http.Request, plainOnly bool) (req types.ReserveReq, ok bool, err error) {
	if req, body, ok := decodePlain(r); ok {
		replay(r, body)
		return req, true, nil
	}
	if plainOnly {
		return req, false, nil
	}
	if err = httpx.Parse(r, &req); err != nil {
		return req, false, err
	}
	return req, true, nil
}

// decodePlain decodes r's body (returned) when it is a plain JSON reservation
// (validate.ReserveBody); otherwise it leaves r's body as httpx.Parse would have read it: what was read, then the
// error the read ended with, if any, then whatever the original body still has.
func decodePlain(r *http.Request) (req types.ReserveReq, body []byte, ok bool) {
	// httpx.Parse reads a JSON body only with a Content-Length and a JSON content type;
	// a query string goes through its form parsing; an encoded body is decoded by
	// go-zero's gunzip handler to another length.
	if r.ContentLength <= 0 || r.ContentLength > validate.MaxFastReserveBody || r.URL.RawQuery != "" ||
		!plainJSON(r.Header) {
		return req, nil, false
	}
	body = make([]byte, r.ContentLength)
	n, err := 0, error(nil)
	for n < len(body) && err == nil {
		var k int
		k, err = r.Body.Read(body[n:])
		n += k
	}
	if n == len(body) {
		if req, ok = validate.ReserveBody(body); ok {
			return req, body, true
		}
	}
	r.Body = replayBody{Reader: io.MultiReader(bytes.NewReader(body[:n]), &onceErr{err: err}, r.Body),
		Closer: r.Body}
	return req, nil, false
}

// replay gives the body decodePlain decoded back, then whatever the original
// body still has (as io.MultiReader of the two would, in one allocation: every reservation
// the front answers from a mark pays it).
func replay(r *http.Request, body []byte) {
	r.Body = &replayed{body: body, rest: r.Body}
}

// replayed reads body, then rest, until rest's io.EOF; Close closes rest.
type replayed struct {
	body []byte
	rest io.ReadCloser
	eof  bool
}

func (b *replayed) Read(p []byte) (int, error) {
	if len(b.body) > 0 {
		n := copy(p, b.body)
		b.body = b.body[n:]
		return n, nil
	}
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.rest.Read(p)
	b.eof = err == io.EOF
	return n, err
}

func (b *replayed) Close() error { return b.rest.Close() }

func plainJSON(h http.Header) bool {
	if len(h.Values("Content-Encoding")) > 0 {
		return false
	}
	switch h.Get("Content-Type") {
	case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8":
		return true
	}
	return false
}

type replayBody struct {
	io.Reader
	io.Closer
}

// onceErr returns err on its first read (nil: io.EOF, so that io.MultiReader moves on),
// then io.EOF.
type onceErr struct{ err error }

func (e *onceErr) Read([]byte) (int, error) {
	err := e.err
	e.err = nil
	if err == nil || err == io.EOF {
		return 0, io.EOF
	}
	return 0, err
}
