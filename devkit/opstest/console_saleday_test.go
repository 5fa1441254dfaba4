package opstest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/internal/authtoken"
)

// saleDay drives the console's sale-day views on the watched live activity aid (after
// TestMerchantConsole's stock change of +5 to 35): reconciliation every 30 s and on demand,
// the stock history, a price set on creation and shown, an edit before the start (the form),
// an edit refused once the sale started, and ending the sale now behind a confirmation
// dialog. Each step is checked through the API as well as on the page. The screenshots
// (the page with the dialog open, then after the end) go to $SECKILL_CONSOLE_SCREENSHOTS, or
// $TMPDIR/seckill-console-<test name> (kept after the test, for a look).
func saleDay(t *testing.T, b *browser, sys *standalone.System, aid int64) {
	t.Helper()
	c := apiclient.New(sys.APIURL, apiclient.Options{Conns: 1, Timeout: 10 * time.Second})
	defer c.Close()
	ctx := context.Background()

	// Reconciliation: every 30 s, and now on demand.
	var every float64
	b.eval(`window.consoleState.reconcileEveryMs`, &every)
	if every != 30000 {
		t.Fatalf("reconciliation every %v ms, want 30000", every)
	}
	var before float64
	b.eval(`window.consoleState.reconciled`, &before)
	b.eval(`document.querySelector("#reconcile-button").click()`, nil)
	b.waitFor("a reconciliation on demand", fmt.Sprintf(`window.consoleState.reconciled > %v && `+
		`document.querySelector("#reconcile-at").textContent !== "-"`, before), 15*time.Second)

	// The stock history shows the +5 once the writer applied it.
	b.waitFor("the stock history", `(document.querySelector("#adjustments-refresh").click(), `+
		`Array.from(document.querySelectorAll("#adjustment-rows tr")).some(r => `+
		`r.cells.length === 3 && r.cells[1].textContent === "+5" && r.cells[2].textContent === "35"))`, 30*time.Second)

	// A price set on creation, for a sale an hour away, shown in the list.
	b.eval(`const h = document.querySelector("#create-form"); h.name.value = "later sale"; h.stock.value = "50"; `+
		`h.price.value = "250"; h.start_time.value = toLocalInput(new Date(Date.now() + 3600e3)); `+
		`h.end_time.value = toLocalInput(new Date(Date.now() + 7200e3)); h.requestSubmit()`, nil)
	b.waitFor("the priced activity listed", `document.querySelector("#message").textContent.startsWith("created `+
		`activity ") && Array.from(document.querySelectorAll("#activity-rows tr")).some(r => `+
		`r.cells[1].textContent === "later sale" && r.cells[7].textContent === "250")`, 10*time.Second)
	var later int64
	b.eval(`Number(Array.from(document.querySelectorAll("#activity-rows tr")).find(r => `+
		`r.cells[1].textContent === "later sale").dataset.id)`, &later)

	// The live activity's Edit is offered no more; the later one's form edits it.
	var liveDisabled bool
	b.eval(fmt.Sprintf(`document.querySelector('#activity-rows tr[data-id="%d"] button.edit').disabled`, aid),
		&liveDisabled)
	if !liveDisabled {
		t.Fatal("Edit offered for a started sale")
	}
	b.eval(fmt.Sprintf(`document.querySelector('#activity-rows tr[data-id="%d"] button.edit').click()`, later), nil)
	b.waitFor("the edit form, filled in", `!document.querySelector("#edit").hidden && `+
		`document.querySelector("#edit-form").price.value === "250"`, 10*time.Second)
	b.eval(`const k = document.querySelector("#edit-form"); k.name.value = "later sale, edited"; `+
		`k.price.value = "300"; k.per_user_limit.value = "2"`, nil)
	fullScreenshot(b, filepath.Join(screenshotDir(t), "console-edit.png"))
	b.eval(`document.querySelector("#edit-form").requestSubmit()`, nil)
	b.waitFor("the edit saved", fmt.Sprintf(`document.querySelector("#message").textContent.startsWith(`+
		`"edited activity %d (later sale, edited")`, later), 10*time.Second)
	if a, err := c.Admin(ctx, sys.MerchantToken, later); err != nil || a.Price != 300 || a.PerUserLimit != 2 ||
		a.Name != "later sale, edited" {
		t.Fatalf("after the console's edit the API says %+v %v", a, err)
	}
	// An edit of the started sale (the form opened by hand) is refused with the API's STARTED.
	b.eval(fmt.Sprintf(`openEdit(window.consoleState.watched); document.querySelector("#edit-form").requestSubmit(); %d`,
		aid), nil)
	b.waitFor("STARTED shown", `document.querySelector("#message").classList.contains("error") && `+
		`document.querySelector("#message").textContent.startsWith("STARTED: ")`, 10*time.Second)
	b.eval(`document.querySelector("#edit-cancel").click()`, nil)

	endNowSteps(t, b, c, sys, aid)
}

