package faults

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/seckill/seckill/devkit/devenv"
)

// maxSpans bounds what the receiver keeps (a short sale makes a few thousand).
const maxSpans = 500_000

// span is what the receiver keeps of one exported span.
type span struct {
	service         string // the resource's service.name
	name            string
	trace, id, from string // hex trace id, span id, parent span id ("" for a root)
	kind            tracepb.Span_SpanKind
}

// traceReceiver is an OTLP/gRPC trace receiver (the collector's TraceService, the protocol
// deploy/'s Batcher otlpgrpc speaks to Jaeger): the deploy test points every service's
// Telemetry.Endpoint at it and checks what arrived.
type traceReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	addr string
	srv  *grpc.Server

	mu      sync.Mutex
	spans   []span
	dropped int
	exports int
}

// startTraceReceiver serves the TraceService on a free port of host ("": loopback).
func startTraceReceiver(host string) (*traceReceiver, error) {
	port, err := devenv.FreePort()
	if err != nil {
		return nil, err
	}
	addr := devenv.Loopback(port)
	if host != "" {
		addr = net.JoinHostPort(host, strconv.Itoa(port))
	}
	r := &traceReceiver{addr: addr, srv: grpc.NewServer()}
	lis, err := net.Listen("tcp", r.addr)
	if err != nil {
		return nil, err
	}
	collectortrace.RegisterTraceServiceServer(r.srv, r)
	go func() { _ = r.srv.Serve(lis) }()
	return r, nil
}

func (r *traceReceiver) close() { r.srv.Stop() }

// Export keeps each span with its resource's service.name.
func (r *traceReceiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (
	*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exports++
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				if len(r.spans) >= maxSpans {
					r.dropped++
					continue
				}
				r.spans = append(r.spans, span{service: service, name: sp.GetName(),
					trace: hex.EncodeToString(sp.GetTraceId()), id: hex.EncodeToString(sp.GetSpanId()),
					from: hex.EncodeToString(sp.GetParentSpanId()), kind: sp.GetKind()})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// traceReport is what the receiver holds: spans per service.name, the traces that cross
// from the gateway to the inventory service (an rpc server span whose parent is an api
// span of the same trace), and of those the traces that go on through Kafka to the writer
// (an rpc producer span, and an mq consumer span whose parent is an rpc span, in the trace).
type traceReport struct {
	exports   int
	perName   map[string]int
	traces    int
	crossing  int
	crossName string // one crossing trace's id
	hops      int    // crossing traces that reach the writer through Kafka
	hopsName  string // one of them
	hopsPath  string // its spans, gateway to writer
}

// report sums up the spans: api, rpc and mq are the services' Telemetry.Name.
func (r *traceReceiver) report(names map[string]string) traceReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	api, rpc, mq := names["api"], names["rpc"], names["mq"]
	rep := traceReport{exports: r.exports, perName: map[string]int{}}
	byID := map[string]span{} // trace/span -> span
	traces := map[string]bool{}
	for _, s := range r.spans {
		rep.perName[s.service]++
		traces[s.trace] = true
		byID[s.trace+"/"+s.id] = s
	}
	rep.traces = len(traces)
	parentOf := func(s span, service string) (span, bool) {
		p, ok := byID[s.trace+"/"+s.from]
		return p, ok && s.from != "" && p.service == service
	}
	crossing := map[string]string{} // trace -> its hops so far
	producer := map[string]string{}
	consumer := map[string]string{}
	for _, s := range r.spans {
		switch {
		case s.service == rpc && s.kind == tracepb.Span_SPAN_KIND_SERVER:
			if p, ok := parentOf(s, api); ok {
				path := p.name
				for up, ok := parentOf(p, api); ok; up, ok = parentOf(up, api) {
					path = up.name + " > " + path // the gateway's route, above its zRPC client span
				}
				crossing[s.trace] = api + " " + path + " -> " + rpc + " " + s.name
			}
		case s.service == rpc && s.kind == tracepb.Span_SPAN_KIND_PRODUCER:
			producer[s.trace] = s.name
		case s.service == mq && s.kind == tracepb.Span_SPAN_KIND_CONSUMER:
			if p, ok := parentOf(s, rpc); ok {
				consumer[s.trace] = p.name + " -> " + mq + " " + s.name
			}
		}
	}
	rep.crossing = len(crossing)
	for t, path := range crossing {
		if rep.crossName == "" || t < rep.crossName {
			rep.crossName = t
		}
		if producer[t] == "" || consumer[t] == "" {
			continue
		}
		rep.hops++
		if rep.hopsName == "" || t < rep.hopsName {
			rep.hopsName = t
			rep.hopsPath = path + " ... (" + rpc + " " + producer[t] + ") ... " + consumer[t]
		}
	}
	return rep
}

// traceCheck waits up to wait for spans of every service name of names (kind -> its
// Telemetry.Name) and one trace across the 4 hops (gateway, inventory service, its Kafka
// producer, the writer's consumer), then reports the row.
func (r *traceReceiver) traceCheck(ctx context.Context, names map[string]string, sampler string,
	wait time.Duration) Check {
	var rep traceReport
	var missing []string
	for deadline := time.Now().Add(wait); ; {
		rep = r.report(names)
		missing = missing[:0]
		for _, kind := range []string{"api", "rpc", "mq"} {
			if rep.perName[names[kind]] == 0 {
				missing = append(missing, kind+" ("+names[kind]+")")
			}
		}
		if (len(missing) == 0 && rep.hops > 0) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	var per []string
	for n, c := range rep.perName {
		per = append(per, fmt.Sprintf("%s %d", n, c))
	}
	sort.Strings(per)
	detail := fmt.Sprintf("OTLP/gRPC receiver on %s (Sampler %s as deploy/ sets it): %d exports, %d traces; "+
		"spans by service.name: %s; traces crossing api -> rpc: %d; of those through Kafka to the writer "+
		"(an rpc producer span and an mq consumer span under an rpc span): %d",
		r.addr, sampler, rep.exports, rep.traces, orNone(per), rep.crossing, rep.hops)
	if rep.hopsName != "" {
		detail += " (e.g. " + rep.hopsName + ": " + rep.hopsPath + ")"
	} else if rep.crossName != "" {
		detail += " (a crossing one: " + rep.crossName + ")"
	}
	if len(missing) > 0 {
		detail += "; no spans from " + strings.Join(missing, ", ")
	}
	return check("traces: 4 hops in one trace (gateway, inventory, Kafka producer, writer)",
		len(missing) == 0 && rep.hops > 0, "%s", detail)
}
