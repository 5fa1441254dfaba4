package apiserver_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/api/apiserver"
)

type drawPublic struct {
	Seconds    int64  `json:"seconds"`
	DrawAt     int64  `json:"draw_at"`
	Commitment string `json:"commitment"`
	Seed       string `json:"seed"`
	Status     string `json:"status"` // the admin view's
}

type drawAudit struct {
	Stock      int64  `json:"stock"`
	Commitment string `json:"commitment"`
	Seed       string `json:"seed"`
	Status     string `json:"status"`
	Entrants   []struct {
		UID      int64 `json:"uid"`
		Quantity int64 `json:"quantity"`
	} `json:"entrants"`
	Winners []int64 `json:"winners"`
}

type allLogs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *allLogs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *allLogs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// captureAllLogs sends the log of both services (one process), every level, to a buffer.
func captureAllLogs(t *testing.T) *allLogs {
	logs := &allLogs{}
	prev := logx.Reset()
	logx.SetWriter(logx.NewWriter(logs))
	logx.SetLevel(logx.DebugLevel)
	t.Cleanup(func() { logx.SetLevel(logx.SevereLevel); logx.Reset(); logx.SetWriter(prev) })
	return logs
}

// recomputeAudit is the draw anyone recomputes from the audit: entrants by HMAC-SHA256(seed,
// uid in decimal) as byte strings, each served its quantity against stock, one not fitting
// skipped. The winners by uid.
func recomputeAudit(t *testing.T, a drawAudit) []int64 {
	t.Helper()
	seed, err := hex.DecodeString(a.Seed)
	if err != nil || len(seed) != 32 {
		t.Fatalf("audit seed %q: %v", a.Seed, err)
	}
	key := func(uid int64) []byte {
		m := hmac.New(sha256.New, seed)
		m.Write([]byte(strconv.FormatInt(uid, 10)))
		return m.Sum(nil)
	}
	es := slices.Clone(a.Entrants)
	slices.SortFunc(es, func(x, y struct {
		UID      int64 `json:"uid"`
		Quantity int64 `json:"quantity"`
	}) int {
		return bytes.Compare(key(x.UID), key(y.UID))
	})
	won := []int64{}
	left := a.Stock
	for _, e := range es {
		if e.Quantity <= left {
			left -= e.Quantity
			won = append(won, e.UID)
		}
	}
	slices.Sort(won)
	return won
}