// endNowSteps: "End the sale now" asks first; "Keep selling" changes nothing, "End the sale"
// ends it, and a reservation is then ENDED.
func endNowSteps(t *testing.T, b *browser, c *apiclient.Client, sys *standalone.System, aid int64) {
	t.Helper()
	ctx := context.Background()
	dir := screenshotDir(t)
	b.eval(`document.querySelector("#end-button").click()`, nil)
	b.waitFor("the confirmation dialog", fmt.Sprintf(`document.querySelector("#end-dialog").open && `+
		`document.querySelector("#end-question").textContent === "End the sale of activity #%d now?"`, aid), 5*time.Second)
	fullScreenshot(b, filepath.Join(dir, "console-end-dialog.png"))
	b.eval(`document.querySelector("#end-keep").click()`, nil)
	b.waitFor("the dialog closed", `!document.querySelector("#end-dialog").open`, 5*time.Second)
	if a, err := c.Admin(ctx, sys.MerchantToken, aid); err != nil || a.EndTime <= time.Now().Unix() {
		t.Fatalf("kept selling, yet the API says %+v %v", a, err)
	}
	b.eval(`document.querySelector("#end-button").click()`, nil)
	b.waitFor("the dialog again", `document.querySelector("#end-dialog").open`, 5*time.Second)
	b.eval(`document.querySelector("#end-confirm").click()`, nil)
	b.waitFor("the sale ended", fmt.Sprintf(`document.querySelector("#message").textContent.startsWith(`+
		`"activity %d ended at ") && document.querySelector("#watch-end").textContent.endsWith("(ended)")`, aid),
		10*time.Second)
	if a, err := c.Admin(ctx, sys.MerchantToken, aid); err != nil || a.EndTime > time.Now().Unix() {
		t.Fatalf("ended on the page, yet the API says %+v %v", a, err)
	}
	tok, err := authtoken.Buyer(sys.BuyerSecret, 799999, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, m, _ := c.Reserve(ctx, tok, apiclient.ReserveBody(aid, 1, "console-after-end")); m.Code != "ENDED" {
		t.Fatalf("a reservation after the console's end: %s", m.Code)
	}
	fullScreenshot(b, filepath.Join(dir, "console-sale-day.png"))
	t.Logf("screenshots: %s", dir)
}

// screenshotDir is $SECKILL_CONSOLE_SCREENSHOTS, or $TMPDIR/seckill-console-<test name>.
func screenshotDir(t *testing.T) string {
	if dir := os.Getenv("SECKILL_CONSOLE_SCREENSHOTS"); dir != "" {
		return dir
	}
	return filepath.Join(os.TempDir(), "seckill-console-"+t.Name())
}

// fullScreenshot saves a PNG of the whole page, beyond the viewport.
func fullScreenshot(b *browser, file string) {
	b.t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		b.t.Fatal(err)
	}
	raw := b.call("Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true})
	var res struct {
		Data []byte `json:"data"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(file, res.Data, 0o644); err != nil {
		b.t.Fatal(err)
	}
}
