package pipelinetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/zrpc"
	"go.opentelemetry.io/otel"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/devkit/pipelinetest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/rpc/inventoryclient"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// TestBackgroundWorkStartsNoTraceOfItsOwn runs the inventory service (relay, Acker, draw
// loop, probes) and the writer with every span recorded, through one sampled reservation,
// one not sampled and a second of idle ticks: every span belongs to the sampled request's
// trace. go-zero's Redis hook and sqlx start a root span for a call whose context has no
// span: the background loops' calls (the draw loop's active list every 200 ms, the relay's
// reads, the Acker's checks) and the writer's transaction of an unsampled event each made a
// trace of their own, which belonged to no request (event.Untraced; DESIGN "Traces").
func TestBackgroundWorkStartsNoTraceOfItsOwn(t *testing.T) {
	p := pipelinetest.Start(t, pipelinetest.Options{Inventory: func(c *rpcserver.Config) {
		c.Telemetry = testenv.Telemetry()
	}})
	aid := p.Activity(10, 1, 600, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	cli, err := zrpc.NewClient(zrpc.RpcClientConf{Endpoints: []string{p.RPC.ListenOn}, NonBlock: true, Timeout: 10000,
		Middlewares: zrpc.ClientMiddlewaresConf{Trace: true}}) // the caller's trace context sent on
	if err != nil {
		t.Fatal(err)
	}
	inv := inventoryclient.NewInventory(cli)
	exp := testenv.RecordSpans(t)

	ctx, req := otel.Tracer("test").Start(context.Background(), "request")
	reserve := func(ctx context.Context, uid int64) {
		_, err := inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1,
			RequestId: fmt.Sprintf("background-trace-%d", uid)})
		if err != nil {
			t.Fatal(err)
		}
	}
	reserve(ctx, 1)
	req.End()
	unsampled := oteltrace.ContextWithSpanContext(context.Background(), oteltrace.NewSpanContext(
		oteltrace.SpanContextConfig{TraceID: oteltrace.TraceID{9, 8, 7}, SpanID: oteltrace.SpanID{6, 5, 4}}))
	reserve(unsampled, 2)
	// The writer applies both (the unsampled one in a transaction of no sampled event).
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var n int
		if err := p.DB.DB.QueryRow("SELECT COUNT(*) FROM seckill_order WHERE activity_id = ?", aid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer applied %d of 2 orders", n)
		}
	}
	time.Sleep(time.Second) // five ticks of the draw loop, relay refreshes

	spans := exp.GetSpans()
	var inRequest int
	for _, s := range spans {
		switch {
		case s.SpanContext.TraceID() == req.SpanContext().TraceID():
			inRequest++
		case !s.Parent.IsValid() && s.Name == "kafka.produce" && len(s.Links) > 0:
			// the relay's produce: a root linked to its messages' traces (DESIGN "Traces")
		default:
			t.Errorf("span %q (%s, parent %v) belongs to no request", s.Name, s.SpanKind, s.Parent.SpanID())
		}
	}
	if inRequest < 4 {
		t.Fatalf("the sampled request's trace has %d spans of %d recorded, want its zRPC, script and Redis spans",
			inRequest, len(spans))
	}
	t.Logf("%d spans, %d in the request's trace", len(spans), inRequest)
}
