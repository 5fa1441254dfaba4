package benchrun

import (
	"math"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/loadgen"
)

// cpuMetrics: each process's CPU between the readings ÷ the buyers answered between them,
// summed by name (two redis-servers are one figure), this process as "bench", a process
// without both readings left out.
func TestCPUMetrics(t *testing.T) {
	at := func(buyers int, cpu time.Duration) *loadgen.ProcSample {
		return &loadgen.ProcSample{Buyers: buyers, CPU: cpu}
	}
	c := &loadgen.CostReport{Processes: []loadgen.ProcCost{
		{PID: 1, Name: "api", Service: true, At: at(1000, time.Second), End: at(11000, 3*time.Second)},
		{PID: 2, Name: "redis-server", Service: true, At: at(1000, 0), End: at(11000, 500*time.Millisecond)},
		{PID: 3, Name: "redis-server", Service: true, At: at(1000, 0), End: at(11000, 250*time.Millisecond)},
		{PID: 4, Name: "etcd", Service: true, Err: "gone"},
		{PID: 5, Name: "bench (the load generator)", At: at(1000, 0), End: at(11000, time.Second)},
	}}
	want := map[string]float64{metricCPU + "api": 200, metricCPU + "redis-server": 75, metricCPU + "bench": 100,
		metricCPU + "total": 375}
	got := cpuMetrics(c)
	if len(got) != len(want) {
		t.Fatalf("metrics %v, want %v", got, want)
	}
	for k, v := range want {
		if math.Abs(got[k]-v) > 1e-9 {
			t.Errorf("%s = %g, want %g (all: %v)", k, got[k], v, got)
		}
	}
	if cpuMetrics(nil) != nil || cpuMetrics(&loadgen.CostReport{}) != nil {
		t.Error("no readings: want no metrics")
	}
}

// descendants finds a child of this process and the child's own child.
func TestDescendants(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; ; i++ {
		d := descendants(os.Getpid())
		if slices.Contains(d, cmd.Process.Pid) && len(d) >= 2 {
			return
		}
		if i == 100 {
			t.Fatalf("descendants %v: want sh (%d) and its sleep", d, cmd.Process.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// selfCPU counts this process's CPU: spinning, it grows by 50 ms well within 10 s of the
// clock (however busy the machine).
func TestSelfCPU(t *testing.T) {
	before := selfCPU()
	for start := time.Now(); selfCPU()-before < 50*time.Millisecond; {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("10 s spun, selfCPU grew %s", selfCPU()-before)
		}
	}
}
