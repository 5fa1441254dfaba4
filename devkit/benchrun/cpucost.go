package benchrun

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seckill/seckill/devkit/loadgen"
)

// Where a sale's CPU goes: each HTTP sale of the reservations and sold-out rows (both
// profiles) reads the CPU time of this process and of every process it started (the dev
// profile's servers and the production profile's, whichever profile the sale is of: the
// other's idle cost is in the figures too) at the reserve phase's first tenth and at its end
// (loadgen's Cost readings), and the row's measurement carries each process's CPU per answer
// between the two as metrics (metricCPU + the process's command name; this process is the
// load generator's, and the dev profile's services', and the production profile's trace
// receiver's).

// metricCPU prefixes the metrics of CPU microseconds per answered request, by process.
const metricCPU = "cpu us/request "

// cpuCost is cfg reading the CPU of this process and its descendants over the reserve phase,
// unchecked: a process that exits meanwhile (none should) is left out of the metrics, not a
// failed check of the sale.
func cpuCost(cfg loadgen.Config) loadgen.Config {
	cfg.Cost = loadgen.CostConfig{PIDs: descendants(os.Getpid()), Unchecked: true}
	return cfg
}

// cpuMetrics are c's CPU microseconds per buyer answered between the two readings, summed by
// process name, and their total; nil without readings.
func cpuMetrics(c *loadgen.CostReport) map[string]float64 {
	if c == nil {
		return nil
	}
	out := map[string]float64{}
	for _, p := range c.Processes {
		if p.At == nil || p.End == nil || p.End.Buyers <= p.At.Buyers {
			continue
		}
		us := float64(p.End.CPU-p.At.CPU) / 1e3 / float64(p.End.Buyers-p.At.Buyers)
		name := p.Name
		if !p.Service {
			name = "bench" // this process: loadgen names it "<comm> (the load generator)"
		}
		out[metricCPU+name] += us
		out[metricCPU+"total"] += us
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// selfCPU is the CPU time (user and system) this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// descendants are the processes under root (its children, theirs, ...), from /proc.
func descendants(root int) []int {
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state, then the parent's pid.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			kids[ppid] = append(kids[ppid], pid)
		}
	}
	var out []int
	for stack := []int{root}; len(stack) > 0; {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, kids[p]...)
		stack = append(stack, kids[p]...)
	}
	return out
}
