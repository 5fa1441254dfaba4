package etc_test

import "testing"

// deploy/ does not shed on host CPU and samples a share of the requests (make bench's
// production profile measured both, docs/DESIGN.md "Measuring"): CpuThreshold 900 shed 94 %
// of a sale's reservations on a 2-core host; a sampler of 1.0 traces and exports every
// request of a sale to the backend.
func TestMultinodeProductionProfile(t *testing.T) {
	setSecrets(t)
	rc, ac, mc := loadMultinode(t)
	if rc.CpuThreshold != 0 || ac.CpuThreshold != 0 {
		t.Errorf("CpuThreshold rpc %d, api %d: want 0 (go-zero builds no shedder)", rc.CpuThreshold, ac.CpuThreshold)
	}
	for name, s := range map[string]float64{"rpc": rc.Telemetry.Sampler, "api": ac.Telemetry.Sampler,
		"mq": mc.Telemetry.Sampler} {
		if s <= 0 || s > 0.1 {
			t.Errorf("%s: Telemetry.Sampler %g, want within (0, 0.1]", name, s)
		}
	}
}
