package loadgen

import (
	"context"
	"errors"
	"fmt"
	"time"
)

func (c *CostConfig) validate(buyers int) error {
	var errs []error
	for _, pid := range c.PIDs {
		if pid < 1 {
			errs = append(errs, fmt.Errorf("cost: pid %d", pid))
		}
	}
	if c.Checkpoint < 0 || c.Checkpoint > buyers {
		errs = append(errs, fmt.Errorf("cost: checkpoint %d must be within 0..buyers (%d)", c.Checkpoint, buyers))
	}
	if c.LagWait < 0 || c.MaxBytesPerOrder < 0 || c.MaxRSSGrowth < 0 || c.MaxLag < 0 {
		errs = append(errs, errors.New("cost: the lag wait and the targets must be >= 0"))
	}
	return errors.Join(errs...)
}

// measureCost takes the readings after the reserve phase: the writer's lag, then Redis (the
// outbox drained by then).
func (g *run) measureCost(ctx context.Context) {
	c := g.cost
	if c == nil {
		return
	}
	if c.cfg.LagWait > 0 {
		g.prog.phase("cost: waiting up to %s for MySQL's books to equal Redis's", c.cfg.LagWait)
		c.rep.WriterLag = g.writerLag(ctx, g.r.Started.Add(g.r.ReserveDuration), c.cfg.LagWait)
	}
	if c.rds != nil {
		if err := readRedisEnd(ctx, c.rds, c.rep.Redis, c.cfg.KeyPrefix, g.r.ActivityID, g.r.Reserved); err != nil {
			c.rep.Redis.Err = err.Error()
		}
	}
	g.r.Cost = c.rep
}

// writerLag polls the admin route every LagPoll until MySQL's books equal Redis's, at most
// wait past the reserve phase's end: nothing settles meanwhile, so Redis's books stay put
// and MySQL's reach them once the writer has applied every reservation.
func (g *run) writerLag(ctx context.Context, end time.Time, wait time.Duration) *WriterLag {
	w := &WriterLag{}
	for {
		a, err := g.c.Admin(ctx, g.merchant, g.r.ActivityID)
		now := time.Now()
		if err == nil && a.Redis != nil {
			w.Redis, w.DB = *redisBooks(a.Redis), dbBooks(a.DB)
			if w.Redis == w.DB {
				w.Lag, w.CaughtUp = max(now.Sub(end), 0), true
				return w
			}
		}
		if now.Sub(end) >= wait || ctx.Err() != nil {
			w.Lag = now.Sub(end)
			return w
		}
		sleep(ctx, LagPoll)
	}
}

// costChecks turns the cost's figures into checks.
func (r *Report) costChecks() {
	c := r.Cost
	if c == nil || c.Unchecked {
		return
	}
	reached := ""
	if c.Reached < c.Buyers {
		reached = fmt.Sprintf(" (the time bound ended the reserve phase at %d of %d buyers)", c.Reached, c.Buyers)
	}
	if rc := c.Redis; rc != nil {
		switch {
		case rc.Err != "" || rc.End == nil:
			r.check("redis bytes per order", false, "not read: %s", rc.Err)
		case rc.End.Orders == 0:
			r.skip("redis bytes per order", "no order was made")
		default:
			r.check("redis bytes per order", rc.PerOrder <= c.Targets.BytesPerOrder,
				"%.0f B (used_memory less client buffers %+d B over %d orders), target <= %.0f B", rc.PerOrder,
				rc.End.Used-rc.UsedBefore, rc.End.Orders, c.Targets.BytesPerOrder)
		}
	}
	for _, p := range c.Processes {
		if p.Service {
			r.rssCheck(p, c.Targets.RSSGrowth, reached)
		}
	}
	if w := c.WriterLag; w != nil {
		r.check("writer lag after the reserve phase", w.CaughtUp && w.Lag <= c.Targets.Lag,
			"%s (caught up %v: mysql %+v, redis %+v), target <= %s", w.Lag.Round(time.Millisecond), w.CaughtUp,
			w.DB, w.Redis, c.Targets.Lag)
	}
}

// rssCheck holds a service's RSS at the end to growth × its RSS at the checkpoint.
func (r *Report) rssCheck(p ProcCost, growth float64, reached string) {
	name := fmt.Sprintf("rss of %s (pid %d)", p.Name, p.PID)
	switch {
	case p.At == nil && p.Err == "":
		r.skip(name, "the checkpoint (%d buyers) was not reached%s", r.Cost.Checkpoint, reached)
	case p.At == nil || p.End == nil:
		r.check(name, false, "not read: %s", p.Err)
	default:
		ratio := float64(p.End.RSS) / float64(p.At.RSS)
		r.check(name, ratio <= growth, "%s after %d buyers, %s after %d: %.2fx, target <= %.2fx%s",
			mib(p.At.RSS), p.At.Buyers, mib(p.End.RSS), p.End.Buyers, ratio, growth, reached)
	}
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// writeCostText prints the cost's figures.
func (c *CostReport) writeText(p func(format string, args ...any)) {
	p("cost: %d of %d buyers answered; first readings at %d", c.Reached, c.Buyers, c.Checkpoint)
	for _, pc := range c.Processes {
		line := fmt.Sprintf("  %-36s", fmt.Sprintf("%s (pid %d)", pc.Name, pc.PID))
		for _, s := range []*ProcSample{pc.At, pc.End} {
			if s != nil {
				line += fmt.Sprintf("  rss %s cpu %s after %d buyers;", mib(s.RSS), s.CPU.Round(10*time.Millisecond),
					s.Buyers)
			}
		}
		if pc.Err != "" {
			line += " error: " + pc.Err
		}
		p("%s", line)
	}
	if rc := c.Redis; rc != nil {
		if s := rc.AtCheckpoint; s != nil && s.Orders > 0 {
			p("  redis used_memory %+d B at the checkpoint, %d orders (%.0f B each)", s.Used-rc.UsedBefore, s.Orders,
				float64(s.Used-rc.UsedBefore)/float64(s.Orders))
		}
		if s := rc.End; s != nil {
			p("  redis used_memory %+d B at the end, %d orders (%.0f B each), %d keys", s.Used-rc.UsedBefore, s.Orders,
				rc.PerOrder, s.Keys)
		}
		for _, k := range rc.Keys {
			p("    %-44s %10d B  %6.1f B/order", k.Kind, k.Bytes, k.PerOrder)
		}
		for _, f := range rc.BuyerFields {
			p("    buyers hash %-30s %8d fields, %10d B of field and value", f.Kind, f.Fields, f.Bytes)
		}
		if rc.Err != "" {
			p("  redis: %s", rc.Err)
		}
	}
	if w := c.WriterLag; w != nil {
		p("  writer lag %s after the reserve phase (caught up: %v)", w.Lag.Round(time.Millisecond), w.CaughtUp)
	}
}
