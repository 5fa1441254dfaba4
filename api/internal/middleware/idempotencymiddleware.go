package middleware

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed" // the compare-and-set script
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/internal/xerr"
)

// IdempotencyHeader is the optional header of a merchant's write.
const IdempotencyHeader = "Idempotency-Key"

// IdempotencyTTL is how long a key is remembered.
const IdempotencyTTL = 24 * time.Hour

var (
	//go:embed idempotency.lua
	idempotencyLua    string
	idempotencyScript = redis.NewScript(idempotencyLua)

	idempotencyKeyShape = regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)

	errIdemKey = xerr.New(xerr.InvalidArgument,
		"Idempotency-Key must be 8-64 characters of [A-Za-z0-9_-]")
	errIdemConflict = xerr.New(xerr.IdempotencyConflict,
		"this Idempotency-Key was used with another route or body")
	errIdemPending = xerr.New(xerr.Busy, "the first request with this Idempotency-Key is in flight, retry")
)

// idemRecord is the Redis value of one (merchant, key): pending while the first request runs,
// done with its answer after.
type idemRecord struct {
	State       string `json:"state"` // "pending" or "done"
	FP          string `json:"fp"`
	Claim       string `json:"claim,omitempty"` // the pending request's nonce
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Body        string `json:"body,omitempty"`
}

// IdempotencyMiddleware runs after MerchantClaim on the merchant's writes: a request with an
// Idempotency-Key runs once per (merchant, key); a repeat answers the first 2xx or 4xx again.
type IdempotencyMiddleware struct {
	rds *redis.Redis
	key func(mid int64, key string) string // the record's Redis key (gatekeys.Keys.Idempotency)
}

func NewIdempotencyMiddleware(rds *redis.Redis, key func(mid int64, key string) string) *IdempotencyMiddleware {
	return &IdempotencyMiddleware{rds: rds, key: key}
}

func (m *IdempotencyMiddleware) Handle(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(IdempotencyHeader)
		if key == "" {
			next(w, r)
			return
		}
		ctx := r.Context()
		if !idempotencyKeyShape.MatchString(key) {
			httpx.ErrorCtx(ctx, w, errIdemKey)
			return
		}
		mid, err := auth.MID(ctx)
		if err != nil {
			httpx.ErrorCtx(ctx, w, err)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			httpx.ErrorCtx(ctx, w, xerr.New(xerr.InvalidArgument, "the request body does not read"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fp := Fingerprint(r.Method, r.URL.Path, body)
		ctx = WithIdempotency(ctx, strconv.FormatInt(mid, 10)+":"+key, fp)
		m.serve(w, r.WithContext(ctx), next, m.key(mid, key), fp)
	}
}

// serve claims rkey for this request and runs next, or answers from the record of the first.
func (m *IdempotencyMiddleware) serve(w http.ResponseWriter, r *http.Request, next http.HandlerFunc, rkey, fp string) {
	ctx := r.Context()
	nonce := make([]byte, 12)
	_, _ = rand.Read(nonce)
	pending, _ := json.Marshal(idemRecord{State: "pending", FP: fp, Claim: hex.EncodeToString(nonce)})
	for range 2 { // a record gone between SET NX and GET is claimed again, once
		ok, err := m.rds.SetnxExCtx(ctx, rkey, string(pending), int(IdempotencyTTL/time.Second))
		if err != nil {
			httpx.ErrorCtx(ctx, w, xerr.Unavailable(err))
			return
		}
		if ok {
			m.run(w, r, next, rkey, string(pending), fp)
			return
		}
		raw, err := m.rds.GetCtx(ctx, rkey)
		if err != nil {
			httpx.ErrorCtx(ctx, w, xerr.Unavailable(err))
			return
		}
		if raw != "" {
			replay(ctx, w, raw, fp)
			return
		}
	}
	w.Header().Set("Retry-After", "1")
	httpx.ErrorCtx(ctx, w, errIdemPending)
}

// run runs next with rkey claimed, then keeps a 2xx or 4xx answer and drops the claim otherwise.
func (m *IdempotencyMiddleware) run(w http.ResponseWriter, r *http.Request, next http.HandlerFunc, rkey, pending,
	fp string) {
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	next(rec, r)
	done := ""
	if (rec.status >= 200 && rec.status < 300) || (rec.status >= 400 && rec.status < 500) {
		v, _ := json.Marshal(idemRecord{State: "done", FP: fp, Status: rec.status,
			ContentType: rec.Header().Get("Content-Type"), Body: rec.body.String()})
		done = string(v)
	}
	// The answer is sent: the record's update must not die with the client's connection.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	_, err := m.rds.ScriptRunCtx(ctx, idempotencyScript, []string{rkey}, pending, done,
		strconv.Itoa(int(IdempotencyTTL/time.Second)))
	if err != nil && !errors.Is(err, redis.Nil) {
		// A pending claim left behind expires with its TTL; the inventory service's own record
		// of the key still keeps the change from happening twice.
		logx.WithContext(ctx).Errorf("idempotency: the record %s not updated: %v", rkey, err)
	}
}

// replay answers a repeat of a key from its record.
func replay(ctx context.Context, w http.ResponseWriter, raw, fp string) {
	var rec idemRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		httpx.ErrorCtx(ctx, w, xerr.Unavailable(errors.New("idempotency: unreadable record")))
		return
	}
	switch {
	case rec.FP != fp:
		httpx.ErrorCtx(ctx, w, errIdemConflict)
	case rec.State != "done":
		w.Header().Set("Retry-After", "1")
		httpx.ErrorCtx(ctx, w, errIdemPending)
	default:
		if rec.ContentType != "" {
			w.Header().Set("Content-Type", rec.ContentType)
		}
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(rec.Status)
		_, _ = io.WriteString(w, rec.Body)
	}
}

// Fingerprint is the SHA-256 (hex) of the method, the path and the body as canonical JSON (the
// same JSON value whatever its spacing or key order); a body that is not one JSON value counts
// as its bytes.
func Fingerprint(method, path string, body []byte) string {
	h := sha256.New()
	_, _ = io.WriteString(h, method+" "+path+"\n")
	h.Write(canonicalJSON(body))
	return hex.EncodeToString(h.Sum(nil))
}

func canonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return body
	}
	out, err := json.Marshal(v) // map keys sorted
	if err != nil {
		return body
	}
	return out
}

// recorder passes the answer through and keeps a copy of it.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	r.body.Write(p)
	return r.ResponseWriter.Write(p)
}

type idemCtxKey struct{}

// Idempotency is the merchant-scoped key ("mid:key") and fingerprint of the request, for the
// inventory service to record the key with its change.
type Idempotency struct{ Key, FP string }

// WithIdempotency attaches the request's key and fingerprint to ctx.
func WithIdempotency(ctx context.Context, key, fp string) context.Context {
	return context.WithValue(ctx, idemCtxKey{}, Idempotency{Key: key, FP: fp})
}

// IdempotencyOf is the request's key and fingerprint (zero without a key).
func IdempotencyOf(ctx context.Context) Idempotency {
	v, _ := ctx.Value(idemCtxKey{}).(Idempotency)
	return v
}
