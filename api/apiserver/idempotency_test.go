package apiserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// doKey sends a raw JSON body as mid with an Idempotency-Key ("" sends none).
func (e *env) doKey(method, path string, mid int64, key, body string) (int, []byte, http.Header) {
	e.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, e.base+path, bytes.NewReader([]byte(body)))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+merchantToken(e.t, mid))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out, resp.Header
}

// merchantActivities is how many activities mid has.
func (e *env) merchantActivities(mid int64) int64 {
	e.t.Helper()
	code, raw := e.do(http.MethodGet, "/v1/admin/activities", merchantToken(e.t, mid), nil)
	var list struct{ Total int64 }
	if code != http.StatusOK || json.Unmarshal(raw, &list) != nil {
		e.t.Fatalf("list: %d %s", code, raw)
	}
	return list.Total
}

func createBody(name string, stock int64) string {
	now := time.Now().Unix()
	return fmt.Sprintf(`{"sku_id":42,"name":%q,"stock":%d,"start_time":%d,"end_time":%d}`, name, stock, now-60, now+3600)
}

// reordered is createBody's value with its keys in another order and other spacing.
func reordered(body string) string {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		panic(err)
	}
	return fmt.Sprintf("{ \"end_time\" : %v,\n \"stock\": %v, \"start_time\":%v, \"name\": %q, \"sku_id\": %v }",
		m["end_time"], m["stock"], m["start_time"], m["name"], m["sku_id"])
}

