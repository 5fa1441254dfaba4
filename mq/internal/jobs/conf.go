package jobs

import "time"

// Conf is the `Jobs` block of etc/mq.yaml. Its defaults come from go-zero's config loader
// only: a Conf built in code passes through conf.FillDefault first.
type Conf struct {
	// Enabled turns every job off at once (e.g. an mq instance that only writes).
	Enabled   bool          `json:",default=true"`
	Expiry    ExpiryConf    `json:",optional"`
	Reconcile ReconcileConf `json:",optional"`
	Warmup    WarmupConf    `json:",optional"`
	// Books has no optional tag: its defaults (on, every 5 s) apply when the block is absent.
	Books BooksConf
	// Sweep has no optional tag either: its defaults apply when the block is absent.
	Sweep SweepConf
}

// SweepConf: expire in MySQL the reserved orders whose Redis keys are gone.
type SweepConf struct {
	Enabled  bool          `json:",default=true"`
	Interval time.Duration `json:",default=1m"`
	// After is how long past its expire_at an order must be before the sweep touches it:
	// far longer than the expiry job and the pipeline take to move it themselves.
	After time.Duration `json:",default=10m"`
	Batch int           `json:",default=500,range=[1:10000]"`
}

// ExpiryConf: release unpaid orders whose pay timeout passed.
type ExpiryConf struct {
	Enabled  bool          `json:",default=true"`
	Interval time.Duration `json:",default=1s"`
	// Batch is how many orders one ExpireDue call releases; a tick calls again while
	// calls come back full, up to MaxRounds calls per activity.
	Batch     int `json:",default=200,range=[1:1000]"`
	MaxRounds int `json:",default=50,range=[1:10000]"`
}

// ReconcileConf: compare Redis with MySQL for every active activity.
type ReconcileConf struct {
	Enabled  bool          `json:",default=true"`
	Interval time.Duration `json:",default=30s"`
}

// WarmupConf: warm activities that start within Lead, without a merchant call.
type WarmupConf struct {
	Enabled  bool          `json:",default=true"`
	Interval time.Duration `json:",default=10s"`
	Lead     time.Duration `json:",default=5m"`
}

// BooksConf: export both books of every active activity as gauges.
type BooksConf struct {
	Enabled  bool          `json:",default=true"`
	Interval time.Duration `json:",default=5s"`
}
