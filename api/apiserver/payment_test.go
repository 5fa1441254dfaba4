package apiserver_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/paysign"
)

const paymentSecret = "test-payment-7c1e9a3f5b0d2e4a6c8f1b3d5e7a9c0b"

func withPaymentSecret(c *apiserver.Config) { c.PaymentAuth.Secret = paymentSecret }

// notification is the provider's body.
type notification struct {
	OrderNo string `json:"order_no"`
	Amount  int64  `json:"amount"`
	TradeNo string `json:"trade_no"`
}

// notify sends a notification signed at ts with secret (sig overrides the signature unless "").
func (e *env) notify(body any, ts int64, secret, sig string) (int, errBody, notification) {
	e.t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			e.t.Fatal(err)
		}
	}
	tsS := strconv.FormatInt(ts, 10)
	if sig == "" {
		sig = paysign.Sign([]byte(secret), tsS, raw)
	}
	req, err := http.NewRequest(http.MethodPost, e.base+"/v1/payments/notify", bytes.NewReader(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Seckill-Timestamp", tsS)
	req.Header.Set("Seckill-Signature", sig)
	return e.sendNotify(req)
}

func (e *env) sendNotify(req *http.Request) (int, errBody, notification) {
	e.t.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb errBody
	var ok notification
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		e.t.Fatal(err)
	}
	_ = json.Unmarshal(buf.Bytes(), &eb)
	_ = json.Unmarshal(buf.Bytes(), &ok)
	return resp.StatusCode, eb, ok
}

// state is an order's status and the activity's Redis book, to see that nothing changed.
func (e *env) state(aid int64, orderNo string, buyer string) string {
	e.t.Helper()
	var o orderView
	e.call(http.MethodGet, orderPath(orderNo, ""), buyer, nil, &o)
	rem, locked, sold := e.redisStock(aid)
	return fmt.Sprintf("%s rem=%d locked=%d sold=%d", o.Status, rem, locked, sold)
}

// The provider's notification pays the order as the buyer's pay does (same script, same
// outbox entry, with the trade_no); every refusal changes nothing.
func TestPaymentNotification(t *testing.T) {
	e := start(t, withPaymentSecret)
	buyer := buyerToken(t, 400)
	a := e.warm(map[string]any{"stock": 10, "per_user_limit": 5, "price": 1250})
	var r, other reserved
	e.call(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "pay-notify-1", 2), &r)
	e.call(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "pay-notify-2", 1), &other)
	now := time.Now().Unix()
	good := notification{OrderNo: r.OrderNo, Amount: 2500, TradeNo: "trade_0001-A"}
	before := e.state(a.ActivityID, r.OrderNo, buyer)

	refused := refusals(t, r, now, good, domain.NewOrderNo(a.ActivityID))
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			code, eb, _ := e.notify(tc.body, tc.ts, tc.secret, tc.sig)
			if code != tc.status || eb.Code != tc.code || eb.Msg == "" {
				t.Fatalf("got %d %+v, want %d %s", code, eb, tc.status, tc.code)
			}
		})
	}
	t.Run("compressed", func(t *testing.T) { compressedNotification(t, e, good, now) })
	if got := e.state(a.ActivityID, r.OrderNo, buyer); got != before {
		t.Fatalf("refused notifications changed %s to %s", before, got)
	}

	t.Run("paid, as the buyer's pay pays", func(t *testing.T) {
		code, eb, ok := e.notify(good, now, paymentSecret, "")
		if code != 200 || ok != (notification{OrderNo: r.OrderNo, TradeNo: good.TradeNo}) {
			t.Fatalf("got %d %+v %+v", code, eb, ok)
		}
		if got := e.state(a.ActivityID, r.OrderNo, buyer); got != "paid rem=7 locked=1 sold=2" {
			t.Fatalf("after the notification: %s", got)
		}
		e.lastEntryHas(a.ActivityID, "t=paid", "ono="+r.OrderNo, "tn="+good.TradeNo)
	})
	t.Run("the same notification again is a replay", func(t *testing.T) {
		code, _, ok := e.notify(good, now, paymentSecret, "")
		if code != 200 || ok.TradeNo != good.TradeNo {
			t.Fatalf("replay: %d %+v", code, ok)
		}
		if got := e.state(a.ActivityID, r.OrderNo, buyer); got != "paid rem=7 locked=1 sold=2" {
			t.Fatalf("after the replay: %s", got)
		}
	})
	t.Run("another trade_no for the paid order", func(t *testing.T) {
		code, eb, _ := e.notify(notification{r.OrderNo, 2500, "trade_0002"}, now, paymentSecret, "")
		if code != 409 || eb.Code != "ORDER_PAID" {
			t.Fatalf("got %d %+v", code, eb)
		}
	})
	t.Run("the trade_no for another order", func(t *testing.T) {
		code, eb, _ := e.notify(notification{other.OrderNo, 1250, good.TradeNo}, now, paymentSecret, "")
		if code != 409 || eb.Code != "TRADE_NO_REUSED" {
			t.Fatalf("got %d %+v", code, eb)
		}
		if got := e.state(a.ActivityID, other.OrderNo, buyer); got != "reserved rem=7 locked=1 sold=2" {
			t.Fatalf("after a reused trade_no: %s", got)
		}
	})
	t.Run("an order the buyer paid is paid", func(t *testing.T) {
		var third reserved
		e.call(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "pay-notify-3", 1), &third)
		e.call(http.MethodPost, orderPath(third.OrderNo, "/pay"), buyer, nil, nil)
		code, eb, _ := e.notify(notification{third.OrderNo, 1250, "trade_0004"}, now, paymentSecret, "")
		if code != 409 || eb.Code != "ORDER_PAID" {
			t.Fatalf("got %d %+v", code, eb)
		}
	})
	t.Run("a cancelled order is closed", func(t *testing.T) {
		e.call(http.MethodPost, orderPath(other.OrderNo, "/cancel"), buyer, nil, nil)
		code, eb, _ := e.notify(notification{other.OrderNo, 1250, "trade_0003"}, now, paymentSecret, "")
		if code != 409 || eb.Code != "ORDER_CLOSED" {
			t.Fatalf("got %d %+v", code, eb)
		}
	})
}

