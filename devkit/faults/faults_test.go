package faults

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// TestFaultSuite runs every row at the short scale against the real services (separate
// processes over a private Redis, MariaDB and kfake): every row must PASS.
func TestFaultSuite(t *testing.T) { runTable(t, false, nil, len(Rows()), 15*time.Minute) }

// TestClusterFaultSuite runs the cluster table at the short scale on the deploy/multinode
// topology (Redis Cluster with replicas, etcd, several of each service): every row must
// PASS.
func TestClusterFaultSuite(t *testing.T) {
	runTable(t, true, nil, len(ClusterRows()), 10*time.Minute)
}

func runTable(t *testing.T, cluster bool, only []string, rows int, bound time.Duration) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var log strings.Builder
	results, err := Run(ctx, Config{Options: Options{Root: root, Install: true, Log: &log}, Scale: Short,
		Cluster: cluster, Only: only})
	var table strings.Builder
	Print(&table, results)
	t.Logf("progress:\n%s\n%s", log.String(), table.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != rows {
		t.Fatalf("%d results for %d rows", len(results), rows)
	}
	for _, r := range results {
		if r.Status != Pass {
			t.Errorf("%s: %s (%s)", r.Row.Name, r.Status, strings.Join(r.Reasons, "; "))
		}
	}
}

// TestWriteConfigLoadsBack: a service config written by writeConfig loads back through the
// service's LoadConfig as the same struct, durations included; a loader that reads a field
// differently is caught.
func TestWriteConfigLoadsBack(t *testing.T) {
	c, err := rpcserver.LoadConfig("../../etc/inventory.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c.Relay.ClaimIdle = 1500 * time.Millisecond
	file := filepath.Join(t.TempDir(), "inventory.json")
	if err := writeConfig(file, c, rpcserver.LoadConfig); err != nil {
		t.Fatal(err)
	}
	back, _ := rpcserver.LoadConfig(file)
	if back.Relay.ClaimIdle != 1500*time.Millisecond {
		t.Fatalf("ClaimIdle loads back as %s", back.Relay.ClaimIdle)
	}
	drops := func(f string) (rpcserver.Config, error) {
		c, err := rpcserver.LoadConfig(f)
		c.Relay.ClaimIdle = 0
		return c, err
	}
	if err := writeConfig(file, c, drops); err == nil {
		t.Fatal("a field read back differently was not caught")
	}
	// A block whose zeros override a default (deploy's Pay.BuyerConfirms: false over
	// default=true) is written, not left out as an absent block.
	g, err := apiserver.LoadConfig("../../deploy/multinode/api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if g.Pay.BuyerConfirms {
		t.Fatal("deploy/multinode/api.yaml lets buyers confirm: this check proves nothing")
	}
	if err := writeConfig(filepath.Join(t.TempDir(), "api.json"), g, apiserver.LoadConfig); err != nil {
		t.Fatal(err)
	}
}
