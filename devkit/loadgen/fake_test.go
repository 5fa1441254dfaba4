package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v4"

	"github.com/seckill/seckill/devkit/apiclient"
)

const (
	buyerSecret    = "buyer-secret-for-tests"
	merchantSecret = "merchant-secret-for-tests"
)

// fakeAPI is an in-memory implementation of the API's shape (docs/API.md) for testing
// the generator: one lock decides every reservation, so it never oversells unless told
// to. Its "MySQL" applies each change dbLag after Redis, so reconciliation reports
// in_flight before consistent, as the real system does.
type fakeAPI struct {
	// faults
	oversell   int64         // reservations allowed beyond the stock
	busyFirst  bool          // answer BUSY to the first attempt of every request_id
	dropPaid   bool          // the ledger never applies payments: a lasting mismatch
	slow       time.Duration // delay of every reservation
	limit      chan struct{} // when set, at most cap(limit) reservations are served at once (each slow)
	dbLag      time.Duration
	expireLate time.Duration // expiry runs this long after expire_at
	// settleBusy: every pay and cancel of every other order is answered BUSY, on every
	// attempt; of those, every other one still takes effect (the first time), as a change
	// made but not acknowledged does.
	settleBusy bool
	// settleWrong: such an unanswered pay cancels the order instead (a wrong state).
	settleWrong bool
	settleSeen  map[string]int // order_no -> its place among the orders settled
	// readBusy: the first readBusy reads of every order are answered BUSY, as a shedding
	// gateway does under load.
	readBusy int
	readSeen map[string]int
	// merchantLimited: the first merchantLimited merchant calls are answered 429
	// RATE_LIMITED, as the gateway's MerchantLimit does past its quota.
	merchantLimited int

	mu         sync.Mutex
	nextID     int64
	activities map[int64]*fakeActivity
	orders     map[string]*fakeOrder
	requests   map[string]string // uid/request_id -> order_no
	seen       map[string]bool   // request_ids answered BUSY once
	reserveN   int
}

type fakeActivity struct {
	resp                    apiclient.Activity
	warm                    bool
	remaining, locked, sold int64
	db                      apiclient.DBBook
	pending                 []fakeChange // not yet applied to db
	users                   map[int64]int64
}

type fakeChange struct {
	at                      time.Time
	available, locked, sold int64
}

type fakeOrder struct {
	no       string
	aid, uid int64
	qty      int64
	status   string
	expireAt time.Time
}

func newFakeAPI() *fakeAPI {
	return &fakeAPI{activities: map[int64]*fakeActivity{}, orders: map[string]*fakeOrder{},
		requests: map[string]string{}, seen: map[string]bool{}, dbLag: 200 * time.Millisecond}
}

func (f *fakeAPI) server(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/admin/activities", f.merchant(f.create))
	mux.HandleFunc("GET /v1/admin/activities/{id}", f.merchant(f.getAdmin))
	mux.HandleFunc("POST /v1/admin/activities/{id}/warmup", f.merchant(f.warmup))
	mux.HandleFunc("GET /v1/admin/activities/{id}/reconcile", f.merchant(f.reconcile))
	mux.HandleFunc("POST /v1/seckill/orders", f.buyer(f.reserve))
	mux.HandleFunc("GET /v1/seckill/orders/{no}", f.buyer(f.getOrder))
	mux.HandleFunc("POST /v1/seckill/orders/{no}/pay", f.buyer(f.pay))
	mux.HandleFunc("POST /v1/seckill/orders/{no}/cancel", f.buyer(f.cancel))
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// apiError is the API's error body.
type apiError struct {
	Code string `json:"code"`
	Msg  string `json:"msg"`
}

func fail(w http.ResponseWriter, status int, code string) {
	reply(w, status, apiError{Code: code, Msg: strings.ToLower(code)})
}

// claim verifies a bearer token signed with secret and returns its integer claim.
func claim(r *http.Request, secret, name string) (int64, bool) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return 0, false
	}
	tok, err := jwt.Parse(raw, func(t *jwt.Token) (any, error) {
		if t.Method != jwt.SigningMethodHS256 {
			return nil, errors.New("alg")
		}
		return []byte(secret), nil
	})
	if err != nil || !tok.Valid {
		return 0, false
	}
	v, ok := tok.Claims.(jwt.MapClaims)[name].(float64)
	return int64(v), ok
}

func (f *fakeAPI) merchant(h func(http.ResponseWriter, *http.Request, int64)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		mid, ok := claim(r, merchantSecret, "mid")
		if !ok {
			fail(w, 401, "UNAUTHORIZED")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.merchantLimited > 0 {
			f.merchantLimited--
			fail(w, http.StatusTooManyRequests, apiclient.CodeRateLimited)
			return
		}
		f.expireDue(time.Now())
		h(w, r, mid)
	}
}

