package baseline

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// LoadConfig bounds one load run: Requests requests (the count bound) from Concurrency
// workers over keep-alive connections, none started after MaxDuration (the time bound).
type LoadConfig struct {
	Concurrency int
	Requests    int
	MaxDuration time.Duration // 0: no time bound
	Timeout     time.Duration // per request (default 10 s)
}

// Outcome words of responses that did not count.
const (
	OutcomeTransport = "TRANSPORT_ERROR" // no HTTP response (refused, reset, timeout)
	OutcomeRequest   = "REQUEST_ERROR"   // the request could not be built
)

// LoadResult is what a load run measured.
type LoadResult struct {
	Sent    int            // requests sent
	Good    int            // well-formed responses (the run's good func)
	Other   map[string]int // every other response by Outcome (status and code word)
	NotSent int            // requests not started within MaxDuration
	Elapsed time.Duration  // first request sent .. last response read
	// Latencies of every sent request (send .. body read), in completion order.
	Latencies []time.Duration
}

// Rate is well-formed responses per second.
func (r LoadResult) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Good) / r.Elapsed.Seconds()
}

// OtherCount is how many responses did not count.
func (r LoadResult) OtherCount() int {
	n := 0
	for _, v := range r.Other {
		n += v
	}
	return n
}

// NewClient is the HTTP client of a load run with conns workers: keep-alive connections,
// no proxy, and the same transport settings as devkit/loadgen's client, so that the
// gateway (driven by the load generator) and the baselines (driven by Load) see the same
// client.
func NewClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		IdleConnTimeout:     90 * time.Second,
	}}
}

// Load sends cfg.Requests requests built by req(i) from cfg.Concurrency workers and counts
// the responses good accepts (status and body). The request is built inside the timed run,
// as the load generator mints a buyer's token and encodes its body inside its own.
func Load(ctx context.Context, cfg LoadConfig, req func(i int) (*http.Request, error), good func(status int, body []byte) bool) LoadResult {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	conc := max(cfg.Concurrency, 1)
	client := NewClient(conc)
	defer client.CloseIdleConnections()

	var (
		next, notSent, nGood atomic.Int64
		mu                   sync.Mutex
		other                = map[string]int{}
		lat                  = make([]time.Duration, 0, cfg.Requests)
		wg                   sync.WaitGroup
	)
	begin := time.Now()
	deadline := time.Time{}
	if cfg.MaxDuration > 0 {
		deadline = begin.Add(cfg.MaxDuration)
	}
	one := func(i int) (took time.Duration, outcome string, ok bool) {
		r, err := req(i)
		if err != nil {
			return 0, OutcomeRequest, false
		}
		rctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
		t0 := time.Now()
		resp, err := client.Do(r.WithContext(rctx))
		if err != nil {
			return time.Since(t0), OutcomeTransport, false
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_ = resp.Body.Close()
		took = time.Since(t0)
		if err != nil {
			return took, OutcomeTransport, false
		}
		if good(resp.StatusCode, body) {
			return took, "", true
		}
		return took, Outcome(resp.StatusCode, body), false
	}
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.Requests {
					return
				}
				if ctx.Err() != nil || (!deadline.IsZero() && time.Now().After(deadline)) {
					notSent.Add(1)
					continue
				}
				took, outcome, ok := one(i)
				mu.Lock()
				if outcome != OutcomeRequest {
					lat = append(lat, took)
				}
				if ok {
					nGood.Add(1)
				} else {
					other[outcome]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return LoadResult{Sent: len(lat), Good: int(nGood.Load()), Other: other, NotSent: int(notSent.Load()),
		Elapsed: time.Since(begin), Latencies: lat}
}

// Outcome names a response: "HTTP_<status>", followed by " <code>" when the body is JSON
// with a code word.
func Outcome(status int, body []byte) string {
	var b struct {
		Code string `json:"code"`
	}
	if json.Unmarshal(body, &b) == nil && b.Code != "" {
		return fmt.Sprintf("HTTP_%d %s", status, b.Code)
	}
	return fmt.Sprintf("HTTP_%d", status)
}
