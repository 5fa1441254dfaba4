package telemetry_test

import (
	"testing"

	"github.com/zeromicro/go-zero/core/trace"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/internal/telemetry"
)

// The trace middleware stays on only with an exporter, and is never turned on.
func TestTraceOnlyWhenExporting(t *testing.T) {
	for _, tc := range []struct {
		tel        trace.Config
		configured bool // Middlewares.Trace before
		want       bool
	}{
		{trace.Config{Disabled: true}, true, false},
		{trace.Config{Disabled: true, Endpoint: "jaeger:4317"}, true, false},
		{trace.Config{}, true, false}, // on, but no exporter: spans would go nowhere
		{trace.Config{Endpoint: "jaeger:4317"}, true, true},
		{trace.Config{Endpoint: "/tmp/spans.json", Batcher: "file"}, true, true},
		{trace.Config{Endpoint: "jaeger:4317"}, false, false}, // turned off by hand stays off
	} {
		if got := telemetry.Exports(tc.tel); tc.configured && got != tc.want {
			t.Errorf("Exports(%+v) = %v", tc.tel, got)
		}
		var r rest.RestConf
		r.Telemetry, r.Middlewares.Trace = tc.tel, tc.configured
		telemetry.Rest(&r)
		var s zrpc.RpcServerConf
		s.Telemetry, s.Middlewares.Trace = tc.tel, tc.configured
		telemetry.Server(&s)
		var c zrpc.RpcClientConf
		c.Middlewares.Trace = tc.configured
		telemetry.Client(&c, tc.tel)
		if r.Middlewares.Trace != tc.want || s.Middlewares.Trace != tc.want || c.Middlewares.Trace != tc.want {
			t.Errorf("%+v, configured %v: rest %v, server %v, client %v; want %v", tc.tel, tc.configured,
				r.Middlewares.Trace, s.Middlewares.Trace, c.Middlewares.Trace, tc.want)
		}
	}
}