func (f *fakeAPI) buyer(h func(http.ResponseWriter, *http.Request, int64)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		uid, ok := claim(r, buyerSecret, "uid")
		if !ok {
			fail(w, 401, "UNAUTHORIZED")
			return
		}
		if f.limit != nil && r.URL.Path == "/v1/seckill/orders" {
			f.limit <- struct{}{}
			defer func() { <-f.limit }()
		}
		if f.slow > 0 && r.URL.Path == "/v1/seckill/orders" {
			time.Sleep(f.slow)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.expireDue(time.Now())
		h(w, r, uid)
	}
}

// change moves an activity's Redis books and queues the same change for its "MySQL".
func (f *fakeAPI) change(a *fakeActivity, remaining, locked, sold int64) {
	a.remaining += remaining
	a.locked += locked
	a.sold += sold
	a.pending = append(a.pending, fakeChange{at: time.Now(), available: remaining, locked: locked, sold: sold})
}

// expireDue expires orders past their time and applies lagged changes to the ledger.
func (f *fakeAPI) expireDue(now time.Time) {
	for _, o := range f.orders {
		if o.status == "reserved" && !now.Before(o.expireAt.Add(f.expireLate)) {
			o.status = "expired"
			a := f.activities[o.aid]
			a.users[o.uid] -= o.qty
			f.change(a, o.qty, -o.qty, 0)
		}
	}
	for _, a := range f.activities {
		i := 0
		for ; i < len(a.pending) && now.Sub(a.pending[i].at) >= f.dbLag; i++ {
			c := a.pending[i]
			if f.dropPaid && c.sold > 0 {
				continue
			}
			a.db.Available += c.available
			a.db.Locked += c.locked
			a.db.Sold += c.sold
		}
		a.pending = a.pending[i:]
	}
}

func (f *fakeAPI) activity(w http.ResponseWriter, r *http.Request) *fakeActivity {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	a := f.activities[id]
	if a == nil {
		fail(w, 404, "ACTIVITY_NOT_FOUND")
	}
	return a
}

