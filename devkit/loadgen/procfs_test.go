package loadgen

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// readProc reads a real process: a child's RSS and name, and this process's RSS growing
// with memory it touches and its CPU time growing with work it does.
func TestReadProcReadsRealProcesses(t *testing.T) {
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	pid := child.Process.Pid
	s, err := readProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	if s.RSS <= 0 || s.RSS > 64<<20 {
		t.Errorf("sleep's RSS %d B", s.RSS)
	}
	if name := procName(pid); name != "sleep" {
		t.Errorf("procName = %q", name)
	}
	_ = child.Process.Kill()
	_ = child.Wait()
	if _, err := readProc(pid); err == nil {
		t.Error("a reaped process was read")
	}

	self := os.Getpid()
	before, err := readProc(self)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 128<<20)
	for i := range len(buf) / 4096 {
		buf[i*4096] = 1
	}
	var x uint64
	for start := time.Now(); time.Since(start) < 300*time.Millisecond; {
		for i := range 100_000 {
			x = x*31 + uint64(i)
		}
	}
	after, err := readProc(self)
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.RSS - before.RSS; grew < 96<<20 {
		t.Errorf("RSS grew %d B after touching 128 MiB", grew)
	}
	// 300 ms of wall time spinning; on a loaded box the process may get less of a core.
	if cpu := after.CPU - before.CPU; cpu < 50*time.Millisecond || cpu > 10*time.Second {
		t.Errorf("CPU grew %s over 300 ms of spinning", cpu)
	}
	_ = buf[len(buf)-1] + byte(x)
}