// drawViews reads the draw of the create answer's activity from the buyer's and the admin's
// views and the audit.
func (e *env) drawViews(aid int64) (buyer, admin drawPublic, audit drawAudit) {
	var b, a struct {
		Draw *drawPublic `json:"draw"`
	}
	e.call(http.MethodGet, fmt.Sprintf("/v1/activities/%d", aid), buyerToken(e.t, 1), nil, &b)
	e.call(http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d", aid), merchantToken(e.t, merchantID), nil, &a)
	e.call(http.MethodGet, fmt.Sprintf("/v1/admin/activities/%d/draw", aid), merchantToken(e.t, merchantID), nil,
		&audit)
	if b.Draw == nil || a.Draw == nil {
		e.t.Fatalf("a view without its draw: buyer %+v admin %+v", b.Draw, a.Draw)
	}
	return *b.Draw, *a.Draw, audit
}

// The draw's audit through the gateway: every view carries draw {seconds, draw_at, commitment,
// seed} with the create answer's commitment and no seed until the draw is done (nor in any log
// line of either service); the audit is the merchant's only; once done, the seed's SHA-256 is the
// commitment and the audit's recomputed winners are the buyers whose replay is 200.
func TestDrawAuditThroughTheGateway(t *testing.T) {
	e := start(t)
	logs := captureAllLogs(t)
	now := time.Now().Unix()
	var created struct {
		activity
		Draw *drawPublic `json:"draw"`
	}
	e.call(http.MethodPost, "/v1/admin/activities", merchantToken(t, merchantID), map[string]any{"sku_id": 42,
		"name": "phone", "stock": 7, "per_user_limit": 2, "start_time": now - 1, "end_time": now + 3600,
		"draw_seconds": 4}, &created)
	d, aid := created.Draw, created.ActivityID
	if d == nil || d.Seconds != 4 || d.DrawAt != now+3 || len(d.Commitment) != 64 || d.Seed != "" ||
		d.Commitment != strings.ToLower(d.Commitment) {
		t.Fatalf("created: draw %+v", d)
	}
	const buyers = 16
	for uid := int64(1); uid <= buyers; uid++ {
		code, raw := e.reserveRetryingBusy(uid, reserveBody(aid, fmt.Sprintf("entry-%08d", uid), 1+uid%2))
		if code != http.StatusAccepted {
			t.Fatalf("entry of %d: %d %s", uid, code, raw)
		}
	}
	auditPath := fmt.Sprintf("/v1/admin/activities/%d/draw", aid)
	e.expectErr(http.MethodGet, auditPath, merchantToken(t, merchantID+1), nil, http.StatusNotFound,
		"ACTIVITY_NOT_FOUND")
	e.expectErr(http.MethodGet, auditPath, buyerToken(t, 1), nil, http.StatusUnauthorized, "UNAUTHORIZED")
	var audit drawAudit
	for deadline := time.Now().Add(20 * time.Second); audit.Status != "done"; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the draw was not done: %+v", audit)
		}
		buyer, admin, a := e.drawViews(aid)
		for _, v := range []drawPublic{buyer, admin, {Commitment: a.Commitment, Seed: a.Seed}} {
			if v.Commitment != d.Commitment {
				t.Fatalf("a view's commitment %q, created with %q", v.Commitment, d.Commitment)
			}
		}
		if a.Status != "done" && (a.Seed != "" || admin.Seed != "" || buyer.Seed != "") {
			t.Fatalf("the seed shown while the draw is %s", a.Status)
		}
		if a.Status != "done" && len(a.Entrants) != buyers {
			t.Fatalf("audit of %d entrants before the draw, want %d", len(a.Entrants), buyers)
		}
		audit = a
	}
	seed, err := hex.DecodeString(audit.Seed)
	if sum := sha256.Sum256(seed); err != nil || hex.EncodeToString(sum[:]) != d.Commitment {
		t.Fatalf("seed %q does not hash to the commitment %q", audit.Seed, d.Commitment)
	}
	if audit.Stock != 7 || !slices.Equal(recomputeAudit(t, audit), audit.Winners) {
		t.Fatalf("audit: stock %d winners %v, recomputed %v", audit.Stock, audit.Winners, recomputeAudit(t, audit))
	}
	var won []int64
	for uid := int64(1); uid <= buyers; uid++ {
		code, _ := e.do(http.MethodPost, "/v1/seckill/orders", buyerToken(t, uid),
			reserveBody(aid, fmt.Sprintf("entry-%08d", uid), 1+uid%2))
		if code == http.StatusOK {
			won = append(won, uid)
		}
	}
	if !slices.Equal(won, audit.Winners) || len(won) == 0 {
		t.Fatalf("replays won %v, the audit says %v", won, audit.Winners)
	}
	time.Sleep(200 * time.Millisecond) // the buyer's view follows Redis's done mark
	if buyer, admin, _ := e.drawViews(aid); buyer.Seed != audit.Seed || admin.Seed != audit.Seed {
		t.Fatalf("after the draw: buyer's seed %q, admin's %q, want %q", buyer.Seed, admin.Seed, audit.Seed)
	}
	escaped := jsonText(sqlEscaped(string(seed))) // as a logged SQL argument in a JSON log line
	for _, form := range []string{audit.Seed, strings.ToUpper(audit.Seed), string(seed),
		escaped} {
		if strings.Contains(logs.String(), form) {
			t.Fatalf("a log line shows the seed (%q)", form)
		}
	}
	if !strings.Contains(logs.String(), d.Commitment) {
		t.Fatal("the draw's log line was not captured: the log check proves nothing")
	}
	auditOutlastsTheSaleTimeouts(e, auditPath, audit)
}

// auditOutlastsTheSaleTimeouts: the audit of a large draw outlasts the sale's bounds (the
// route's 3 s, the zRPC client's 2 s), so its route has Reconcile's timeout and the call
// inherits it. Here the sale's bounds are far shorter than any audit (50 ms and 1 ms).
func auditOutlastsTheSaleTimeouts(e *env, auditPath string, audit drawAudit) {
	short := e.gateway(func(c *apiserver.Config) { c.Timeout, c.Inventory.Timeout = 50, 1 })
	var again drawAudit
	short.call(http.MethodGet, auditPath, merchantToken(e.t, merchantID), nil, &again)
	if again.Seed != audit.Seed || len(again.Entrants) != len(audit.Entrants) {
		e.t.Fatalf("the audit through a gateway with the sale's bounds short: %+v", again)
	}
}

// sqlEscaped is a string argument as go-zero's sqlx writes it into a logged statement: rune by
// rune (an invalid byte is U+FFFD), with backslash escapes.
func sqlEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case 0:
			b.WriteString(`\x00`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		case '\\', '\'', '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case 0x1a:
			b.WriteString(`\x1a`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// jsonText is s as go-zero's JSON log writes it inside a string (no HTML escaping).
func jsonText(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := strings.TrimSpace(b.String())
	return out[1 : len(out)-1]
}

// reserveRetryingBusy posts a reservation, again with the same body while it is BUSY (the
// first of an activity not warmed backfills it into Redis; on a loaded machine that takes a
// while), as docs/API.md tells a client.
func (e *env) reserveRetryingBusy(uid int64, body map[string]any) (int, []byte) {
	e.t.Helper()
	code, raw := e.do(http.MethodPost, "/v1/seckill/orders", buyerToken(e.t, uid), body)
	for try := 0; code == http.StatusServiceUnavailable && try < 20; try++ {
		time.Sleep(100 * time.Millisecond)
		code, raw = e.do(http.MethodPost, "/v1/seckill/orders", buyerToken(e.t, uid), body)
	}
	return code, raw
}
