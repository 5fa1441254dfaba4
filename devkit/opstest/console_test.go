package opstest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/internal/authtoken"
)

// TestMerchantConsole drives the merchant console (/console/) in headless Chromium against
// a standalone system: the page loads; a merchant pastes a token; an error from the API is
// shown as a message (creating an activity with stock 0: INVALID_ARGUMENT); it creates an
// activity, which the list shows; it warms it up; it watches a sale (buyers reserve and pay
// through the API meanwhile) and sees both books' counters move and the chart drawn, with
// reservations/s and the reconciliation status; it adjusts the stock; then the sale-day views
// (saleDay).
func TestMerchantConsole(t *testing.T) {
	sys := startSystem(t, false)
	b := startBrowser(t)
	t.Cleanup(func() {
		if t.Failed() {
			b.screenshot(filepath.Join(t.TempDir(), "console.png"))
		}
	})

	// 1. The page loads.
	b.call("Page.navigate", map[string]any{"url": sys.APIURL + "/console/"})
	b.waitFor("the console to load",
		`window.consoleState && window.consoleState.ready && document.querySelector("#token")`, 30*time.Second)
	if title := b.text("h1"); title != "seckill merchant console" {
		t.Fatalf("title %q", title)
	}

	// 2. The merchant pastes a token (merchant 1, as make run prints) and sees the list (empty).
	b.eval(fmt.Sprintf(`document.querySelector("#token").value = %q; document.querySelector("#save-token").click()`,
		sys.MerchantToken), nil)
	b.waitFor("the token accepted",
		`document.querySelector("#message").textContent.includes("token accepted: 0 activities")`, 10*time.Second)

	// 3. An error from the API is shown as a message.
	b.eval(`const f = document.querySelector("#create-form"); f.stock.value = "0"; f.requestSubmit()`, nil)
	b.waitFor("the API's error shown", `document.querySelector("#message").classList.contains("error") && `+
		`document.querySelector("#message").textContent.startsWith("INVALID_ARGUMENT: ")`, 10*time.Second)
	t.Logf("error shown: %q", b.text("#message"))

	// 4. It creates an activity (stock 30, live now, limit 1, pay timeout 900 s).
	b.eval(`const g = document.querySelector("#create-form"); `+
		`g.stock.value = "30"; g.name.value = "console sale"; g.requestSubmit()`, nil)
	b.waitFor("the activity created and listed",
		`document.querySelector("#message").textContent.startsWith("created activity ") && `+
			`document.querySelectorAll("#activity-rows tr").length === 1`, 10*time.Second)
	var aid int64
	b.eval(`Number(document.querySelector("#activity-rows tr").dataset.id)`, &aid)
	if aid < 1 {
		t.Fatalf("no activity id in the list")
	}

	// 5. It warms it up (or learns that the scheduled warm-up job, which may win the race, did).
	b.eval(`document.querySelector("#activity-rows tr button.warm").click()`, nil)
	b.waitFor("warmed", fmt.Sprintf(`["activity %[1]d warmed up: remaining 30", `+
		`"activity %[1]d was already warm: remaining 30"].includes(document.querySelector("#message").textContent)`,
		aid), 10*time.Second)
	t.Logf("warm-up: %q", b.text("#message"))

	// 6. It watches the sale while 20 buyers reserve, 10 of whom pay.
	b.eval(`document.querySelector("#activity-rows tr button.watch").click()`, nil)
	b.waitFor("the watch panel", `!document.querySelector("#watch").hidden && `+
		`document.querySelector("#redis-remaining").textContent === "30"`, 10*time.Second)
	buy(t, sys.APIURL, sys.BuyerSecret, aid, 20, 10)
	b.waitFor("Redis counters moving", allText("10", "#redis-remaining", "#redis-locked", "#redis-sold"), 20*time.Second)
	b.waitFor("MySQL counters following", allText("10", "#db-available", "#db-locked", "#db-sold"), 30*time.Second)
	b.waitFor("a chart of several samples", `window.consoleState.drawn >= 3 && `+
		`window.consoleState.history.some(p => p.redis && p.redis.remaining === 30) && `+
		`window.consoleState.history.some(p => p.redis && p.redis.sold === 10)`, 10*time.Second)
	b.waitFor("the reconciliation status",
		`["consistent", "in_flight"].includes(document.querySelector("#reconcile-status").textContent)`, 15*time.Second)
	var seenRate bool
	b.eval(`Number(document.querySelector("#rate").textContent) >= 0`, &seenRate)
	if !seenRate {
		t.Fatalf("reservations/s not shown: %q", b.text("#rate"))
	}

	// 7. It adjusts the stock.
	b.eval(`document.querySelector("#delta").value = "5"; document.querySelector("#adjust-button").click()`, nil)
	b.waitFor("the stock adjusted", fmt.Sprintf(`document.querySelector("#message").textContent === `+
		`"activity %d: stock +5, total 35, remaining 15"`, aid), 10*time.Second)
	b.waitFor("remaining 15 on the page", allText("15", "#redis-remaining"), 10*time.Second)
	t.Logf("activity %d: redis %s/%s/%s, mysql %s/%s/%s, reconcile %s, reservations/s %s", aid,
		b.text("#redis-remaining"), b.text("#redis-locked"), b.text("#redis-sold"),
		b.text("#db-available"), b.text("#db-locked"), b.text("#db-sold"), b.text("#reconcile-status"),
		b.text("#rate"))

	// 8. The sale day: reconcile, stock history, price, edit, end now (console_saleday_test.go).
	saleDay(t, b, sys, aid)
}

// allText is a condition for waitFor: the element of every selector has the text want.
func allText(want string, selectors ...string) string {
	var conds []string
	for _, sel := range selectors {
		conds = append(conds, fmt.Sprintf(`document.querySelector(%q).textContent === %q`, sel, want))
	}
	return strings.Join(conds, " && ")
}

// buy reserves one unit for each of n buyers through the API, and pays the first paid.
func buy(t *testing.T, base, secret string, aid int64, n, paid int) {
	t.Helper()
	c := apiclient.New(base, apiclient.Options{Conns: n})
	defer c.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uid := int64(700000 + i)
			tok, err := authtoken.Buyer(secret, uid, time.Hour)
			if err != nil {
				errs <- err
				return
			}
			time.Sleep(time.Duration(i) * 100 * time.Millisecond) // a sale over two seconds
			r, _, err := c.Reserve(ctx, tok, apiclient.ReserveBody(aid, 1, fmt.Sprintf("console-%d", uid)))
			if err != nil {
				errs <- err
				return
			}
			if i < paid {
				if _, _, err := c.Pay(ctx, tok, r.OrderNo); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
