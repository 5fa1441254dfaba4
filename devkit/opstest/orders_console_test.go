package opstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
)

// TestConsoleOrders drives the console's orders table in headless Chromium against a
// standalone system (the writer storing the orders in MySQL): 6 buyers reserve, 3 pay; the
// merchant shows the activity's orders (6 rows), filters them by status (the 3 paid), and
// downloads them as CSV (the header and 6 lines, through the gateway's streamed export).
func TestConsoleOrders(t *testing.T) {
	sys := startSystem(t, false)
	c := apiclient.New(sys.APIURL, apiclient.Options{})
	defer c.Close()
	ctx := context.Background()
	now := time.Now().Unix()
	a, err := c.Create(ctx, sys.MerchantToken, apiclient.NewActivity{SkuID: 1, Name: "orders", Stock: 10,
		StartTime: now - 60, EndTime: now + 3600, Price: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Warmup(ctx, sys.MerchantToken, a.ActivityID); err != nil {
		t.Fatal(err)
	}
	buy(t, sys.APIURL, sys.BuyerSecret, a.ActivityID, 6, 3)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		p, err := c.Orders(ctx, sys.MerchantToken, a.ActivityID, "paid", "", 0)
		if err == nil && len(p.Orders) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the writer did not store the paid orders: %+v %v", p, err)
		}
	}

	b := startBrowser(t)
	b.call("Page.navigate", map[string]any{"url": sys.APIURL + "/console/"})
	b.waitFor("the console to load", `window.consoleState && window.consoleState.ready && window.consoleOrders`,
		30*time.Second)
	b.eval(fmt.Sprintf(`document.querySelector("#token").value = %q; document.querySelector("#save-token").click()`,
		sys.MerchantToken), nil)
	b.waitFor("the token accepted", `document.querySelector("#message").textContent.startsWith("token accepted")`,
		10*time.Second)

	b.eval(fmt.Sprintf(`document.querySelector("#orders-activity").value = "%d"; `+
		`document.querySelector("#orders-show").click()`, a.ActivityID), nil)
	b.waitFor("6 orders shown", `window.consoleOrders.rows === 6 && `+
		`document.querySelectorAll("#order-rows tr").length === 6 && document.querySelector("#orders-more").disabled`,
		10*time.Second)

	b.eval(`document.querySelector("#orders-status").value = "paid"; document.querySelector("#orders-show").click()`,
		nil)
	b.waitFor("the 3 paid orders shown", `document.querySelectorAll("#order-rows tr").length === 3 && `+
		`[...document.querySelectorAll("#order-rows tr")].every(r => r.cells[4].textContent === "paid" && `+
		`r.cells[3].textContent === "5")`, 10*time.Second)

	b.eval(`document.querySelector("#orders-status").value = ""; document.querySelector("#orders-csv").click()`, nil)
	b.waitFor("the CSV downloaded", fmt.Sprintf(`window.consoleOrders.csvLines === 7 && `+
		`document.querySelector("#message").textContent === "activity %d: CSV of 6 orders"`, a.ActivityID),
		20*time.Second)
	t.Logf("console: %q", b.text("#message"))
}
