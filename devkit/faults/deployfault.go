package faults

import (
	"context"
	"fmt"
	"io"
	"time"
)

// alertBound bounds each wait of the target-down row: SeckillTargetDown's for (1m) plus
// scrapes and evaluations (5 s each in prometheus.yml), with room for a loaded machine.
const alertBound = 3 * time.Minute

// targetDownRow is a fault row on the deploy test's system: one writer (a target of
// prometheus.yml) killed with -9; deploy's SeckillTargetDown must fire for its instance,
// and clear once the writer is started again.
func (s *System) targetDownRow(ctx context.Context, p *prometheus, log io.Writer) Check {
	const name = "fault: kill -9 a writer, SeckillTargetDown fires and clears"
	c := s.Writers[0]
	inst := s.Deploy.Targets[c.name]
	fmt.Fprintf(log, "row: kill -9 %s (target %s), waiting for SeckillTargetDown\n", c.name, inst)
	c.kill()
	killed := time.Now()
	fireErr := p.waitAlert(ctx, "SeckillTargetDown", inst, true)
	fired := time.Since(killed)
	if err := c.start(ctx); err != nil {
		return check(name, false, "restart %s: %v", c.name, err)
	}
	restarted := time.Now()
	clearErr := p.waitAlert(ctx, "SeckillTargetDown", inst, false)
	cleared := time.Since(restarted)
	return check(name, fireErr == nil && clearErr == nil,
		"%s (%s): fired %s after the kill, cleared %s after the restart%s", c.name, inst,
		fired.Round(time.Second), cleared.Round(time.Second), reasons(append(errText(fireErr), errText(clearErr)...)))
}

// waitAlert waits, at most alertBound, until alert name for instance inst is firing
// (firing true) or neither firing nor pending (false).
func (p *prometheus) waitAlert(ctx context.Context, name, inst string, firing bool) error {
	deadline := time.Now().Add(alertBound)
	for {
		as, err := p.alerts(ctx)
		state := "inactive"
		for _, a := range as {
			if a.Labels["alertname"] == name && a.Labels["instance"] == inst {
				state = a.State
			}
		}
		if err == nil && (state == "firing") == firing && (firing || state == "inactive") {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s for %s %s after %s, want firing %v (%v)", name, inst, state, alertBound, firing, err)
		}
		time.Sleep(time.Second)
	}
}
