package apiserver_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/internal/authtoken"
)

func fastPath(on bool) func(*apiserver.Config) {
	return func(c *apiserver.Config) { c.Edge.FastPath = on }
}

// fastAnswers is seckill_api_edge_fast_answers_total{code} (every gateway of the process).
func fastAnswers(t *testing.T, code string) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "seckill_api_edge_fast_answers_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "code" && l.GetValue() == code {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

var (
	dateLine = regexp.MustCompile(`(?m)^Date: [^\r\n]*\r\n`)
	// Each answer's own trace id, while a test of the process runs go-zero's trace agent.
	traceLine = regexp.MustCompile(`(?mi)^Traceparent: [^\r\n]*\r\n`)
)

// raw sends one reservation over a fresh connection and returns the whole response as
// the server wrote it, without its Date line, and whether the fast path answered it.
// Each of headers is one more header line ("Name: value").
func (e *env) raw(t *testing.T, authorization, body string, headers ...string) (resp string, fast bool) {
	t.Helper()
	before := fastAnswers(t, "SOLD_OUT")
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(e.base, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req := "POST /v1/seckill/orders HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: fastedge-test\r\n"
	if authorization != "" {
		req += "Authorization: " + authorization + "\r\n"
	}
	for _, h := range headers {
		req += h + "\r\n"
	}
	req += fmt.Sprintf("Content-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		len(body), body)
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	return dateLine.ReplaceAllString(string(out), ""), fastAnswers(t, "SOLD_OUT") > before
}

// The fast path's SOLD_OUT is byte for byte the route chain's (a gateway with the fast path
// off), and only a reservation with a valid buyer token, for an activity whose mark is set,
// gets it; everything else is answered by the chain as before.
func TestFastPathAnswersAsTheChain(t *testing.T) {
	e := start(t) // the fast path on: the default
	off := e.gateway(fastPath(false))
	a, _ := sellOut(t, e, 1, nil, e, off)
	body := fmt.Sprintf(`{"activity_id":%d,"request_id":"fast-path-0001","quantity":1}`, a.ActivityID)
	bearer := "Bearer " + buyerToken(t, 4242)

	fastResp, fast := e.raw(t, bearer, body)
	chainResp, viaFast := off.raw(t, bearer, body)
	if !fast || viaFast {
		t.Fatalf("fast path answered: on %v, off %v; want true, false", fast, viaFast)
	}
	if !strings.HasPrefix(fastResp, "HTTP/1.1 409 ") || !strings.Contains(fastResp, `"SOLD_OUT"`) {
		t.Fatalf("fast path answer:\n%s", fastResp)
	}
	if traceLine.ReplaceAllString(fastResp, "") != traceLine.ReplaceAllString(chainResp, "") {
		t.Fatalf("fast path answer differs from the chain's:\n%q\n%q", fastResp, chainResp)
	}

	expired, err := authtoken.Buyer(buyerSecret, 4242, -time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := authtoken.Buyer("another-secret-0123456789abcdef0123456789", 4242, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	merchant := merchantToken(t, merchantID) // the merchant secret, no uid claim
	noUID, err := authtoken.Sign(buyerSecret, map[string]any{"mid": 1}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, authorization string }{
		{"no token", ""},
		{"expired", "Bearer " + expired},
		{"wrong secret", "Bearer " + forged},
		{"merchant token", "Bearer " + merchant},
		{"no uid claim", "Bearer " + noUID},
		{"garbage", "Bearer not.a.token"},
	} {
		got, fast := e.raw(t, c.authorization, body)
		want, _ := off.raw(t, c.authorization, body)
		if fast || !strings.HasPrefix(got, "HTTP/1.1 401 ") ||
			traceLine.ReplaceAllString(got, "") != traceLine.ReplaceAllString(want, "") {
			t.Errorf("%s: fast path %v, answer\n%q\nwant the chain's 401\n%q", c.name, fast, got, want)
		}
	}

	// Not sold out: the reservation goes through the chain and is sold.
	b := e.warm(map[string]any{"stock": 5, "per_user_limit": 1})
	got, fast := e.raw(t, bearer, fmt.Sprintf(`{"activity_id":%d,"request_id":"fast-path-0002"}`, b.ActivityID))
	if fast || !strings.HasPrefix(got, "HTTP/1.1 200 ") {
		t.Fatalf("an activity with stock: fast path %v, answer\n%s", fast, got)
	}
	// Bad input on a sold-out activity keeps its 400 (the chain's answer).
	got, fast = e.raw(t, bearer, fmt.Sprintf(`{"activity_id":%d,"request_id":"x","quantity":1}`, a.ActivityID))
	if fast || !strings.HasPrefix(got, "HTTP/1.1 400 ") {
		t.Fatalf("a short request_id: fast path %v, answer\n%s", fast, got)
	}
}

// The per-address reservation limit counts the fast path's answers: it sits inside it.
func TestFastPathKeepsTheAddressLimit(t *testing.T) {
	e := start(t, addrLimited(3, 1000))
	a, _ := sellOut(t, e, 1, nil)
	// sellOut's own reservation came from 127.0.0.1; these from 10.2.2.2. The first
	// SOLD_OUT comes from the inventory service and sets the mark; the fast path answers
	// the next two, and the limit still refuses the rest.
	before := fastAnswers(t, "SOLD_OUT")
	codes := map[int]int{}
	for i := range 6 {
		code, _ := e.doFrom("10.2.2.2", http.MethodPost, "/v1/seckill/orders", "Bearer "+buyerToken(t, int64(300+i)),
			reserveBody(a.ActivityID, fmt.Sprintf("addr-fast-%04d", i), 1))
		codes[code]++
	}
	if codes[http.StatusConflict] != 3 || codes[http.StatusTooManyRequests] != 3 {
		t.Fatalf("from one address: %v, want 3 SOLD_OUT and 3 RATE_LIMITED", codes)
	}
	if n := fastAnswers(t, "SOLD_OUT") - before; n != 2 {
		t.Fatalf("%v SOLD_OUT answers from the fast path, want 2", n)
	}
}
