package telemetry_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/zeromicro/go-zero/rest/handler"
	"github.com/zeromicro/go-zero/rest/router"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/seckill/seckill/internal/telemetry"
)

const (
	routePath = "/v1/things/:id"
	sampled   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	dropped   = "00-5bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
)

// record installs a provider that follows the caller's sampling decision (go-zero's agent:
// ParentBased), recording into the returned exporter.
func record(t *testing.T) *tracetest.InMemoryExporter {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())),
		sdktrace.WithSyncer(exp))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	return exp
}

// serve builds a router of one route answering 409 (inside trace when it is not nil, else
// inside telemetry.Router) and returns a function serving one request with traceparent tp.
func serve(t testing.TB, goZero bool, ignore ...string) func(tp string) *httptest.ResponseRecorder {
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusConflict) })
	rt := router.NewRouter()
	var err error
	if goZero {
		err = rt.Handle(http.MethodPost, routePath, handler.TraceHandler("svc", routePath,
			handler.WithTraceIgnorePaths(ignore))(h))
	} else {
		err = telemetry.Router("svc", ignore, rt).Handle(http.MethodPost, routePath, h)
	}
	if err != nil {
		t.Fatal(err)
	}
	return func(tp string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/v1/things/7?x=1", strings.NewReader("{}"))
		r.Header.Set("traceparent", tp)
		r.Header.Set("User-Agent", "telemetry-test")
		w := httptest.NewRecorder()
		rt.ServeHTTP(w, r)
		return w
	}
}

// A sampled request's span is go-zero's TraceHandler's: name, kind, parent, attributes,
// status, and the answer's traceparent; an ignored path has none.
func TestRouterSpansAsGoZero(t *testing.T) {
	exp := record(t)
	var spans []tracetest.SpanStub
	var answers []string
	for _, goZero := range []bool{true, false} {
		exp.Reset()
		w := serve(t, goZero)(sampled)
		got := exp.GetSpans()
		if len(got) != 1 {
			t.Fatalf("go-zero %v: %d spans, want 1", goZero, len(got))
		}
		spans, answers = append(spans, got[0]), append(answers, w.Header().Get("traceparent"))
	}
	want, got := spans[0], spans[1]
	attrs := func(s tracetest.SpanStub) []string {
		var out []string
		for _, kv := range s.Attributes {
			out = append(out, string(kv.Key)+"="+kv.Value.Emit())
		}
		slices.Sort(out)
		return out
	}
	if got.Name != want.Name || got.SpanKind != want.SpanKind || !got.Parent.Equal(want.Parent) ||
		got.Status != want.Status || !slices.Equal(attrs(got), attrs(want)) {
		t.Errorf("span %q %s under %s, %v, %v; go-zero's %q %s under %s, %v, %v", got.Name, got.SpanKind,
			got.Parent.SpanID(), got.Status, attrs(got), want.Name, want.SpanKind, want.Parent.SpanID(), want.Status,
			attrs(want))
	}
	for i, tp := range answers {
		if !strings.HasPrefix(tp, sampled[:36]) || !strings.HasSuffix(tp, "-01") {
			t.Errorf("answer %d: traceparent %q, want trace %s sampled", i, tp, sampled[3:35])
		}
	}
	exp.Reset()
	if w := serve(t, false, routePath)(sampled); len(exp.GetSpans()) != 0 || w.Header().Get("traceparent") != "" {
		t.Errorf("ignored path: %d spans, traceparent %q", len(exp.GetSpans()), w.Header().Get("traceparent"))
	}
}

// A request the sampler drops gets its traceparent and no span, and costs fewer allocations
// than through go-zero's TraceHandler, which builds the attribute lists first.
func TestRouterDroppedBuildsNoAttributes(t *testing.T) {
	exp := record(t)
	ours, goZeros := serve(t, false), serve(t, true)
	if w := ours(dropped); len(exp.GetSpans()) != 0 || !strings.HasSuffix(w.Header().Get("traceparent"), "-00") {
		t.Fatalf("dropped: %d spans, traceparent %q", len(exp.GetSpans()), w.Header().Get("traceparent"))
	}
	a := testing.AllocsPerRun(200, func() { ours(dropped) })
	g := testing.AllocsPerRun(200, func() { goZeros(dropped) })
	s := testing.AllocsPerRun(200, func() { ours(sampled) })
	t.Logf("allocations per request: dropped %.0f (go-zero's TraceHandler %.0f), sampled %.0f", a, g, s)
	if a+5 > g || a+5 > s {
		t.Errorf("a dropped request allocates %.0f times, go-zero's %.0f, a sampled one %.0f: the attributes "+
			"were built", a, g, s)
	}
}
