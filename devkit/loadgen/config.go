// Package loadgen simulates a flash sale against any seckill deployment over its HTTP API
// (docs/API.md): it creates an activity (or reuses one), warms it up, sends N buyers with
// concurrency C, pays a fraction of the reservations, cancels some, lets the rest expire,
// waits for reconciliation to report consistent, and returns a Report with counts by
// outcome, latency percentiles, throughput per second and the oversell checks.
//
// The run has phases, so that what it counts means one thing:
//  1. reserve: every buyer tries once (retrying BUSY/RATE_LIMITED with the same request_id);
//     nothing returns stock meanwhile, so "reserved <= stock" is a strict oversell check.
//  2. settle: pay PayFraction of the reserved orders and cancel CancelFraction.
//  3. expire: wait until the unpaid rest has expired.
//  4. verify: read every reserved order back, poll reconciliation until consistent, and
//     compare Redis with MySQL.
package loadgen

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Config is one simulated sale.
type Config struct {
	BaseURL     string // the gateway, e.g. http://127.0.0.1:8888
	AllowRemote bool   // permit a non-loopback BaseURL

	// Tokens: buyer tokens are minted per simulated user from BuyerSecret (claim uid).
	// The merchant token is MerchantToken, or minted from MerchantSecret (claim mid).
	BuyerSecret    string
	MerchantSecret string
	MerchantToken  string
	MerchantID     int64
	// PaymentSecret, when set, is the payment provider's (the gateway's PaymentAuth.Secret):
	// orders are paid through its signed notification (POST /v1/payments/notify) instead of
	// the buyer's own pay route.
	PaymentSecret string

	Buyers      int // simulated users, one reservation attempt each
	Concurrency int // requests in flight at once (closed loop)
	// Rate > 0: open loop instead (Open): buyer i is sent at start + i/Rate whatever the
	// answers, at most MaxInFlight at once (default DefaultMaxInFlight; the cap being hit
	// is counted, Report.Late), and each buyer's latency runs from its scheduled time.
	Rate        float64
	MaxInFlight int
	MaxDuration time.Duration // bound on the reserve phase: buyers not started by then are not sent
	Retries     int           // retries of a BUSY / RATE_LIMITED / transport failure, same request_id
	Timeout     time.Duration // per HTTP request

	// The activity: ActivityID > 0 reuses an existing one; otherwise one is created with
	// Stock, PerUserLimit and PayTimeout (0: just longer than MaxDuration, so nothing can
	// expire while buyers are still arriving).
	ActivityID   int64
	SkuID        int64
	Stock        int64
	Quantity     int64 // units per reservation
	PerUserLimit int64
	PayTimeout   time.Duration
	Price        int64 // unit price of a created activity (smallest currency unit)

	PayFraction    float64 // of the reserved orders, paid
	CancelFraction float64 // of the reserved orders, cancelled; the rest expire

	UIDBase int64 // simulated users are UIDBase+1 .. UIDBase+Buyers (0: derived from the clock)
	Seed    uint64

	ExpiryGrace   time.Duration // how long past the last expire_at (+5 s of API.md) to wait for expiry
	ReconcileWait time.Duration // how long to wait for reconciliation to report consistent

	// The opening draw (RunDraw, docs/API.md "The opening draw"): DrawSeeds sales (distinct
	// activities, so distinct seeds) created with draw_seconds DrawSeconds, then the same
	// arrivals without a draw for contrast. HeavyFraction of the buyers (default 0.1) send
	// HeavyRequests reservations (default 10, distinct request ids, at once); the rest send
	// one. Buyers arrive evenly over DrawArrival from the start (default 80 % of the window);
	// outcomes are polled until DrawWait after draw_at (default 60 s).
	DrawSeconds   int64
	DrawSeeds     int
	HeavyFraction float64
	HeavyRequests int
	DrawArrival   time.Duration
	DrawWait      time.Duration

	// Cost: what the sale costs the system (Redis memory per order, the services' RSS, the
	// writer's lag; cost.go), when asked.
	Cost CostConfig

	Progress io.Writer // progress bar and phase lines; nil for none
}

