package loadgen

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func fakeConfig(url string) Config {
	return Config{
		BaseURL: url, BuyerSecret: buyerSecret, MerchantSecret: merchantSecret,
		Buyers: 400, Concurrency: 16, Stock: 50, MaxDuration: 20 * time.Second,
		PayTimeout: 2 * time.Second, PayFraction: 0.5, CancelFraction: 0.2,
		ExpiryGrace: 5 * time.Second, ReconcileWait: 5 * time.Second, Seed: 7,
	}
}

func checkByName(t *testing.T, r *Report, name string) Check {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, r.Checks)
	return Check{}
}

func TestRunSaleAgainstFake(t *testing.T) {
	f := newFakeAPI()
	srv := f.server(t)
	var progress bytes.Buffer
	cfg := fakeConfig(srv.URL)
	cfg.Progress = &progress
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if !r.OK() {
		t.Fatalf("report not OK:\n%s", text.String())
	}
	// 50 stock, 400 buyers of 1 unit: exactly 50 win; of those 25 pay, 10 cancel, 15 expire.
	want := map[string]int{"reserved": 50, "sold out": 350, "requests": 400, "paid": 25, "cancelled": 10,
		"expired": 15, "final sold": 25, "final remaining": 25, "final locked": 0}
	got := map[string]int{"reserved": r.Reserved, "sold out": r.SoldOut, "requests": r.Requests, "paid": r.Paid(),
		"cancelled": r.Cancelled(), "expired": r.FinalStatuses["expired"], "final sold": int(r.FinalRedis.Sold),
		"final remaining": int(r.FinalRedis.Remaining), "final locked": int(r.FinalRedis.Locked)}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %d, want %d", k, got[k], w)
		}
	}
	if len(r.Errors) != 0 || r.NotSent != 0 {
		t.Errorf("errors %v, not sent %d", r.Errors, r.NotSent)
	}
	if r.Latency.Count != 400 || r.Latency.P50 <= 0 || r.Latency.P50 > r.Latency.P99 || r.Latency.P99 > r.Latency.Max {
		t.Errorf("latency summary %+v", r.Latency)
	}
	total := 0
	for _, s := range r.Timeline {
		total += s.Requests
	}
	if total != 400 {
		t.Errorf("timeline counts %d requests, want 400", total)
	}
	if r.Reconcile != "consistent" || r.FinalDB != *r.FinalRedis {
		t.Errorf("reconcile %s, redis %+v db %+v", r.Reconcile, r.FinalRedis, r.FinalDB)
	}
	for _, c := range r.Checks {
		if c.Skip {
			t.Errorf("check %q skipped: %s", c.Name, c.Detail)
		}
	}
	if !strings.Contains(progress.String(), "400/400") || !strings.Contains(text.String(), "result: PASS") {
		t.Errorf("progress %q / text %q", progress.String(), text.String())
	}
}

// The merchant's limit answering RATE_LIMITED (shared by every client of the merchant) is
// waited out: the sale creates, warms and reads its activity anyway.
func TestRunWaitsOutTheMerchantLimit(t *testing.T) {
	f := newFakeAPI()
	f.merchantLimited = 2
	srv := f.server(t)
	r, err := Run(context.Background(), fakeConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || f.merchantLimited != 0 {
		var text bytes.Buffer
		r.WriteText(&text)
		t.Fatalf("limited calls left %d, report:\n%s", f.merchantLimited, text.String())
	}
}

func TestRunFindsFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  func(*fakeAPI)
		failed []string // checks that must fail
	}{
		{"oversell", func(f *fakeAPI) { f.oversell = 5 },
			[]string{"no oversell: reserved <= stock"}},
		{"ledger drops payments", func(f *fakeAPI) { f.dropPaid = true },
			[]string{"reconciliation consistent", "redis and mysql agree", "books add up"}},
		{"expiry never runs", func(f *fakeAPI) { f.expireLate = time.Hour },
			[]string{"orders paid, cancelled, expired", "books add up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI()
			tc.fault(f)
			cfg := fakeConfig(f.server(t).URL)
			cfg.ReconcileWait, cfg.ExpiryGrace = time.Second, time.Second
			r, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.OK() {
				t.Fatalf("report OK despite the fault: %+v", r.Checks)
			}
			for _, name := range tc.failed {
				if c := checkByName(t, r, name); c.OK || c.Skip {
					t.Errorf("check %q passed: %s", name, c.Detail)
				}
			}
		})
	}
}

