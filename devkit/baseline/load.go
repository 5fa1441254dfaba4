package baseline

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/loadgen"
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

// Request is one request of a load run: Method (default POST) of Path with Body (JSON,
// nil for none) and, unless "", a bearer Token.
type Request struct {
	Method, Path, Token string
	Body                []byte
}

// Load sends cfg.Requests requests built by req(i) to the server at base from
// cfg.Concurrency workers (devkit/loadgen's Drive, through devkit/apiclient's client: the
// load generator's transport settings) and counts the responses good accepts (status and
// body). The request is built inside the timed run, as the load generator mints a buyer's
// token and encodes its body inside its own.
func Load(ctx context.Context, cfg LoadConfig, base string, req func(i int) (Request, error),
	good func(status int, body []byte) bool) LoadResult {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	conc := max(cfg.Concurrency, 1)
	client := apiclient.New(base, apiclient.Options{Conns: conc, Timeout: cfg.Timeout})
	defer client.Close()

	var (
		notSent, nGood atomic.Int64
		mu             sync.Mutex
		other          = map[string]int{}
		lat            = make([]time.Duration, 0, cfg.Requests)
	)
	begin := time.Now()
	d := loadgen.Drive{N: cfg.Requests, Workers: conc}
	if cfg.MaxDuration > 0 {
		d.Deadline = begin.Add(cfg.MaxDuration)
	}
	d.Run(ctx, func(i int) {
		took, outcome, ok := send(ctx, client, req, i, good)
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
	}, func(int) { notSent.Add(1) })
	return LoadResult{Sent: len(lat), Good: int(nGood.Load()), Other: other, NotSent: int(notSent.Load()),
		Elapsed: time.Since(begin), Latencies: lat}
}

// send sends request req(i) and classifies its answer: good, or its outcome.
func send(ctx context.Context, client *apiclient.Client, req func(i int) (Request, error), i int,
	good func(status int, body []byte) bool) (took time.Duration, outcome string, ok bool) {
	r, err := req(i)
	if err != nil {
		return 0, OutcomeRequest, false
	}
	if r.Method == "" {
		r.Method = http.MethodPost
	}
	m, body, err := client.Send(ctx, r.Method, r.Path, r.Token, r.Body)
	switch {
	case apiclient.CodeOf(err) == apiclient.CodeTransport:
		return m.Took, OutcomeTransport, false
	case m.Status == 0:
		return m.Took, OutcomeRequest, false
	case good(m.Status, body):
		return m.Took, "", true
	}
	return m.Took, Outcome(m.Status, body), false
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
