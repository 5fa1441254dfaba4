package loadgen

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	red "github.com/redis/go-redis/v9"
)

// CostConfig asks a sale for what it costs the system (Report.Cost): each part runs only when
// configured. The targets are issue 36's for the ten-million-buyer sale.
type CostConfig struct {
	// RedisAddr: the Redis the services use (no other user, or its writes count too):
	// used_memory less the clients' buffers before the reserve phase and after the writer
	// caught up (each settled: the median of a second's samples), at Checkpoint, per
	// order held, and MEMORY USAGE of the activity's keys by kind. KeyPrefix is the services'.
	RedisAddr string
	KeyPrefix string
	// PIDs: the services' processes, whose RSS and CPU are read at Checkpoint and at the
	// reserve phase's end (the load generator's own are read beside them, unchecked).
	PIDs []int
	// Checkpoint: the buyers answered at the first reading (default Buyers/10).
	Checkpoint int
	// LagWait > 0: after the reserve phase, wait up to LagWait for MySQL's books to equal
	// Redis's (the writer's lag, polled every LagPoll through the admin route).
	LagWait time.Duration

	// Unchecked: take the readings only, hold them to no target (make bench's CPU per
	// request of each process, devkit/benchrun cpucost.go).
	Unchecked bool

	MaxBytesPerOrder float64       // default 350
	MaxRSSGrowth     float64       // RSS at the end ÷ at Checkpoint; default 1.5
	MaxLag           time.Duration // default 5 s
}

// LagPoll is how often the writer's lag wait reads the books.
const LagPoll = 100 * time.Millisecond

func (c *CostConfig) on() bool { return c.RedisAddr != "" || len(c.PIDs) > 0 || c.LagWait > 0 }

func (c *CostConfig) defaults(buyers int) {
	if c.Checkpoint == 0 {
		c.Checkpoint = max(buyers/10, 1)
	}
	if c.MaxBytesPerOrder == 0 {
		c.MaxBytesPerOrder = 350
	}
	if c.MaxRSSGrowth == 0 {
		c.MaxRSSGrowth = 1.5
	}
	if c.MaxLag == 0 {
		c.MaxLag = 5 * time.Second
	}
}

// CostReport is what the sale cost the system.
type CostReport struct {
	Buyers     int `json:"buyers"`            // the sale's buyers
	Checkpoint int `json:"checkpoint_buyers"` // answered at the first reading
	// Reached: buyers answered when the reserve phase ended (Buyers unless the time bound
	// ended it first).
	Reached   int         `json:"buyers_reached"`
	Processes []ProcCost  `json:"processes,omitempty"`
	Redis     *RedisCost  `json:"redis,omitempty"`
	WriterLag *WriterLag  `json:"writer_lag,omitempty"`
	Targets   CostTargets `json:"targets"`
	Unchecked bool        `json:"unchecked,omitempty"` // CostConfig.Unchecked: no check was made
}

// CostTargets are the bounds the checks held the figures to.
type CostTargets struct {
	BytesPerOrder float64       `json:"bytes_per_order"`
	RSSGrowth     float64       `json:"rss_growth"`
	Lag           time.Duration `json:"writer_lag_ns"`
}

// ProcCost is one process's readings.
type ProcCost struct {
	PID     int    `json:"pid"`
	Name    string `json:"name"`
	Service bool   `json:"service"` // one of the services' (checked); else the load generator
	// At is the reading at the checkpoint (nil when the run did not reach it), End at the
	// reserve phase's end.
	At  *ProcSample `json:"at_checkpoint,omitempty"`
	End *ProcSample `json:"at_end,omitempty"`
	Err string      `json:"error,omitempty"`
}

// ProcSample is one reading of a process.
type ProcSample struct {
	Buyers int           `json:"buyers"` // answered when read
	RSS    int64         `json:"rss_bytes"`
	CPU    time.Duration `json:"cpu_ns"` // user + system since the process started
}

// WriterLag is how long MySQL's books took to equal Redis's after the reserve phase.
type WriterLag struct {
	Lag      time.Duration `json:"lag_ns"`
	CaughtUp bool          `json:"caught_up"` // false: still behind after the wait (Lag is the wait)
	Redis    Books         `json:"redis"`
	DB       Books         `json:"mysql"` // at the last reading
}

// coster takes the readings of one run.
type coster struct {
	cfg   CostConfig
	rep   *CostReport
	rds   *red.Client // nil without RedisAddr
	done  atomic.Int64
	mu    sync.Mutex
	procs []ProcCost
}

func newCoster(cfg CostConfig, buyers int) *coster {
	if !cfg.on() {
		return nil
	}
	cfg.defaults(buyers)
	c := &coster{cfg: cfg, rep: &CostReport{Buyers: buyers, Checkpoint: cfg.Checkpoint, Unchecked: cfg.Unchecked,
		Targets: CostTargets{BytesPerOrder: cfg.MaxBytesPerOrder, RSSGrowth: cfg.MaxRSSGrowth, Lag: cfg.MaxLag}}}
	if cfg.RedisAddr != "" {
		c.rds = red.NewClient(&red.Options{Addr: cfg.RedisAddr, DisableIdentity: true})
		c.rep.Redis = &RedisCost{}
	}
	for _, pid := range cfg.PIDs {
		c.procs = append(c.procs, ProcCost{PID: pid, Name: procName(pid), Service: true})
	}
	if len(cfg.PIDs) > 0 {
		self := os.Getpid()
		c.procs = append(c.procs, ProcCost{PID: self, Name: procName(self) + " (the load generator)"})
	}
	return c
}

func (c *coster) close() {
	if c != nil && c.rds != nil {
		_ = c.rds.Close()
	}
}

// before reads Redis before the reserve phase.
func (c *coster) before(ctx context.Context) error {
	if c == nil || c.rds == nil {
		return nil
	}
	m, err := settledMemory(ctx, c.rds)
	if err != nil {
		return fmt.Errorf("cost: Redis at %s: %w", c.cfg.RedisAddr, err)
	}
	c.rep.Redis.UsedBefore = m
	return nil
}

// counted counts one buyer answered and reports whether it is the Checkpoint-th.
func (c *coster) counted() bool {
	return c != nil && c.done.Add(1) == int64(c.cfg.Checkpoint)
}

// checkpoint takes the checkpoint's readings, reserved orders held.
func (c *coster) checkpoint(ctx context.Context, reserved int) {
	c.sample(c.cfg.Checkpoint, true)
	if c.rds == nil {
		return
	}
	m, err := usedMemory(ctx, c.rds)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.rep.Redis.Err = err.Error()
		return
	}
	c.rep.Redis.AtCheckpoint = &MemorySample{Orders: reserved, Used: m}
}

// sample reads every process, at the checkpoint or at the end.
func (c *coster) sample(buyers int, checkpoint bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.procs {
		p := &c.procs[i]
		s, err := readProc(p.PID)
		if err != nil {
			p.Err = err.Error()
			continue
		}
		s.Buyers = buyers
		if checkpoint {
			p.At = &s
		} else {
			p.End = &s
		}
	}
}

// reserveEnded takes the end's process readings.
func (c *coster) reserveEnded() {
	if c == nil {
		return
	}
	c.rep.Reached = int(c.done.Load())
	c.sample(c.rep.Reached, false)
	c.rep.Processes = c.procs
}