func (f *fakeAPI) create(w http.ResponseWriter, r *http.Request, _ int64) {
	var req struct {
		SkuID             int64 `json:"sku_id"`
		Stock             int64 `json:"stock"`
		StartTime         int64 `json:"start_time"`
		EndTime           int64 `json:"end_time"`
		PerUserLimit      int64 `json:"per_user_limit"`
		PayTimeoutSeconds int64 `json:"pay_timeout_seconds"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Stock < 1 || req.EndTime <= req.StartTime ||
		req.PayTimeoutSeconds < 1 || req.PerUserLimit < 1 {
		fail(w, 400, "INVALID_ARGUMENT")
		return
	}
	f.nextID++
	a := &fakeActivity{resp: apiclient.Activity{ActivityID: f.nextID, Stock: req.Stock, EndTime: req.EndTime,
		PerUserLimit: req.PerUserLimit, PayTimeoutSeconds: req.PayTimeoutSeconds},
		db: apiclient.DBBook{Available: req.Stock}, users: map[int64]int64{}}
	f.activities[a.resp.ActivityID] = a
	reply(w, 200, a.resp)
}

func (f *fakeAPI) getAdmin(w http.ResponseWriter, r *http.Request, _ int64) {
	if a := f.activity(w, r); a != nil {
		resp := a.resp
		if a.warm {
			resp.Redis = &apiclient.RedisBook{Remaining: a.remaining, Locked: a.locked, Sold: a.sold}
		}
		resp.DB = a.db
		reply(w, 200, resp)
	}
}

func (f *fakeAPI) warmup(w http.ResponseWriter, r *http.Request, _ int64) {
	if a := f.activity(w, r); a != nil {
		warmed := !a.warm
		if !a.warm {
			a.warm, a.remaining = true, a.db.Available
		}
		reply(w, 200, apiclient.Warmup{Warmed: warmed, Remaining: a.remaining})
	}
}

func (f *fakeAPI) reconcile(w http.ResponseWriter, r *http.Request, _ int64) {
	a := f.activity(w, r)
	if a == nil {
		return
	}
	status, diffs := "consistent", []string{}
	if a.db != (apiclient.DBBook{Available: a.remaining, Locked: a.locked, Sold: a.sold}) {
		status = "mismatch"
		if len(a.pending) > 0 {
			status = "in_flight"
		}
		diffs = append(diffs, fmt.Sprintf("redis %d/%d/%d vs db %+v", a.remaining, a.locked, a.sold, a.db))
	}
	reply(w, 200, apiclient.Reconcile{Status: status, Diffs: diffs})
}

func (f *fakeAPI) reserve(w http.ResponseWriter, r *http.Request, uid int64) {
	var req struct {
		ActivityID int64  `json:"activity_id"`
		Quantity   int64  `json:"quantity"`
		RequestID  string `json:"request_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Quantity < 1 || len(req.RequestID) < 8 ||
		len(req.RequestID) > 64 {
		fail(w, 400, "INVALID_ARGUMENT")
		return
	}
	f.reserveN++
	if f.busyFirst && !f.seen[req.RequestID] {
		f.seen[req.RequestID] = true
		fail(w, 503, "BUSY")
		return
	}
	a := f.activities[req.ActivityID]
	if a == nil {
		fail(w, 404, "ACTIVITY_NOT_FOUND")
		return
	}
	key := fmt.Sprintf("%d/%s", uid, req.RequestID)
	if no, ok := f.requests[key]; ok {
		o := f.orders[no]
		reply(w, 200, apiclient.Reservation{OrderNo: no, Status: "reserved", ExpireAt: o.expireAt.Unix()})
		return
	}
	switch {
	case a.users[uid]+req.Quantity > a.resp.PerUserLimit:
		fail(w, 409, "LIMIT_EXCEEDED")
		return
	case a.remaining+f.oversell < req.Quantity:
		fail(w, 409, "SOLD_OUT")
		return
	}
	now := time.Now()
	o := &fakeOrder{no: fmt.Sprintf("%d-%d%04x", a.resp.ActivityID, now.UnixMilli(), f.reserveN), aid: a.resp.ActivityID,
		uid: uid, qty: req.Quantity, status: "reserved",
		expireAt: now.Add(time.Duration(a.resp.PayTimeoutSeconds) * time.Second)}
	f.orders[o.no], f.requests[key] = o, o.no
	a.users[uid] += req.Quantity
	f.change(a, -req.Quantity, req.Quantity, 0)
	reply(w, 200, apiclient.Reservation{OrderNo: o.no, Status: "reserved", ExpireAt: o.expireAt.Unix()})
}

func (f *fakeAPI) order(w http.ResponseWriter, r *http.Request, uid int64) *fakeOrder {
	o := f.orders[r.PathValue("no")]
	if o == nil || o.uid != uid {
		fail(w, 404, "ORDER_NOT_FOUND")
		return nil
	}
	return o
}

func (f *fakeAPI) getOrder(w http.ResponseWriter, r *http.Request, uid int64) {
	if f.readSeen[r.PathValue("no")] < f.readBusy {
		if f.readSeen == nil {
			f.readSeen = map[string]int{}
		}
		f.readSeen[r.PathValue("no")]++
		fail(w, 503, "BUSY")
		return
	}
	if o := f.order(w, r, uid); o != nil {
		reply(w, 200, apiclient.Order{OrderNo: o.no, Status: o.status})
	}
}

// busySettle applies settleBusy to a pay or cancel of o: true when it answered BUSY
// (after applying the change when this order is one whose change takes effect).
func (f *fakeAPI) busySettle(w http.ResponseWriter, o *fakeOrder, apply func()) bool {
	if !f.settleBusy || o == nil {
		return false
	}
	if f.settleSeen == nil {
		f.settleSeen = map[string]int{}
	}
	n, ok := f.settleSeen[o.no]
	if !ok {
		n = len(f.settleSeen)
		f.settleSeen[o.no] = n
		if n%4 == 1 && o.status == "reserved" {
			apply()
		}
	}
	if n%2 == 0 {
		return false
	}
	fail(w, 503, "BUSY")
	return true
}

func (f *fakeAPI) cancelled(o *fakeOrder) {
	o.status = "cancelled"
	a := f.activities[o.aid]
	a.users[o.uid] -= o.qty
	f.change(a, o.qty, -o.qty, 0)
}

func (f *fakeAPI) pay(w http.ResponseWriter, r *http.Request, uid int64) {
	o := f.order(w, r, uid)
	if f.busySettle(w, o, func() {
		if f.settleWrong {
			f.cancelled(o)
			return
		}
		o.status = "paid"
		f.change(f.activities[o.aid], 0, -o.qty, o.qty)
	}) {
		return
	}
	switch {
	case o == nil:
	case o.status == "reserved":
		o.status = "paid"
		f.change(f.activities[o.aid], 0, -o.qty, o.qty)
		reply(w, 200, apiclient.Order{OrderNo: o.no, Status: "paid"})
	case o.status == "paid":
		reply(w, 200, apiclient.Order{OrderNo: o.no, Status: "paid"})
	default:
		fail(w, 409, "ORDER_CLOSED")
	}
}

func (f *fakeAPI) cancel(w http.ResponseWriter, r *http.Request, uid int64) {
	o := f.order(w, r, uid)
	if f.busySettle(w, o, func() { f.cancelled(o) }) {
		return
	}
	switch {
	case o == nil:
	case o.status == "reserved":
		f.cancelled(o)
		reply(w, 200, apiclient.Order{OrderNo: o.no, Status: "cancelled"})
	case o.status == "cancelled":
		reply(w, 200, apiclient.Order{OrderNo: o.no, Status: "cancelled"})
	case o.status == "paid":
		fail(w, 409, "ORDER_PAID")
	default:
		fail(w, 409, "ORDER_CLOSED")
	}
}
