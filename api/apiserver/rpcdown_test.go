package apiserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/testenv"
)

// answers counts the answers of a phase by "status code" and keeps one body of each.
type answers struct {
	mu     sync.Mutex
	counts map[string]int
	sample map[string]string
}

func (a *answers) add(status int, raw []byte) {
	var eb errBody
	_ = json.Unmarshal(raw, &eb)
	key := fmt.Sprintf("%d %s", status, eb.Code)
	if status == 503 && eb.Code == "BUSY" && eb.Msg == "" {
		key += " (no msg)"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.counts == nil {
		a.counts, a.sample = map[string]int{}, map[string]string{}
	}
	a.counts[key]++
	if _, ok := a.sample[key]; !ok {
		a.sample[key] = string(raw)
	}
}

// notBusy lists every error answer that is not 503 {"code":"BUSY","msg":...} (a 200 is
// a reservation answered before the reset took effect).
func (a *answers) notBusy() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for k, n := range a.counts {
		if k != "503 BUSY" && k != "200 " {
			out = append(out, fmt.Sprintf("%d × %s (%s)", n, k, a.sample[k]))
		}
	}
	sort.Strings(out)
	return out
}

func (a *answers) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for k, n := range a.counts {
		out = append(out, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// TestInventoryDownIsBusy: buyers reserving through a proxy whose connections to the inventory
// service are reset mid-burst get 200 or 503 BUSY, and a BUSY retried answers as a replay.
func TestInventoryDownIsBusy(t *testing.T) {
	e, proxy := startBehindProxy(t)
	rs := e.rpc
	a := e.warm(map[string]any{"stock": 100000, "per_user_limit": 100000})
	buyer := buyerToken(t, 1)
	var orders []reserved
	for i := range 3 {
		var r reserved
		e.call(
			http.MethodPost,
			"/v1/seckill/orders",
			buyer,
			reserveBody(a.ActivityID, fmt.Sprintf("before-%04d", i), 1),
			&r,
		)
		orders = append(orders, r)
	}

	b := &burster{t: t, e: e, aid: a.ActivityID}
	// 1. kill -9, as the gateway sees it: every connection to the service reset, new ones too.
	var killed, stopped answers
	stop := make(chan struct{})
	wg := b.burst(stop, &killed)
	time.Sleep(300 * time.Millisecond)
	b.faulty.Store(true)
	proxy.Kill()
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	// 2. The service stopped, the proxy in front of it accepting and closing (the
	// gateway's dial succeeds, the connection ends at once).
	rs.Stop()
	proxy.Restore()
	stop = make(chan struct{})
	wg = b.burst(stop, &stopped)
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	// 3. Every other route calling the service, concurrently, the service still gone.
	routes := serviceRoutes(orders, a.ActivityID, buyer, merchantToken(t, merchantID))
	others := make([]answers, len(routes))
	var rwg sync.WaitGroup
	for i, r := range routes {
		for range 8 {
			rwg.Add(1)
			go func() {
				defer rwg.Done()
				for range 40 {
					code, raw := e.do(r.method, r.path, r.token, r.body)
					others[i].add(code, raw)
				}
			}()
		}
	}
	rwg.Wait()

	for _, phase := range []struct {
		name string
		a    *answers
	}{{"connections reset", &killed}, {"service stopped", &stopped}} {
		t.Logf("%s: %s", phase.name, phase.a)
		if phase.a.counts["503 BUSY"] < 2*burstWorkers {
			t.Errorf(
				"%s: only %d reservations answered BUSY: the fault did not bite",
				phase.name,
				phase.a.counts["503 BUSY"],
			)
		}
		if bad := phase.a.notBusy(); len(bad) > 0 {
			t.Errorf("%s: reservations answered other than 503 BUSY: %s", phase.name, strings.Join(bad, "; "))
		}
	}
	for i, r := range routes {
		t.Logf("%s: %s", r.name, others[i].String())
		if bad := others[i].notBusy(); len(bad) > 0 {
			t.Errorf("%s with the service gone: answered other than 503 BUSY: %s", r.name, strings.Join(bad, "; "))
		}
	}
}

// startBehindProxy starts the inventory service, a proxy in front of it and the gateway
// calling the service through the proxy.
func startBehindProxy(t *testing.T) (*env, *devenv.Proxy) {
	_, keys := testenv.Redis(t)
	db := testenv.MySQL(t)
	rc := rpctest.Config(t, keys, db.DSN)
	rc.Timeout = 10000
	// As startWith: a trace agent started by the service would stay for the process, and
	// every later test's gateway would lose its fast path (TestMarksNeverAnswer... after the
	// orders tests that use this harness).
	rc.Telemetry.Disabled = true
	_, rs := rpctest.Start(t, rc)
	proxy, err := devenv.StartProxy(rc.ListenOn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	ac := apiConfig(t, keys, proxy.Addr)
	as, err := apiserver.New(ac)
	if err != nil {
		t.Fatal(err)
	}
	go as.Start()
	t.Cleanup(as.Stop)
	e := &env{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", ac.Port), keys: keys, db: db, rpc: rs, api: as,
		client: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	e.waitHealthy()
	return e, proxy
}

// burstWorkers is the number of buyers of a burst.
const burstWorkers = 32

// burster sends bursts of reservations of activity aid.
type burster struct {
	t      *testing.T
	e      *env
	aid    int64
	faulty atomic.Bool // set before the fault
	seq    atomic.Int64
}

// burst: burstWorkers buyers reserve with fresh request ids until stop; the answers that
// arrive once faulty is set (it is set before the fault) are counted in after.
func (b *burster) burst(stop <-chan struct{}, after *answers) *sync.WaitGroup {
	t, e := b.t, b.e
	var wg sync.WaitGroup
	for w := range burstWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tok := buyerToken(t, int64(100+w))
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, raw := e.do(http.MethodPost, "/v1/seckill/orders", tok,
					reserveBody(b.aid, fmt.Sprintf("burst-%08d", b.seq.Add(1)), 1))
				if b.faulty.Load() { // answered after the fault began (in flight at the reset included)
					after.add(code, raw)
				} else if code != http.StatusOK {
					t.Errorf("before the fault: %d %s", code, raw)
				}
			}
		}()
	}
	return &wg
}

// serviceRoute is a route of the gateway that calls the inventory service.
type serviceRoute struct {
	name, method, path, token string
	body                      any
}

// serviceRoutes are the routes other than the reservation calling the service.
func serviceRoutes(orders []reserved, aid int64, buyer, merchant string) []serviceRoute {
	return []serviceRoute{
		{"pay", http.MethodPost, "/v1/seckill/orders/" + orders[0].OrderNo + "/pay", buyer, nil},
		{"cancel", http.MethodPost, "/v1/seckill/orders/" + orders[1].OrderNo + "/cancel", buyer, nil},
		{"poll order", http.MethodGet, "/v1/seckill/orders/" + orders[2].OrderNo, buyer, nil},
		{"activity", http.MethodGet, fmt.Sprintf("/v1/activities/%d", aid), buyer, nil},
		{
			"create activity",
			http.MethodPost,
			"/v1/admin/activities",
			merchant,
			map[string]any{"sku_id": 42, "name": "phone", "stock": 10,
				"start_time": time.Now().Unix() - 60, "end_time": time.Now().Unix() + 3600},
		},
		{"list activities", http.MethodGet, "/v1/admin/activities", merchant, nil},
		{"admin activity", http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d", aid), merchant, nil},
		{"warmup", http.MethodPost, fmt.Sprintf("/v1/admin/activities/%d/warmup", aid), merchant, nil},
		{
			"adjust stock",
			http.MethodPost,
			fmt.Sprintf("/v1/admin/activities/%d/stock", aid),
			merchant,
			map[string]any{"delta": 5},
		},
		{"reconcile", http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d/reconcile", aid), merchant, nil},
		{"healthz", http.MethodGet, "/healthz", "", nil},
	}
}