func TestIdempotentCreate(t *testing.T) {
	e := start(t)
	const path = "/v1/admin/activities"

	t.Run("same key and body: one activity, the same answer", func(t *testing.T) {
		const mid = 101
		body := createBody("idem-a", 10)
		c1, b1, _ := e.doKey(http.MethodPost, path, mid, "key-aaaa-1", body)
		c2, b2, h2 := e.doKey(http.MethodPost, path, mid, "key-aaaa-1", body)
		c3, b3, _ := e.doKey(http.MethodPost, path, mid, "key-aaaa-1", reordered(body))
		if c1 != http.StatusOK || c2 != c1 || c3 != c1 || !bytes.Equal(b1, b2) || !bytes.Equal(b1, b3) {
			t.Fatalf("answers %d %s / %d %s / %d %s", c1, b1, c2, b2, c3, b3)
		}
		if h2.Get("Idempotent-Replayed") != "true" {
			t.Errorf("the repeat is not marked replayed: %v", h2)
		}
		if n := e.merchantActivities(mid); n != 1 {
			t.Fatalf("%d activities, want 1", n)
		}
		// Without a key, the same body is another activity; the key is per merchant.
		if c, b, _ := e.doKey(http.MethodPost, path, mid, "", body); c != http.StatusOK {
			t.Fatalf("no key: %d %s", c, b)
		}
		if c, b, _ := e.doKey(http.MethodPost, path, mid+1, "key-aaaa-1", body); c != http.StatusOK || bytes.Equal(b, b1) {
			t.Fatalf("another merchant's key: %d %s", c, b)
		}
		if n := e.merchantActivities(mid); n != 2 {
			t.Fatalf("%d activities, want 2", n)
		}
	})

	t.Run("another body or route: 409", func(t *testing.T) {
		const mid = 112
		body := createBody("idem-b", 10)
		if c, b, _ := e.doKey(http.MethodPost, path, mid, "key-bbbb-1", body); c != http.StatusOK {
			t.Fatalf("first: %d %s", c, b)
		}
		var a activity
		_ = json.Unmarshal([]byte(e.mustLast(mid)), &a)
		e.expectKeyErr(path, mid, "key-bbbb-1", createBody("idem-b", 11), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		e.expectKeyErr(fmt.Sprintf("%s/%d/stock", path, a.ActivityID), mid, "key-bbbb-1", `{"delta":1}`,
			http.StatusConflict, "IDEMPOTENCY_CONFLICT")
		if n := e.merchantActivities(mid); n != 1 {
			t.Fatalf("%d activities, want 1", n)
		}
	})

	t.Run("a 4xx is kept, a malformed key is 400 and changes nothing", func(t *testing.T) {
		const mid = 113
		bad := `{"sku_id":42,"name":"","stock":10,"start_time":1,"end_time":2}`
		c1, b1, _ := e.doKey(http.MethodPost, path, mid, "key-cccc-1", bad)
		c2, b2, _ := e.doKey(http.MethodPost, path, mid, "key-cccc-1", bad)
		if c1 != http.StatusBadRequest || c2 != c1 || !bytes.Equal(b1, b2) {
			t.Fatalf("answers %d %s / %d %s", c1, b1, c2, b2)
		}
		for _, k := range []string{"short", "has space in it", "bad*char*key", string(bytes.Repeat([]byte("k"), 65))} {
			e.expectKeyErr(path, mid, k, createBody("idem-c", 10), http.StatusBadRequest, "INVALID_ARGUMENT")
		}
		if n := e.merchantActivities(mid); n != 0 {
			t.Fatalf("%d activities, want 0", n)
		}
	})
	t.Run("the gateway lost its record: the inventory service's key answers", func(t *testing.T) {
		lostRecord(t, e, path)
	})

	t.Run("concurrent repeats: one activity, the others the same answer or BUSY", func(t *testing.T) {
		concurrentRepeats(t, e, path)
	})
}

// mustLast is the body of mid's newest activity.
func (e *env) mustLast(mid int64) string {
	e.t.Helper()
	code, raw := e.do(http.MethodGet, "/v1/admin/activities", merchantToken(e.t, mid), nil)
	var list struct{ Activities []json.RawMessage }
	if code != http.StatusOK || json.Unmarshal(raw, &list) != nil || len(list.Activities) == 0 {
		e.t.Fatalf("list: %d %s", code, raw)
	}
	return string(list.Activities[0])
}

func (e *env) expectKeyErr(path string, mid int64, key, body string, status int, code string) {
	e.t.Helper()
	got, raw, _ := e.doKey(http.MethodPost, path, mid, key, body)
	var eb errBody
	_ = json.Unmarshal(raw, &eb)
	if got != status || eb.Code != code || eb.Msg == "" {
		e.t.Errorf("key %q: got %d %s, want %d %s", key, got, raw, status, code)
	}
}

func concurrentRepeats(t *testing.T, e *env, path string) {
	const mid = 114
	body := createBody("idem-d", 10)
	type answer struct {
		code  int
		body  []byte
		retry string
	}
	answers := make([]answer, 8)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			c, b, h := e.doKey(http.MethodPost, path, mid, "key-dddd-1", body)
			answers[i] = answer{c, b, h.Get("Retry-After")}
		})
	}
	wg.Wait()
	var first []byte
	for _, a := range answers {
		if a.code == http.StatusOK && first == nil {
			first = a.body
		}
	}
	for _, a := range answers {
		ok := a.code == http.StatusOK && bytes.Equal(a.body, first)
		busy := a.code == http.StatusServiceUnavailable && a.retry == "1" && bytes.Contains(a.body, []byte("BUSY"))
		if !ok && !busy {
			t.Errorf("answer %d %s (first %s)", a.code, a.body, first)
		}
	}
	if n := e.merchantActivities(mid); n != 1 {
		t.Fatalf("%d activities, want 1", n)
	}
}

func TestIdempotentAdjust(t *testing.T) {
	e := start(t)
	a := e.warm(map[string]any{"stock": 10})
	path := fmt.Sprintf("/v1/admin/activities/%d/stock", a.ActivityID)
	c1, b1, _ := e.doKey(http.MethodPost, path, merchantID, "adj-key-1", `{"delta": 5}`)
	c2, b2, _ := e.doKey(http.MethodPost, path, merchantID, "adj-key-1", `{ "delta":5 }`)
	if c1 != http.StatusOK || c2 != c1 || !bytes.Equal(b1, b2) {
		t.Fatalf("answers %d %s / %d %s", c1, b1, c2, b2)
	}
	// The gateway lost its record (or a retry after BUSY): the inventory service's record of the
	// key, written with the change, answers the first result and applies nothing again.
	if _, err := e.rds.Del(gatekeys.Keys{Prefix: e.keys.Prefix}.Idempotency(merchantID, "adj-key-1")); err != nil {
		t.Fatal(err)
	}
	c3, b3, h3 := e.doKey(http.MethodPost, path, merchantID, "adj-key-1", `{"delta":5}`)
	if c3 != http.StatusOK || !bytes.Equal(b1, b3) || h3.Get("Idempotent-Replayed") != "" {
		t.Fatalf("after the record's loss: %d %s, want %s", c3, b3, b1)
	}
	if remaining, _, _ := e.redisStock(a.ActivityID); remaining != 15 {
		t.Fatalf("remaining %d, want 15: one change", remaining)
	}
	// Without the gateway's record, another body under the key is still a conflict.
	if _, err := e.rds.Del(gatekeys.Keys{Prefix: e.keys.Prefix}.Idempotency(merchantID, "adj-key-1")); err != nil {
		t.Fatal(err)
	}
	e.expectKeyErr(path, merchantID, "adj-key-1", `{"delta":6}`, http.StatusConflict, "IDEMPOTENCY_CONFLICT")
	// Another key is another change; a withdrawal refused (409) is kept as answered.
	if c, b, _ := e.doKey(http.MethodPost, path, merchantID, "adj-key-2", `{"delta":5}`); c != http.StatusOK {
		t.Fatalf("another key: %d %s", c, b)
	}
	e.expectKeyErr(path, merchantID, "adj-key-3", `{"delta":-100}`, http.StatusConflict, "INSUFFICIENT_STOCK")
	e.expectKeyErr(path, merchantID, "adj-key-3", `{"delta":-100}`, http.StatusConflict, "INSUFFICIENT_STOCK")
	if remaining, _, _ := e.redisStock(a.ActivityID); remaining != 20 {
		t.Fatalf("remaining %d, want 20", remaining)
	}
}

