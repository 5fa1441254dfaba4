package reply

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zeromicro/go-zero/core/jsonx"
	"github.com/zeromicro/go-zero/core/logc"
	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/internal/xerr"
)

// jsonContentType is the Content-Type value of every prepared answer (httpx.ContentType is
// canonical already), shared by them: its capacity is its length.
var jsonContentType = []string{httpx.JsonContentType}

// Prepared is one error answer encoded once, written as httpx.ErrorCtx writes it with
// ErrorHandler installed and counted alike (TestPreparedIsErrorCtx compares the bytes).
type Prepared struct {
	status int
	body   []byte
	count  prometheus.Counter
}

// Prepare encodes the answer to e. An INTERNAL error is not prepared (ErrorHandler logs
// it at each answer): it panics.
func Prepare(e *xerr.Error) *Prepared {
	if e.Code == xerr.Internal {
		panic("reply: an INTERNAL answer is not prepared")
	}
	body, err := jsonx.Marshal(Body{Code: string(e.Code), Msg: e.Msg})
	if err != nil {
		panic(err)
	}
	return &Prepared{status: xerr.HTTPStatus(e.Code), body: body, count: errorsTotal.WithLabelValues(string(e.Code))}
}

// Write writes the answer to w (as httpx.WriteJsonCtx, logging a failed write with ctx).
func (p *Prepared) Write(ctx context.Context, w http.ResponseWriter) {
	p.count.Inc()
	// As Header.Set would, without a new []string per answer: the values are never written in
	// place (Set replaces them, Add appends to a full slice, hence a copy).
	w.Header()[httpx.ContentType] = jsonContentType
	w.WriteHeader(p.status)
	if n, err := w.Write(p.body); err != nil {
		if !errors.Is(err, http.ErrHandlerTimeout) {
			logc.Error(ctx, fmt.Errorf("write response failed, error: %w", err))
		}
	} else if n < len(p.body) {
		logc.Error(ctx, fmt.Errorf("actual bytes: %d, written bytes: %d", len(p.body), n))
	}
}
