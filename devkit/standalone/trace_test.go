package standalone

import (
	"testing"
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
