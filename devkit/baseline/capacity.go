package baseline

import (
	"context"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/loadgen"
)

// CapacityConfig bounds a baseline's capacity search.
type CapacityConfig struct {
	MaxInFlight int                              // the open loop's bound (default loadgen.DefaultMaxInFlight)
	Timeout     time.Duration                    // per request (default 10 s)
	Progress    func(format string, args ...any) // each step's line (nil: none)
}

// Capacity searches for the highest open-loop rate of requests req(i) to the server at
// base that it answers with p99 <= s.P99Bound and every answer good: loadgen's capacity
// search (loadgen.SearchCapacity: the same ramp, bisection, Open driver and verdict as the
// gateway's FindCapacity) over the load generator's client. Request numbers run on across
// steps, so that each request of the search is distinct (its own buyer).
func Capacity(ctx context.Context, cfg CapacityConfig, base string, s loadgen.CapacitySearch,
	req func(i int) (Request, error), good func(status int, body []byte) bool) (*loadgen.CapacityReport, error) {
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = loadgen.DefaultMaxInFlight
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	client := apiclient.New(base, apiclient.Options{Conns: cfg.MaxInFlight, Timeout: cfg.Timeout})
	defer client.Close()
	next := 0
	return loadgen.SearchCapacity(ctx, loadgen.CapacityTarget{Name: base, MaxInFlight: cfg.MaxInFlight,
		Progress: cfg.Progress,
		Prepare: func(_ context.Context, n int) (int64, func(i int) string, error) {
			first := next
			next += n
			return 0, func(i int) string {
				if _, outcome, ok := send(ctx, client, req, first+i, good); !ok {
					return outcome
				}
				return loadgen.CodeOK
			}, nil
		}}, s)
}
