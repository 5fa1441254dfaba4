package faults

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/rpc/rpcserver"
)

// expectedFailures are the rows this test expects to fail, and why. Degrade mode's row is
// here only while DegradeModeBuilt says it is not built; rows failing by an open issue
// carry its number (Row.KnownIssue) and are run like every other.
func expectedFailure(r Row) string {
	switch {
	case r.Unbuilt != "" && !DegradeModeBuilt:
		return NotBuilt
	case r.KnownIssue != 0:
		return Fail
	}
	return Pass
}

// TestFaultSuite runs every row at the short scale against the real services (separate
// processes over a private Redis, MariaDB and kfake) and checks each row's verdict: PASS,
// or the recorded failure of a row listed as expected to fail.
func TestFaultSuite(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	var log strings.Builder
	results, err := Run(ctx, Config{Options: Options{Root: root, Install: true, Log: &log}, Scale: Short})
	var table strings.Builder
	Print(&table, results)
	t.Logf("progress:\n%s\n%s", log.String(), table.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(Rows()) {
		t.Fatalf("%d results for %d rows", len(results), len(Rows()))
	}
	for _, r := range results {
		want := expectedFailure(r.Row)
		if r.Row.KnownIssue != 0 && r.Status == Pass {
			// A known loss is a window, not a certainty: a burst whose every entry was
			// relayed before the fault loses nothing. Say so; the marker goes once the
			// issue is closed, not when one run is lucky.
			t.Logf("%s (issue %d) passed this run: acknowledged %d, lost 0", r.Row.Name, r.Row.KnownIssue, r.Acknowledged)
			continue
		}
		if r.Status != want {
			t.Errorf("%s: %s, want %s (%s)", r.Row.Name, r.Status, want, strings.Join(r.Reasons, "; "))
			continue
		}
		if r.Row.KnownIssue == 0 || r.Status != Fail {
			continue
		}
		// Failing by a known issue: with a sale behind it, and by the numbers (issue 10:
		// after Redis lost its data, acknowledged orders not yet relayed are gone from both
		// books), not by the harness.
		if r.Acknowledged == 0 || (r.Lost == 0 && r.Consistent && r.Oversold == 0 && r.Duplicated == 0) {
			t.Errorf("%s (issue %d): acknowledged %d, lost %d, consistent %v: want a sale and lost orders or a lasting mismatch (%s)",
				r.Row.Name, r.Row.KnownIssue, r.Acknowledged, r.Lost, r.Consistent, strings.Join(r.Reasons, "; "))
		}
		t.Logf("%s fails by open issue %d as recorded: acknowledged %d, oversold %d, lost %d, duplicated %d, consistent %v",
			r.Row.Name, r.Row.KnownIssue, r.Acknowledged, r.Oversold, r.Lost, r.Duplicated, r.Consistent)
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
}
