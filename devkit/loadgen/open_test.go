package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
)

// limitedServer answers every request after a fixed service time, at most n at once (a
// semaphore of n): its true capacity is n/service per second. stall, when set, is a
// one-off: the first request after stallAt holds every other one back for stall.
func limitedServer(t *testing.T, n int, service, stallAt, stall time.Duration) *httptest.Server {
	sem := make(chan struct{}, n)
	var mu sync.Mutex
	t0, stalled := time.Now(), false
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		sem <- struct{}{}
		defer func() { <-sem }()
		if stall > 0 {
			mu.Lock()
			if !stalled && time.Since(t0) >= stallAt {
				stalled = true
				time.Sleep(stall)
			}
			mu.Unlock()
		}
		time.Sleep(service)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(s.Close)
	return s
}

// get is one request to the server, its outcome code and its time from sending.
func get(c *apiclient.Client) (string, time.Duration) {
	m, _, _ := c.Send(context.Background(), http.MethodGet, "/", "", nil)
	return m.Code, m.Took
}

// Over capacity, the open loop's latencies include the queue that builds up; a closed
// loop at the same server hides it: it only sends when an answer came back.
func TestOpenLoopShowsQueueing(t *testing.T) {
	const n, service = 4, 10 * time.Millisecond // capacity 400/s
	srv := limitedServer(t, n, service, 0, 0)
	c := apiclient.New(srv.URL, apiclient.Options{Conns: 256})
	defer c.Close()

	// 1.5x the capacity for 0.6 s: the backlog grows to ~120 requests, ~300 ms of queue.
	open := Open{N: 360, Rate: 600, MaxInFlight: 256}.Run(context.Background(), func(int) string {
		code, _ := get(c)
		return code
	})
	if open.Sent != 360 || open.Codes[CodeOK] != 360 || open.Dropped != 0 {
		t.Fatalf("open loop: sent %d, codes %v, dropped %d", open.Sent, open.Codes, open.Dropped)
	}
	// The same server, closed loop with 8 clients (twice its concurrency, so it is loaded):
	// each client waits for its answer, so a latency is at most a round of the queue.
	var closed LatencyHist
	var mu sync.Mutex
	Drive{N: 360, Workers: 8}.Run(context.Background(), func(int) {
		_, took := get(c)
		mu.Lock()
		closed.Add(took)
		mu.Unlock()
	}, nil)
	op99, cp99 := open.Latency.Percentile(99), closed.Percentile(99)
	t.Logf("open loop p99 %s (p50 %s), closed loop p99 %s (p50 %s)", op99, open.Latency.Percentile(50), cp99,
		closed.Percentile(50))
	if op99 < 100*time.Millisecond {
		t.Errorf("open-loop p99 %s at 1.5x capacity: the queue is missing", op99)
	}
	if op99 < 3*cp99 {
		t.Errorf("open-loop p99 %s is not well above the closed loop's %s", op99, cp99)
	}
}

// A server that stalls once for X: counted from their scheduled times, the requests that
// should have gone out during the stall carry it (p99 >= X), even though with one request
// in flight they were sent only after it; counted from sending, as a closed loop does,
// they would not. The cap being hit is counted, not silent.
func TestOpenLoopCountsFromScheduledTime(t *testing.T) {
	const stall = 300 * time.Millisecond
	srv := limitedServer(t, 64, 2*time.Millisecond, 200*time.Millisecond, stall)
	c := apiclient.New(srv.URL, apiclient.Options{Conns: 4})
	defer c.Close()
	var sent LatencyHist
	var mu sync.Mutex
	st := Open{N: 160, Rate: 200, MaxInFlight: 1}.Run(context.Background(), func(int) string {
		code, took := get(c)
		mu.Lock()
		sent.Add(took)
		mu.Unlock()
		return code
	})
	p99, sentP99 := st.Latency.Percentile(99), sent.Percentile(99)
	t.Logf("p99 from scheduled time %s, from sending %s; late %d", p99, sentP99, st.Late)
	if st.Codes[CodeOK] != 160 {
		t.Fatalf("codes %v", st.Codes)
	}
	if p99 < stall*8/10 {
		t.Errorf("p99 %s from the scheduled time, want >= %s (the stall)", p99, stall*8/10)
	}
	if sentP99 >= stall/2 {
		t.Errorf("p99 %s from sending: the test cannot tell the two accountings apart", sentP99)
	}
	if st.Late < 10 {
		t.Errorf("%d requests counted late, want the ~60 scheduled during the stall", st.Late)
	}
}

// Past the deadline, the items left are dropped and counted. About 20 are due before it; a
// starved scheduler (make test beside other work) sent 8, so the test asks for some, not 20.
func TestOpenLoopDropsPastDeadline(t *testing.T) {
	start := time.Now()
	st := Open{N: 100, Rate: 100, Start: start, Deadline: start.Add(200 * time.Millisecond)}.Run(
		context.Background(), func(int) string { return CodeOK })
	if st.Sent+st.Dropped != 100 || st.Dropped < 60 || st.Sent < 1 {
		t.Fatalf("sent %d dropped %d of 100 at 100/s in 200 ms", st.Sent, st.Dropped)
	}
}

// -rate: the sale's buyers arrive open loop; every check still holds, each buyer's latency
// is counted once (from its scheduled time, its retries included) and the rate is reported.
func TestRunOpenLoopSale(t *testing.T) {
	f := newFakeAPI()
	f.busyFirst = true // every buyer retries once: still one latency per buyer
	srv := f.server(t)
	cfg := fakeConfig(srv.URL)
	cfg.Buyers, cfg.Rate, cfg.Retries = 200, 400, 2
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		var b strings.Builder
		r.WriteText(&b)
		t.Fatalf("checks failed:\n%s", b.String())
	}
	if r.Rate != 400 || r.MaxInFlight != DefaultMaxInFlight || r.Latency.Count != 200 || r.Requests != 400 {
		t.Fatalf("rate %g, cap %d, %d latencies, %d requests; want 400, %d, 200 buyers, 400 attempts",
			r.Rate, r.MaxInFlight, r.Latency.Count, r.Requests, DefaultMaxInFlight)
	}
	// 200 buyers at 400/s take half a second, however fast the answers come.
	if r.ReserveDuration < 450*time.Millisecond {
		t.Fatalf("reserve phase took %s, the schedule alone 500 ms", r.ReserveDuration)
	}
	var b strings.Builder
	r.WriteText(&b)
	if !strings.Contains(b.String(), "open loop  offered 400 buyers/s") {
		t.Fatalf("no open-loop line in\n%s", b.String())
	}
}
