package loadgen_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/devkit/standalone"
)

// With the payment secret the load generator pays through the provider's signed notification:
// against the whole system in this process, every check passes, and once the writer is
// through (reconciliation consistent) MySQL keeps each paid order's trade_no (the load
// generator names a payment after its order).
func TestRunPaysThroughTheNotification(t *testing.T) {
	sys, ctx, db := startSystem(t, func(c *standalone.Configs) {
		c.Gateway.Pay.BuyerConfirms = false // as deployed: only the notification pays
	})
	if sys.PaymentSecret == "" {
		t.Fatal("the launcher made no payment secret")
	}
	var progress strings.Builder
	r, err := loadgen.Run(ctx, loadgen.Config{
		BaseURL: sys.APIURL, BuyerSecret: sys.BuyerSecret, MerchantSecret: sys.MerchantSecret,
		PaymentSecret: sys.PaymentSecret, Buyers: 60, Concurrency: 8, Stock: 30, Price: 1999, Retries: 2,
		PayFraction: 0.5, CancelFraction: 0.2, MaxDuration: 5 * time.Second, ExpiryGrace: 20 * time.Second,
		ReconcileWait: 30 * time.Second, Seed: 5, Progress: &progress,
	})
	var text strings.Builder
	if r != nil {
		r.WriteText(&text)
	}
	if err != nil || !r.OK() || r.Pay.OK != 15 || !strings.Contains(r.PaidVia, "notification") {
		t.Fatalf("run: %v\n%s\n%s", err, progress.String(), text.String())
	}
	var paid, traded int
	if err := db.DB.QueryRow("SELECT COUNT(*), COALESCE(SUM(trade_no = order_no), 0) FROM seckill_order "+
		"WHERE activity_id = ? AND status = 'paid'", r.ActivityID).Scan(&paid, &traded); err != nil {
		t.Fatal(err)
	}
	if paid != 15 || traded != 15 {
		t.Fatalf("MySQL: %d paid orders, %d with their trade_no; want 15 and 15\n%s", paid, traded, text.String())
	}
}