func TestRunRetriesBusyWithSameRequestID(t *testing.T) {
	f := newFakeAPI()
	f.busyFirst = true
	cfg := fakeConfig(f.server(t).URL)
	cfg.Buyers, cfg.Retries, cfg.PayFraction, cfg.CancelFraction = 100, 1, 1, 0
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 200 || r.Attempts["BUSY"] != 100 || r.Reserved != 50 || r.SoldOut != 50 || len(r.Errors) != 0 {
		t.Fatalf("requests %d attempts %v reserved %d sold out %d errors %v", r.Requests, r.Attempts, r.Reserved, r.SoldOut,
			r.Errors)
	}
	if !r.OK() {
		t.Fatalf("checks: %+v", r.Checks)
	}

	// Without retries the BUSY answers are the buyers' outcome, and an undersold front line
	// is not called a failure of "sold exactly the stock".
	f2 := newFakeAPI()
	f2.busyFirst = true
	cfg = fakeConfig(f2.server(t).URL)
	cfg.Buyers = 100
	r, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors["BUSY"] != 100 || r.Reserved != 0 {
		t.Fatalf("errors %v reserved %d", r.Errors, r.Reserved)
	}
	if c := checkByName(t, r, "sold exactly the stock"); !c.Skip {
		t.Fatalf("sold-exactly check not skipped: %+v", c)
	}
}

// settledRun runs a 40-buyer sale against f, one retry per change, paying and cancelling
// the fractions given, with short waits for expiry and reconciliation.
func settledRun(t *testing.T, f *fakeAPI, pay, cancel float64) *Report {
	t.Helper()
	cfg := fakeConfig(f.server(t).URL)
	cfg.Buyers, cfg.Retries, cfg.PayFraction, cfg.CancelFraction = 40, 1, pay, cancel
	cfg.ReconcileWait, cfg.ExpiryGrace = time.Second, time.Second
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// An order read answered BUSY (a shedding gateway) is retried, beyond the retries of a
// change (Retries 1 here): the read-back still finds every order's state, and the checks
// pass.
func TestRunRetriesBusyReads(t *testing.T) {
	f := newFakeAPI()
	f.readBusy = 3
	r := settledRun(t, f, 0.5, 0.5)
	if !r.OK() || r.OrderReads.Codes["BUSY"] == 0 {
		t.Fatalf("checks %+v, reads %+v", r.Checks, r.OrderReads)
	}
}

// A pay or cancel answered BUSY after every retry may have taken effect or not: the
// read-back decides, and either is a pass; a third state (an unanswered pay that
// cancelled the order) is still a failure.
func TestRunUnansweredSettleIsEitherOutcome(t *testing.T) {
	f := newFakeAPI()
	f.settleBusy = true
	r := settledRun(t, f, 0.5, 0.5)
	if !r.OK() {
		t.Fatalf("checks: %+v (unsure %v)", r.Checks, r.Unsure)
	}
	took := r.Unsure["paid: took effect"] + r.Unsure["cancelled: took effect"]
	did := r.Unsure["paid: did not"] + r.Unsure["cancelled: did not"]
	if took != 10 || did != 10 || r.Pay.OK+r.Cancel.OK != 20 {
		t.Fatalf("unsure %v, pay ok %d, cancel ok %d; want 10 took effect, 10 did not, 20 answered", r.Unsure, r.Pay.OK,
			r.Cancel.OK)
	}

	f2 := newFakeAPI()
	f2.settleBusy, f2.settleWrong = true, true
	r = settledRun(t, f2, 1, 0)
	if c := checkByName(t, r, "orders paid, cancelled, expired"); c.OK || c.Skip {
		t.Fatalf("an unanswered pay that cancelled its order passed: %+v (unsure %v)", c, r.Unsure)
	}
}

func TestRunTimeBound(t *testing.T) {
	f := newFakeAPI()
	f.slow = 20 * time.Millisecond
	cfg := fakeConfig(f.server(t).URL)
	cfg.Buyers, cfg.Concurrency, cfg.MaxDuration, cfg.PayTimeout = 1000, 4, 300*time.Millisecond, 3*time.Second
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.NotSent == 0 || r.Requests+r.NotSent != 1000 {
		t.Fatalf("requests %d + not sent %d, want 1000 with some not sent", r.Requests, r.NotSent)
	}
	if r.Reserved+r.SoldOut != r.Requests {
		t.Fatalf("reserved %d + sold out %d != requests %d", r.Reserved, r.SoldOut, r.Requests)
	}
}

func TestRunStrictCheckNeedsStockToStayPut(t *testing.T) {
	// Reservations expire (1 s) while slow buyers are still arriving: stock returns, so
	// "reserved <= stock" does not apply and must say so instead of failing or passing.
	f := newFakeAPI()
	f.slow = 10 * time.Millisecond
	f.dbLag = 0
	cfg := fakeConfig(f.server(t).URL)
	cfg.Buyers, cfg.Concurrency, cfg.Stock, cfg.PayTimeout = 300, 2, 5, time.Second
	cfg.PayFraction, cfg.CancelFraction = 0, 0
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := checkByName(t, r, "no oversell: reserved <= stock"); !c.Skip || !strings.Contains(c.Detail, "expiring") {
		t.Fatalf("check %+v, want skipped for expiry (reserve phase %s, reserved %d)", c, r.ReserveDuration, r.Reserved)
	}
	if r.Reserved <= 5 {
		t.Fatalf("reserved %d: expired stock was not re-sold, the test proves nothing", r.Reserved)
	}
}

func TestRunRefusesRemoteTarget(t *testing.T) {
	cfg := fakeConfig("http://192.0.2.10:8888")
	_, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "-allow-remote") {
		t.Fatalf("err = %v, want a refusal naming -allow-remote", err)
	}
}

