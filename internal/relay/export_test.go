package relay

import dto "github.com/prometheus/client_model/go"

// AckChecks reads acks_per_check: how many batched checks ran, for how many entries.
func AckChecks() (checks uint64, entries float64) {
	var m dto.Metric
	if err := acksBatched.Write(&m); err != nil {
		panic(err)
	}
	return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
}

// Tallies is the number of activities the Acker holds an acknowledgement tally of.
func (a *Acker) Tallies() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.tallies)
}
