package reply_test

import (
	"context"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/internal/xerr"
)

// errorsCounted is seckill_api_errors_total{code}.
func errorsCounted(t *testing.T, code xerr.Code) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "seckill_api_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabel(m, "code", string(code)) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// TestPreparedIsErrorCtx: a prepared answer writes the status, headers and body bytes
// httpx.ErrorCtx writes for the same error with ErrorHandler installed, and counts it
// the same, for the edge's answers (sold out, not started, ended) and other codes.
func TestPreparedIsErrorCtx(t *testing.T) {
	httpx.SetErrorHandlerCtx(reply.ErrorHandler)
	for _, e := range []*xerr.Error{
		xerr.ErrSoldOut, xerr.ErrNotStarted, xerr.ErrEnded,
		xerr.New(xerr.RateLimited, "too many requests"),
		xerr.New(xerr.InvalidArgument, `a <b> & "c" \ é`), // jsonx's escaping
	} {
		generic := httptest.NewRecorder()
		before := errorsCounted(t, e.Code)
		httpx.ErrorCtx(context.Background(), generic, e)
		counted := errorsCounted(t, e.Code) - before

		p := reply.Prepare(e)
		prepared := httptest.NewRecorder()
		before = errorsCounted(t, e.Code)
		p.Write(context.Background(), prepared)
		if got := errorsCounted(t, e.Code) - before; got != counted || got != 1 {
			t.Errorf("%s: counted %v, ErrorCtx %v", e.Code, got, counted)
		}
		if prepared.Code != generic.Code || !reflect.DeepEqual(prepared.Header(), generic.Header()) ||
			prepared.Body.String() != generic.Body.String() {
			t.Errorf("%s: prepared %d %v %q; ErrorCtx %d %v %q", e.Code, prepared.Code, prepared.Header(), prepared.Body,
				generic.Code, generic.Header(), generic.Body)
		}
		// A second answer is the same bytes (nothing of the first is kept in the writer).
		again := httptest.NewRecorder()
		p.Write(context.Background(), again)
		if again.Body.String() != generic.Body.String() {
			t.Errorf("%s: second answer %q", e.Code, again.Body)
		}
	}
}