// refusal is a notification the gateway refuses, and its answer.
type refusal struct {
	name   string
	body   any
	ts     int64
	secret string
	sig    string
	status int
	code   string
}

// refusals are the refused notifications for order r (good: its right notification, unknown an
// order number of no order).
func refusals(t *testing.T, r reserved, now int64, good notification, unknown string) []refusal {
	return []refusal{
		{"malformed signature", good, now, paymentSecret, "-", 401, "UNAUTHORIZED"},
		{"wrong secret", good, now, paymentSecret + "x", "", 401, "UNAUTHORIZED"},
		{"uppercase hex", good, now, paymentSecret, strings.ToUpper(
			paysign.Sign([]byte(paymentSecret), strconv.FormatInt(now, 10), mustJSON(t, good))), 401,
			"UNAUTHORIZED"},
		{"stale timestamp", good, now - 301, paymentSecret, "", 401, "UNAUTHORIZED"},
		// 60 s past the window: now was taken before the setup calls, which take a while under load
		{"future timestamp", good, now + 360, paymentSecret, "", 401, "UNAUTHORIZED"},
		{"wrong amount", notification{r.OrderNo, 2499, "trade_0001-A"}, now, paymentSecret, "", 409, "AMOUNT_MISMATCH"},
		{"unknown order", notification{unknown, 2500, "trade_x"}, now, paymentSecret, "",
			404, "ORDER_NOT_FOUND"},
		{"bad order_no", notification{"nope", 2500, "trade_0001-A"}, now, paymentSecret, "", 400, "INVALID_ARGUMENT"},
		{"negative amount", notification{r.OrderNo, -1, "trade_0001-A"}, now, paymentSecret, "", 400,
			"INVALID_ARGUMENT"},
		{"trade_no with a space", notification{r.OrderNo, 2500, "trade 1"}, now, paymentSecret, "", 400,
			"INVALID_ARGUMENT"},
		{"trade_no of 65", notification{r.OrderNo, 2500, strings.Repeat("t", 65)}, now, paymentSecret, "", 400,
			"INVALID_ARGUMENT"},
		{"empty trade_no", notification{r.OrderNo, 2500, ""}, now, paymentSecret, "", 400, "INVALID_ARGUMENT"},
		{"amount as string", []byte(`{"order_no":"` + r.OrderNo + `","amount":"2500","trade_no":"t1"}`), now,
			paymentSecret, "", 400, "INVALID_ARGUMENT"},
	}
}

