package standalone

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/zeromicro/go-zero/core/trace"
)

// traceName is the service name of the spans of a standalone system: one process, and
// go-zero starts one trace agent per process (the first service's Telemetry holds for all).
const traceName = "seckill-standalone"

// Telemetry is go-zero's Telemetry that sends every span to dest: otlpgrpc://host:port,
// otlphttp://host:port[/path] (an OpenTelemetry collector or Jaeger), zipkin's
// http(s)://host:port/api/v2/spans, or else a file (one JSON span per line). headers go
// with every OTLP export.
func Telemetry(dest string, headers map[string]string) (trace.Config, error) {
	c := trace.Config{Name: traceName, Sampler: 1, OtlpHeaders: headers}
	u, err := url.Parse(dest)
	switch {
	case dest == "":
		return c, fmt.Errorf("trace: no destination")
	case err == nil && (u.Scheme == "otlpgrpc" || u.Scheme == "otlphttp") && u.Host != "":
		c.Batcher, c.Endpoint, c.OtlpHttpPath = u.Scheme, u.Host, u.Path
		if u.Scheme == "otlpgrpc" && u.Path != "" {
			return c, fmt.Errorf("trace: %s: an OTLP gRPC endpoint has no path", dest)
		}
	case err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "":
		c.Batcher, c.Endpoint = "zipkin", dest
	case strings.Contains(dest, "://"):
		return c, fmt.Errorf("trace: %s: want otlpgrpc://, otlphttp://, http(s):// (zipkin) or a file", dest)
	default:
		c.Batcher, c.Endpoint = "file", dest
	}
	return c, nil
}

// ParseHeaders reads "k=v,k2=v2" (the OTLP headers of make run's -trace-headers).
func ParseHeaders(s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	h := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("trace headers: %q is not key=value", kv)
		}
		h[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return h, nil
}
