package etc_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// entrypointScript is a service's `sh -c` / `bash -c` script, or "".
func entrypointScript(s composeService) string {
	var argv []string
	if s.Entrypoint.Decode(&argv) != nil || len(argv) < 3 || argv[1] != "-c" {
		return ""
	}
	return argv[2]
}

// The compose file runs the Redis Cluster of multinode/topology.yaml (masters with their
// replicas); every service waits for what it depends on by its health check or its
// completion, never a fixed sleep; the services log to stdout.
func TestComposeRedisReplicasAndHealth(t *testing.T) {
	raw, err := os.ReadFile("../deploy/multinode/topology.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var topo struct {
		Redis struct {
			Masters           int `yaml:"Masters"`
			ReplicasPerMaster int `yaml:"ReplicasPerMaster"`
		} `yaml:"Redis"`
	}
	if err := yaml.Unmarshal(raw, &topo); err != nil {
		t.Fatal(err)
	}
	services := loadCompose(t)
	var nodes []string
	for name, s := range services {
		if strings.HasPrefix(s.Image, "redis:") && len(s.Command) > 0 && s.Command[0] == "redis-server" {
			nodes = append(nodes, name)
		}
	}
	if want := topo.Redis.Masters * (1 + topo.Redis.ReplicasPerMaster); len(nodes) != want {
		t.Errorf("%d Redis nodes %v, want %d masters x (1 + %d replicas)", len(nodes), nodes,
			topo.Redis.Masters, topo.Redis.ReplicasPerMaster)
	}
	initScript := entrypointScript(services["redis-cluster-init"])
	if !strings.Contains(initScript, fmt.Sprintf("--cluster-replicas %d ", topo.Redis.ReplicasPerMaster)) {
		t.Errorf("redis-cluster-init does not create %d replicas per master: %s", topo.Redis.ReplicasPerMaster, initScript)
	}
	for _, n := range nodes {
		argv := strings.Join(services[n].Command, " ")
		if topo.Redis.ReplicasPerMaster > 0 && (!strings.Contains(argv, "--masteruser admin") ||
			!strings.Contains(argv, "--masterauth ")) {
			t.Errorf("%s: a replica cannot authenticate to its master (the default user is off): %s", n, argv)
		}
		if !strings.Contains(initScript, "getent hosts "+n+" ") {
			t.Errorf("redis-cluster-init leaves %s out of the cluster", n)
		}
	}
	for name, s := range services {
		if strings.HasPrefix(strings.TrimSpace(entrypointScript(s)), "sleep") {
			t.Errorf("%s waits with a fixed sleep: %s", name, entrypointScript(s))
		}
		if strings.HasPrefix(s.Image, "quay.io/coreos/etcd:") && s.Entrypoint.Kind != 0 {
			t.Errorf("%s: etcd's image (>= 3.5.7) is distroless: no shell runs its entrypoint", name)
		}
		checkDependsOn(t, name, s, services)
	}
	setSecrets(t)
	for _, f := range []string{"rpc.yaml", "api.yaml", "mq.yaml"} {
		bin := strings.TrimSuffix(f, ".yaml")
		if l := serviceConf(t, bin, "../deploy/multinode/"+f).Log; l.Mode != "console" || l.Encoding != "json" {
			t.Errorf("%s: Log %s/%s, want JSON on stdout (console, json)", f, l.Mode, l.Encoding)
		}
	}
}

// checkDependsOn: each dependency names a condition, service_healthy only on a service
// with a health check, service_completed_successfully only on a one-shot (restart "no" or
// on-failure).
func checkDependsOn(t *testing.T, name string, s composeService, services map[string]composeService) {
	t.Helper()
	if s.DependsOn.Kind == 0 {
		return
	}
	var deps map[string]struct {
		Condition string `yaml:"condition"`
	}
	if err := s.DependsOn.Decode(&deps); err != nil {
		t.Errorf("%s: depends_on without conditions (a list): %v", name, err)
		return
	}
	for dep, c := range deps {
		d, ok := services[dep]
		checked := d.Healthcheck != nil && !d.Healthcheck.Disable && len(d.Healthcheck.Test) > 0
		switch {
		case !ok:
			t.Errorf("%s depends on %s: no such service", name, dep)
		case c.Condition == "service_healthy" && !checked:
			t.Errorf("%s waits for %s to be healthy: %s has no health check", name, dep, dep)
		case c.Condition == "service_completed_successfully":
		case c.Condition == "service_started" && dep == "prometheus":
			// Grafana only needs Prometheus's address.
		case c.Condition != "service_healthy":
			t.Errorf("%s depends on %s with condition %q: want service_healthy or service_completed_successfully",
				name, dep, c.Condition)
		}
	}
}