// A gzip notification is refused: the signature covers the bytes sent.
func compressedNotification(t *testing.T, e *env, n notification, now int64) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(mustJSON(t, n)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	ts := strconv.FormatInt(now, 10)
	req, err := http.NewRequest(http.MethodPost, e.base+"/v1/payments/notify", bytes.NewReader(z.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Seckill-Timestamp", ts)
	req.Header.Set("Seckill-Signature", paysign.Sign([]byte(paymentSecret), ts, z.Bytes()))
	if code, eb, _ := e.sendNotify(req); code != 400 || eb.Code != "INVALID_ARGUMENT" {
		t.Fatalf("compressed: %d %+v", code, eb)
	}
}

// lastEntryHas checks the activity's newest outbox entry for each of attrs.
func (e *env) lastEntryHas(aid int64, attrs ...string) {
	e.t.Helper()
	res, err := e.rds.Eval("local r = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1) "+
		"if #r == 0 then return '' end return r[1][2][2]", []string{e.keys.Events(aid)})
	if err != nil {
		e.t.Fatal(err)
	}
	entry := " " + fmt.Sprint(res) + " "
	for _, a := range attrs {
		if !strings.Contains(entry, " "+a+" ") {
			e.t.Fatalf("outbox entry %q lacks %s", entry, a)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// Without a payment secret every notification is refused.
func TestPaymentNotificationWithoutSecret(t *testing.T) {
	e := start(t)
	code, eb, _ := e.notify(notification{"1-00000000", 1, "t1"}, time.Now().Unix(), paymentSecret, "")
	if code != 401 || eb.Code != "UNAUTHORIZED" {
		t.Fatalf("got %d %+v", code, eb)
	}
}

// With Pay.BuyerConfirms false (deploy/) the buyer's own pay is 403 FORBIDDEN and changes
// nothing; the provider's notification pays.
func TestBuyerPayRefusedWhenOnlyTheProviderConfirms(t *testing.T) {
	e := start(t, withPaymentSecret, func(c *apiserver.Config) { c.Pay.BuyerConfirms = false })
	buyer := buyerToken(t, 401)
	a := e.warm(map[string]any{"stock": 3, "price": 99})
	var r reserved
	e.call(http.MethodPost, "/v1/seckill/orders", buyer, reserveBody(a.ActivityID, "own-pay-refused", 1), &r)
	before := e.state(a.ActivityID, r.OrderNo, buyer)
	e.expectErr(http.MethodPost, orderPath(r.OrderNo, "/pay"), buyer, nil, http.StatusForbidden, "FORBIDDEN")
	if got := e.state(a.ActivityID, r.OrderNo, buyer); got != before {
		t.Fatalf("a refused pay changed %s to %s", before, got)
	}
	code, eb, _ := e.notify(notification{r.OrderNo, 99, "trade-own-1"}, time.Now().Unix(), paymentSecret, "")
	if code != 200 {
		t.Fatalf("notification: %d %+v", code, eb)
	}
	if got := e.state(a.ActivityID, r.OrderNo, buyer); got != "paid rem=2 locked=0 sold=1" {
		t.Fatalf("after the notification: %s", got)
	}
}

// A payment secret is judged like the JWT secrets (an unset one turns notifications off), and
// must differ from them.
func TestGatewayRefusesBadPaymentSecrets(t *testing.T) {
	for _, tc := range badSecrets {
		if tc.secret == "" {
			continue // unset: every notification is 401 (TestPaymentNotificationWithoutSecret)
		}
		t.Run(tc.name, func(t *testing.T) {
			c := codeConfig(t)
			c.PaymentAuth.Secret = tc.secret
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "PaymentAuth.Secret") {
				t.Fatalf("secret %q: %v", tc.secret, err)
			}
		})
	}
	c := codeConfig(t)
	c.PaymentAuth.Secret = c.BuyerAuth.AccessSecret
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "differ") {
		t.Fatalf("the buyer secret as the payment secret: %v", err)
	}
	c.PaymentAuth.Secret = paymentSecret
	if err := c.Validate(); err != nil {
		t.Fatalf("a good payment secret is refused: %v", err)
	}
}
