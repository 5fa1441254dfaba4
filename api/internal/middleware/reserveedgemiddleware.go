package middleware

import (
	"bytes"
	"io"
	"net/http"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/api/internal/validate"
	"github.com/seckill/seckill/internal/xerr"
)

// ReserveEdgeMiddleware answers, on the reservation route, what the gateway already knows
// (a sold-out mark, a known window: edge.Marks.Check) before the handler parses the body
// with httpx.Parse, whose reflection dominates a sold-out storm. It answers only when
// the same request through the handler would get the same answer: a buyer's request (the
// BuyerClaim middleware ran), a plain JSON body that validate.ReserveBody decodes exactly
// as httpx.Parse would and that passes validate.Reserve, and a mark that holds — the
// handler's ReserveLogic checks in that order. Every other request goes on to the
// handler with its body intact, so bad input gets the same 4xx as before.
//
// Its answers are written pre-encoded (reply.Prepared: the bytes httpx.ErrorCtx writes
// for them), and a request it answers keeps no copy of its body.
type ReserveEdgeMiddleware struct {
	marks                    *edge.Marks
	soldOut, notStarted, end *reply.Prepared
}

// NewReserveEdgeMiddleware answers from marks; a nil marks (Edge off) answers nothing.
func NewReserveEdgeMiddleware(marks *edge.Marks) *ReserveEdgeMiddleware {
	return &ReserveEdgeMiddleware{marks: marks, soldOut: reply.Prepare(xerr.ErrSoldOut),
		notStarted: reply.Prepare(xerr.ErrNotStarted), end: reply.Prepare(xerr.ErrEnded)}
}

func (m *ReserveEdgeMiddleware) Handle(next http.HandlerFunc) http.HandlerFunc {
	if m.marks == nil {
		return next
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if err := m.answer(r); err != nil {
			m.write(w, r, err)
			return
		}
		next(w, r)
	}
}

// write writes the answer err (one of edge.Marks.Check's).
func (m *ReserveEdgeMiddleware) write(w http.ResponseWriter, r *http.Request, err error) {
	switch err {
	case xerr.ErrSoldOut:
		m.soldOut.Write(r.Context(), w)
	case xerr.ErrNotStarted:
		m.notStarted.Write(r.Context(), w)
	case xerr.ErrEnded:
		m.end.Write(r.Context(), w)
	default:
		httpx.ErrorCtx(r.Context(), w, err)
	}
}

// answer is the gateway's own answer to r, or nil: ask the handler. It may read the body;
// when it returns nil it then leaves r.Body reading the same bytes and ending as the
// original did (an answered request's body is not read again).
func (m *ReserveEdgeMiddleware) answer(r *http.Request) error {
	// httpx.Parse reads a JSON body only with a Content-Length and a JSON content type;
	// a query string goes through its form parsing; an encoded body is decoded by
	// go-zero's gunzip handler to another length.
	if r.ContentLength <= 0 || r.ContentLength > validate.MaxFastReserveBody || r.URL.RawQuery != "" ||
		!plainJSON(r.Header) {
		return nil
	}
	if _, err := auth.UID(r.Context()); err != nil {
		return nil
	}
	body := make([]byte, r.ContentLength)
	n, err := 0, error(nil)
	for n < len(body) && err == nil {
		var k int
		k, err = r.Body.Read(body[n:])
		n += k
	}
	if n == len(body) {
		if req, ok := validate.ReserveBody(body); ok && validate.Reserve(&req) == nil {
			if ans := m.marks.Check(req.ActivityId); ans != nil {
				return ans
			}
		}
	}
	// The handler reads what was read, then the error the read ended with, if any, then
	// whatever the original body still has.
	r.Body = replayBody{Reader: io.MultiReader(bytes.NewReader(body[:n]), &onceErr{err: err}, r.Body), Closer: r.Body}
	return nil
}

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
