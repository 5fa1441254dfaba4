package standalone

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/testenv"
)

func TestTelemetry(t *testing.T) {
	for _, tc := range []struct {
		dest, batcher, endpoint, path string
	}{
		{"otlpgrpc://127.0.0.1:4317", "otlpgrpc", "127.0.0.1:4317", ""},
		{"otlphttp://collector:4318/v1/traces", "otlphttp", "collector:4318", "/v1/traces"},
		{"http://127.0.0.1:9411/api/v2/spans", "zipkin", "http://127.0.0.1:9411/api/v2/spans", ""},
		{"/tmp/spans.jsonl", "file", "/tmp/spans.jsonl", ""},
		{"spans.jsonl", "file", "spans.jsonl", ""},
	} {
		c, err := Telemetry(tc.dest, map[string]string{"k": "v"})
		if err != nil {
			t.Errorf("%s: %v", tc.dest, err)
			continue
		}
		if c.Batcher != tc.batcher || c.Endpoint != tc.endpoint || c.OtlpHttpPath != tc.path ||
			c.Disabled || c.Sampler != 1 || c.Name == "" || c.OtlpHeaders["k"] != "v" {
			t.Errorf("%s: %+v, want %s to %s (path %q), every span", tc.dest, c, tc.batcher, tc.endpoint, tc.path)
		}
	}
	for _, bad := range []string{"", "otlpgrpc://host:4317/v1/traces", "kafka://broker:9092", "otlpgrpc://"} {
		if c, err := Telemetry(bad, nil); err == nil {
			t.Errorf("%q: %+v, want an error", bad, c)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	h, err := ParseHeaders("uptrace-dsn=http://token@localhost:14317/2, x-team = seckill")
	if err != nil || len(h) != 2 || h["uptrace-dsn"] != "http://token@localhost:14317/2" || h["x-team"] != "seckill" {
		t.Fatalf("%v %v", h, err)
	}
	if h, err := ParseHeaders(""); h != nil || err != nil {
		t.Fatalf("empty: %v %v", h, err)
	}
	if _, err := ParseHeaders("novalue"); err == nil {
		t.Fatal("novalue accepted")
	}
}

// Tracing is off as etc/ ships it, and on for all three services with -trace.
func TestBuildConfigsTrace(t *testing.T) {
	for _, dest := range []string{"", "otlpgrpc://127.0.0.1:4317"} {
		sys := &System{RPCAddr: "127.0.0.1:1", RedisAddr: "127.0.0.1:2", MySQLDSN: "root:@tcp(127.0.0.1:3)/x",
			KafkaBrokers: []string{"127.0.0.1:4"}}
		cfg := Config{EtcDir: "../../etc", Trace: dest}
		cfg.defaults()
		if err := sys.buildConfigs(cfg, "127.0.0.1", 5, 6); err != nil {
			t.Fatal(err)
		}
		c := sys.Configs
		for name, tel := range map[string]struct {
			Disabled bool
			Endpoint string
		}{
			"inventory": {c.Inventory.Telemetry.Disabled, c.Inventory.Telemetry.Endpoint},
			"writer":    {c.Writer.Telemetry.Disabled, c.Writer.Telemetry.Endpoint},
			"gateway":   {c.Gateway.Telemetry.Disabled, c.Gateway.Telemetry.Endpoint},
		} {
			if dest == "" && !tel.Disabled || dest != "" && (tel.Disabled || tel.Endpoint != "127.0.0.1:4317") {
				t.Errorf("-trace %q: %s Telemetry %+v", dest, name, tel)
			}
		}
	}
	bad := Config{EtcDir: "../../etc", Trace: "kafka://x:1"}
	bad.defaults()
	if err := (&System{}).buildConfigs(bad, "127.0.0.1", 5, 6); err == nil {
		t.Fatal("a bad -trace accepted")
	}
}

// make run -trace FILE: one reservation's spans, from the gateway's HTTP handler to the
// script's EVALSHA, are in the file once the system is closed, in the trace the gateway
// answered with.
func TestStandaloneTraceToFile(t *testing.T) {
	_, keys := testenv.Redis(t)
	db := testenv.MySQL(t)
	file := filepath.Join(t.TempDir(), "spans.jsonl")
	sys := start(t, Config{RedisAddr: testenv.RedisAddr(), MySQLDSN: db.DSN, KeyPrefix: keys.Prefix, Trace: file})
	closed := false
	defer func() {
		if !closed {
			sys.Close()
		}
	}()
	c := apiclient.New(sys.APIURL, apiclient.Options{Conns: 1})
	defer c.Close()
	ctx, now := context.Background(), time.Now().Unix()
	a, err := c.Create(ctx, sys.MerchantToken, apiclient.NewActivity{SkuID: 1, Name: "traced", Stock: 5,
		StartTime: now - 10, EndTime: now + 3600})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Warmup(ctx, sys.MerchantToken, a.ActivityID); err != nil {
		t.Fatal(err)
	}
	_, m, err := c.Reserve(ctx, sys.BuyerToken, apiclient.ReserveBody(a.ActivityID, 1, "traced-0001"))
	if err != nil {
		t.Fatal(err)
	}
	traceID := strings.Split(m.Header.Get("traceparent"), "-")
	if len(traceID) != 4 {
		t.Fatalf("the reservation's answer has no traceparent: %q", m.Header.Get("traceparent"))
	}
	sys.Close() // flushes the spans
	closed = true

	names := spanNames(t, file, traceID[1])
	for _, want := range []string{"/v1/seckill/orders", "inventory.Inventory/ReserveBatch", "redis[evalsha]"} {
		if !slices.Contains(names, want) {
			t.Errorf("no span %q in trace %s: %q", want, traceID[1], names)
		}
	}
}

// spanNames are the names of the spans of trace traceID in the span file (a Redis span's
// commands appended).
func spanNames(t *testing.T, file, traceID string) []string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var s struct {
			Name        string
			SpanContext struct{ TraceID string }
			Attributes  []struct {
				Key   string
				Value struct{ Value any }
			}
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if s.SpanContext.TraceID != traceID {
			continue
		}
		for _, kv := range s.Attributes {
			if kv.Key == "redis.cmds" {
				s.Name += fmt.Sprint(kv.Value.Value)
			}
		}
		names = append(names, s.Name)
	}
	return names
}
