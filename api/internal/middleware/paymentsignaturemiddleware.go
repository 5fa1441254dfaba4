package middleware

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/internal/paysign"
	"github.com/seckill/seckill/internal/xerr"
)

var (
	errPaymentUnsigned = xerr.New(xerr.Unauthorized, "the notification is not signed, or not correctly")
	errPaymentStale    = xerr.New(xerr.Unauthorized, "the notification's timestamp is more than 300 s from now")
	errPaymentOff      = xerr.New(xerr.Unauthorized, "payment notifications are not configured (PaymentAuth.Secret)")
	errPaymentEncoded  = xerr.New(xerr.InvalidArgument,
		"a compressed notification is refused: the signature covers the body's exact bytes")
)

// PaymentSignatureMiddleware lets through only notifications signed with the payment secret
// within the window; the handler then reads the very bytes it checked.
type PaymentSignatureMiddleware struct {
	secret []byte // empty: every notification is refused
	now    func() time.Time
}

// NewPaymentSignatureMiddleware checks signatures made with secret ("" refuses all).
func NewPaymentSignatureMiddleware(secret string) *PaymentSignatureMiddleware {
	return &PaymentSignatureMiddleware{secret: []byte(secret), now: time.Now}
}

func (m *PaymentSignatureMiddleware) Handle(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, err := m.check(r)
		if err != nil {
			if xerr.CodeOf(err) == xerr.Unauthorized {
				reply.LogUnauthorized(r, err.Error())
			}
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next(w, r)
	}
}

// check reads r's body and returns it when r is a signed notification within the window.
func (m *PaymentSignatureMiddleware) check(r *http.Request) ([]byte, error) {
	if enc := r.Header.Get("Content-Encoding"); reply.Inflated(r.Context()) || enc != "" &&
		!strings.EqualFold(enc, "identity") {
		return nil, errPaymentEncoded
	}
	if len(m.secret) == 0 {
		return nil, errPaymentOff
	}
	ts := r.Header.Get(paysign.HeaderTimestamp)
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return nil, errPaymentUnsigned
	}
	if !paysign.Fresh(time.Unix(sent, 0), m.now()) {
		return nil, errPaymentStale
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, xerr.New(xerr.InvalidArgument, "the body could not be read")
	}
	if !paysign.Valid(m.secret, ts, body, r.Header.Get(paysign.HeaderSignature)) {
		return nil, errPaymentUnsigned
	}
	return body, nil
}
