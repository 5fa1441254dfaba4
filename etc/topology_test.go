package etc_test

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"
)

// The compose file runs every service process of multinode/topology.yaml, named as the
// deploy test (devkit/faults) names them: <binary>-1 .. <binary>-N, N the topology's count.
// With TestMetricsReachableByPrometheus (every compose service a scrape target and every
// target a compose service), each process of the topology is a Prometheus target.
func TestComposeRunsTheTopologyInstances(t *testing.T) {
	raw, err := os.ReadFile("../deploy/multinode/topology.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var topo struct {
		Instances struct {
			Inventory int `yaml:"Inventory"`
			Writer    int `yaml:"Writer"`
			Gateway   int `yaml:"Gateway"`
		} `yaml:"Instances"`
	}
	if err := yaml.Unmarshal(raw, &topo); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"rpc": topo.Instances.Inventory, "mq": topo.Instances.Writer, "api": topo.Instances.Gateway}
	got := map[string][]string{}
	for name, s := range loadCompose(t) {
		if bin, _ := seckillConfig(t, name, s); bin != "" {
			got[bin] = append(got[bin], name)
		}
	}
	for bin, n := range want {
		if n < 1 {
			t.Errorf("topology.yaml: %d %s instances", n, bin)
		}
		var names []string
		for i := 1; i <= n; i++ {
			names = append(names, fmt.Sprintf("%s-%d", bin, i))
		}
		have := got[bin]
		sort.Strings(have)
		if fmt.Sprint(have) != fmt.Sprint(names) {
			t.Errorf("docker-compose.yml runs %s %v; topology.yaml has %d: want %v", bin, have, n, names)
		}
		delete(got, bin)
	}
	for bin, names := range got {
		t.Errorf("docker-compose.yml runs %s %v: not in topology.yaml's Instances", bin, names)
	}
}