// lostRecord: a creation retried after the gateway's record is gone (deleted; as after a 5xx
// whose change was made) finds the key inserted with the activity: the same activity, once.
func lostRecord(t *testing.T, e *env, path string) {
	const mid = 115
	body := createBody("idem-e", 10)
	c1, b1, _ := e.doKey(http.MethodPost, path, mid, "key-eeee-1", body)
	if c1 != http.StatusOK {
		t.Fatalf("first: %d %s", c1, b1)
	}
	for range 2 {
		if _, err := e.rds.Del(gatekeys.Keys{Prefix: e.keys.Prefix}.Idempotency(mid, "key-eeee-1")); err != nil {
			t.Fatal(err)
		}
		c2, b2, h2 := e.doKey(http.MethodPost, path, mid, "key-eeee-1", reordered(body))
		if c2 != http.StatusOK || !bytes.Equal(b1, b2) || h2.Get("Idempotent-Replayed") != "" {
			t.Fatalf("retry: %d %s, want %s", c2, b2, b1)
		}
	}
	if _, err := e.rds.Del(gatekeys.Keys{Prefix: e.keys.Prefix}.Idempotency(mid, "key-eeee-1")); err != nil {
		t.Fatal(err)
	}
	e.expectKeyErr(path, mid, "key-eeee-1", createBody("idem-e2", 10), http.StatusConflict, "IDEMPOTENCY_CONFLICT")
	if n := e.merchantActivities(mid); n != 1 {
		t.Fatalf("%d activities, want 1", n)
	}
}

// TestIdempotentCreateRPC: concurrent creations with one key straight to the inventory service
// (no gateway record in front): one activity, every answer it.
func TestIdempotentCreateRPC(t *testing.T) {
	e := start(t)
	const mid = 121
	now := time.Now().Unix()
	req := &inventoryclient.CreateActivityReq{MerchantId: mid, SkuId: 42, Name: "idem-rpc", Total: 10,
		StartTime: now - 60, EndTime: now + 3600, PerUserLimit: 1, PayTimeoutSeconds: 900,
		IdempotencyKey: "121:key-rpc-1", IdempotencyFp: "fp-1"}
	ids := make([]int64, 8)
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			res, err := e.inv.CreateActivity(t.Context(), req)
			ids[i], errs[i] = res.GetActivity().GetActivityId(), err
		})
	}
	wg.Wait()
	for i := range ids {
		if errs[i] != nil || ids[i] != ids[0] || ids[0] < 1 {
			t.Errorf("answer %d: id %d, %v (first %d)", i, ids[i], errs[i], ids[0])
		}
	}
	other := proto.CloneOf(req)
	other.IdempotencyFp = "fp-2"
	if _, err := e.inv.CreateActivity(t.Context(), other); xerr.FromStatus(err).Code != xerr.IdempotencyConflict {
		t.Errorf("another fingerprint: %v", err)
	}
	if n := e.merchantActivities(mid); n != 1 {
		t.Fatalf("%d activities, want 1", n)
	}
}
