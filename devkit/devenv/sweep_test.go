package devenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A directory is judged by its owner: a server stopped on purpose by a live owner (a test
// restarting Redis on the same directory) is kept; a dead owner's directory goes.
func TestSweepStaleJudgesTheOwner(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := strconv.Itoa(dead.Process.Pid)
	kept, err := privateDir("sweeptest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(kept) })
	if err := os.WriteFile(filepath.Join(kept, "pid"), []byte(gone), 0o600); err != nil { // its server stopped
		t.Fatal(err)
	}
	orphan, err := privateDir("sweeptest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(orphan) })
	if err := os.WriteFile(filepath.Join(orphan, "owner"), []byte(gone), 0o600); err != nil {
		t.Fatal(err)
	}
	SweepStale()
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("a live owner's directory was swept: %v", err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("a dead owner's directory was kept: %v", err)
	}
}
