package faults

import (
	"path/filepath"
	"testing"
)

// TestClusterTopologyOverride: without Options.Topology the cluster runs deploy/'s counts;
// with it, the override, checked for what StartCluster needs.
func TestClusterTopologyOverride(t *testing.T) {
	deploy := filepath.Join("..", "..", "deploy")
	file, err := LoadTopology(filepath.Join(deploy, "multinode", "topology.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := clusterTopology(deploy, nil)
	if err != nil || got != file {
		t.Fatalf("no override: %+v, %v; want the file's %+v", got, err, file)
	}
	one := file
	one.Redis.ReplicasPerMaster = 0
	one.Instances.Inventory, one.Instances.Writer, one.Instances.Gateway = 1, 1, 1
	if got, err = clusterTopology(deploy, &one); err != nil || got != one {
		t.Fatalf("override %+v: got %+v, %v", one, got, err)
	}
	for name, change := range map[string]func(*Topology){
		"no gateway":       func(t *Topology) { t.Instances.Gateway = 0 },
		"no writer":        func(t *Topology) { t.Instances.Writer = 0 },
		"no rpc":           func(t *Topology) { t.Instances.Inventory = 0 },
		"two masters":      func(t *Topology) { t.Redis.Masters = 2 },
		"no partitions":    func(t *Topology) { t.Kafka.Partitions = 0 },
		"replicas below 0": func(t *Topology) { t.Redis.ReplicasPerMaster = -1 },
	} {
		bad := one
		change(&bad)
		if _, err := clusterTopology(deploy, &bad); err == nil {
			t.Errorf("%s (%+v): accepted", name, bad)
		}
	}
}