// Bounds of one run: its buyers are minted and sent one by one and only the reserved ones
// are kept, so memory grows with the stock, not the buyers.
const (
	MaxBuyers      = 10_000_000
	MaxConcurrency = 10_000
)

// Defaults fills unset fields.
func (c *Config) Defaults() {
	if c.BaseURL == "" {
		c.BaseURL = "http://127.0.0.1:8888"
	}
	if c.MerchantID == 0 {
		c.MerchantID = 1
	}
	if c.Buyers == 0 {
		c.Buyers = 20000
	}
	if c.Concurrency == 0 {
		c.Concurrency = 64
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = 30 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	if c.SkuID == 0 {
		c.SkuID = 1
	}
	if c.Stock == 0 {
		c.Stock = 1000
	}
	if c.Quantity == 0 {
		c.Quantity = 1
	}
	if c.PerUserLimit == 0 {
		c.PerUserLimit = c.Quantity
	}
	if c.PayTimeout == 0 {
		c.PayTimeout = c.MaxDuration.Truncate(time.Second) + 2*time.Second
	}
	if c.UIDBase == 0 {
		// Distinct users per run, so a reused activity's per-user limits do not carry over.
		c.UIDBase = time.Now().Unix() % 1_000_000 * 1_000_000
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.ExpiryGrace == 0 {
		c.ExpiryGrace = 30 * time.Second
	}
	if c.ReconcileWait == 0 {
		c.ReconcileWait = 60 * time.Second
	}
}

// openCap is the open loop's bound on requests in flight (0 in a closed loop).
func (c *Config) openCap() int {
	switch {
	case c.Rate <= 0:
		return 0
	case c.MaxInFlight > 0:
		return c.MaxInFlight
	}
	return DefaultMaxInFlight
}

// conns is how many requests the client expects in flight.
func (c *Config) conns() int { return max(c.Concurrency, c.openCap()) }

// Validate reports a configuration that cannot run.
func (c *Config) Validate() error {
	var errs []error
	if c.BuyerSecret == "" {
		errs = append(errs, errors.New("a buyer secret is needed to mint one token per simulated user"))
	}
	if c.MerchantToken == "" && c.MerchantSecret == "" {
		errs = append(errs, errors.New("a merchant token or merchant secret is needed"))
	}
	if c.Buyers < 1 || c.Concurrency < 1 || c.Buyers > MaxBuyers || c.Concurrency > MaxConcurrency {
		errs = append(errs, fmt.Errorf("buyers (%d) and concurrency (%d) must be within 1..%d and 1..%d",
			c.Buyers, c.Concurrency, MaxBuyers, MaxConcurrency))
	}
	if c.Quantity < 1 || c.Stock < 1 || c.PerUserLimit < 1 {
		errs = append(errs, fmt.Errorf("stock (%d), quantity (%d) and per-user limit (%d) must be >= 1", c.Stock, c.Quantity,
			c.PerUserLimit))
	}
	if c.PayFraction < 0 || c.CancelFraction < 0 || c.PayFraction+c.CancelFraction > 1 {
		errs = append(errs, fmt.Errorf("pay (%g) and cancel (%g) fractions must be >= 0 and sum to <= 1", c.PayFraction,
			c.CancelFraction))
	}
	if c.PayTimeout < time.Second || c.PayTimeout > 86400*time.Second {
		errs = append(errs, fmt.Errorf("pay timeout %s must be within 1s..24h", c.PayTimeout))
	}
	if c.Rate < 0 || c.MaxInFlight < 0 || c.MaxInFlight > MaxConcurrency {
		errs = append(errs, fmt.Errorf("rate (%g) must be >= 0 and max in flight (%d) within 0..%d", c.Rate,
			c.MaxInFlight, MaxConcurrency))
	}
	if err := c.Cost.validate(c.Buyers); err != nil {
		errs = append(errs, err)
	}
	if c.Retries < 0 || c.MaxDuration <= 0 {
		errs = append(errs, errors.New("retries must be >= 0 and max duration > 0"))
	}
	return errors.Join(errs...)
}
