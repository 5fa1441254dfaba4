package etc_test

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/zeromicro/go-zero/core/service"
	"gopkg.in/yaml.v3"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// serviceConf loads a deploy/multinode file through its service's loader.
func serviceConf(t *testing.T, bin, file string) service.ServiceConf {
	t.Helper()
	var sc service.ServiceConf
	var err error
	switch bin {
	case "rpc":
		var c rpcserver.Config
		c, err = rpcserver.LoadConfig(file)
		sc = c.ServiceConf
	case "api":
		var c apiserver.Config
		c, err = apiserver.LoadConfig(file)
		sc = c.ServiceConf
	case "mq":
		var c mqserver.Config
		c, err = mqserver.LoadConfig(file)
		sc = c.ServiceConf
	default:
		t.Fatalf("%s: unknown binary %s", file, bin)
	}
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return sc
}

// Each service of the compose file serves its metrics on go-zero's DevServer where
// Prometheus can reach it (not loopback: in a container or on another host nothing could
// scrape it), without pprof; every scrape target of deploy/prometheus/prometheus.yml is a
// service's metrics port, and every service is a target.
func TestMetricsReachableByPrometheus(t *testing.T) {
	setSecrets(t)
	ports := map[string]int{} // compose service -> metrics port
	for name, s := range loadCompose(t) {
		bin, file := seckillConfig(t, name, s)
		if bin == "" {
			continue
		}
		sc := serviceConf(t, bin, file)
		d := sc.DevServer
		if !d.Enabled || !d.EnableMetrics || d.MetricsPath != "/metrics" {
			t.Errorf("%s (%s): DevServer %+v: want metrics on /metrics", name, file, d)
		}
		if ip := net.ParseIP(d.Host); d.Host == "localhost" || (ip != nil && ip.IsLoopback()) {
			t.Errorf("%s (%s): metrics on %s: Prometheus cannot reach loopback", name, file, d.Host)
		}
		if d.EnablePprof {
			t.Errorf("%s (%s): pprof on", name, file)
		}
		if sc.Prometheus.Host != "" { //nolint:staticcheck // SA1019: the deprecated agent must stay off
			t.Errorf("%s (%s): the deprecated Prometheus agent is on as well", name, file)
		}
		ports[name] = d.Port
		if hc := s.Healthcheck; hc == nil || !strings.Contains(strings.Join(hc.Test, " "),
			"/dev/tcp/127.0.0.1/"+strconv.Itoa(d.Port)+" ") {
			t.Errorf("%s: its health check does not ask its DevServer (port %d): %+v", name, d.Port, hc)
		}
	}
	if len(ports) == 0 {
		t.Fatal("no seckill service in docker-compose.yml")
	}
	raw, err := os.ReadFile("../deploy/prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	scraped := map[string]bool{}
	for _, j := range p.ScrapeConfigs {
		for _, sc := range j.StaticConfigs {
			for _, target := range sc.Targets {
				host, port, err := net.SplitHostPort(target)
				if err != nil {
					t.Fatalf("%s: target %s: %v", j.JobName, target, err)
				}
				want, ok := ports[host]
				if !ok {
					if strings.HasPrefix(j.JobName, "seckill-") {
						t.Errorf("job %s scrapes %s: no such service in docker-compose.yml", j.JobName, target)
					}
					continue // not ours (Prometheus itself, exporters)
				}
				scraped[host] = true
				if port != strconv.Itoa(want) {
					t.Errorf("job %s scrapes %s, but %s serves metrics on port %d", j.JobName, target, host, want)
				}
			}
		}
	}
	for name := range ports {
		if !scraped[name] {
			t.Errorf("compose service %s is no Prometheus target", name)
		}
	}
}