func TestCheckTarget(t *testing.T) {
	for _, tc := range []struct {
		url    string
		remote bool
		ok     bool
	}{
		{"http://127.0.0.1:8888", false, true},
		{"http://[::1]:8888", false, true},
		{"http://localhost:8888", false, true},
		{"https://127.0.0.2", false, true},
		{"http://192.0.2.10:8888", false, false},
		{"http://192.0.2.10:8888", true, true},
		{"ftp://127.0.0.1", false, false},
		{"127.0.0.1:8888", false, false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := checkTarget(context.Background(), tc.url, tc.remote)
			if (err == nil) != tc.ok {
				t.Fatalf("checkTarget(%q, %v) = %v", tc.url, tc.remote, err)
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"ok", func(*Config) {}, ""},
		{"no buyer secret", func(c *Config) { c.BuyerSecret = "" }, "buyer secret"},
		{"no merchant auth", func(c *Config) { c.MerchantSecret = "" }, "merchant"},
		{"merchant token instead", func(c *Config) { c.MerchantSecret, c.MerchantToken = "", "tok" }, ""},
		{"fractions over 1", func(c *Config) { c.PayFraction, c.CancelFraction = 0.7, 0.4 }, "fractions"},
		{"negative fraction", func(c *Config) { c.CancelFraction = -0.1 }, "fractions"},
		{"pay timeout too short", func(c *Config) { c.PayTimeout = 500 * time.Millisecond }, "pay timeout"},
		{"a million buyers", func(c *Config) { c.Buyers, c.Concurrency = 1_000_000, 256 }, ""},
		{"too many buyers", func(c *Config) { c.Buyers = MaxBuyers + 1 }, "buyers"},
		{"too many clients", func(c *Config) { c.Concurrency = MaxConcurrency + 1 }, "concurrency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeConfig("http://127.0.0.1:1")
			tc.modify(&c)
			c.Defaults()
			err := c.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestDefaultPayTimeoutOutlastsReservePhase(t *testing.T) {
	c := Config{MaxDuration: 30 * time.Second}
	c.Defaults()
	if c.PayTimeout <= c.MaxDuration {
		t.Fatalf("pay timeout %s does not outlast the reserve phase bound %s", c.PayTimeout, c.MaxDuration)
	}
}

// The default sale stays 20,000 buyers on 1,000 stock.
func TestDefaultSale(t *testing.T) {
	var c Config
	c.Defaults()
	if c.Buyers != 20000 || c.Stock != 1000 || c.Concurrency != 64 {
		t.Fatalf("default sale: %d buyers, %d stock, %d clients", c.Buyers, c.Stock, c.Concurrency)
	}
}

// The million-buyer sale's code path with a five-hundredth of its buyers, against the fake:
// tokens minted per buyer (the fake verifies each), latencies in the histogram, every check
// passing, the HTML report drawn from the histogram's bars. Every order is paid, so the
// default pay timeout (past the generous time bound) costs no wait.
func TestRunManyBuyersAgainstFake(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 requests")
	}
	f := newFakeAPI()
	cfg := fakeConfig(f.server(t).URL)
	cfg.Buyers, cfg.Stock, cfg.Concurrency, cfg.MaxDuration = 2_000, 100, 64, 5*time.Minute
	cfg.PayTimeout, cfg.PayFraction, cfg.CancelFraction = 0, 1, 0
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	r.WriteText(&text)
	if !r.OK() || r.Reserved != 100 || r.SoldOut != 1_900 || r.Requests != 2_000 || len(r.Errors) != 0 || r.Paid() != 100 {
		t.Fatalf("reserved %d, sold out %d, requests %d, errors %v:\n%s", r.Reserved, r.SoldOut, r.Requests, r.Errors,
			text.String())
	}
	bars := 0
	for _, b := range r.Histogram {
		bars += b.Count
	}
	if r.Latency.Count != 2_000 || bars != 2_000 || len(r.Histogram) != 40 || r.Latency.P99 > r.Latency.Max {
		t.Fatalf("latency %+v, %d bars holding %d", r.Latency, len(r.Histogram), bars)
	}
	var page bytes.Buffer
	if err := r.WriteHTML(&page); err != nil || !strings.Contains(page.String(), "p99") {
		t.Fatalf("HTML report: %v", err)
	}
}
