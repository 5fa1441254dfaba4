package faults

import (
	"context"
	"fmt"
	"time"
)

// alertBound bounds each wait for an alert (the writer's row, deployfaultrows.go): SeckillTargetDown's for (1m) plus
// scrapes and evaluations (5 s each in prometheus.yml), with room for a loaded machine.
const alertBound = 3 * time.Minute

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
