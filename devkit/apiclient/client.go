// Package apiclient is devkit's one client of the seckill HTTP API (docs/API.md): the
// load generator, the fault suite and the bench speak to the gateway through it. Answers
// are typed: a 200 or 202 body decodes into the route's struct, anything else is an
// *Error carrying the HTTP status and the API's code word, so callers switch on
// CodeOf(err), never on message text.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Outcome words besides the API's own code words.
const (
	CodeOK          = "OK"              // HTTP 200
	CodeQueued      = "QUEUED"          // HTTP 202: an entry of the opening draw (docs/API.md)
	CodeTransport   = "TRANSPORT_ERROR" // no HTTP response (refused, reset, timeout)
	CodeBadResponse = "BAD_RESPONSE"    // a 200 or 202 whose body did not decode
	CodeRequest     = "REQUEST_ERROR"   // the request could not be built
)

// The API's code words the devkit switches on (docs/API.md "Code words").
const (
	CodeBusy           = "BUSY"
	CodeRateLimited    = "RATE_LIMITED"
	CodeSoldOut        = "SOLD_OUT"
	CodeLimitExceeded  = "LIMIT_EXCEEDED"
	CodeOrderClosed    = "ORDER_CLOSED"
	CodeInternal       = "INTERNAL"
	CodeInvalidArg     = "INVALID_ARGUMENT"
	CodeOrderNotFound  = "ORDER_NOT_FOUND"
	CodeEntryNotFound  = "ENTRY_NOT_FOUND"
	CodeActivityAbsent = "ACTIVITY_NOT_FOUND"
	CodeStarted        = "STARTED" // an edit of an activity that has started
)

// Options tune a Client.
type Options struct {
	// Conns is the number of requests expected in flight at once: the transport keeps twice
	// as many idle keep-alive connections (default 64).
	Conns int
	// Timeout bounds each exchange, from sending to the body read (default 10 s).
	Timeout time.Duration
	// Pinned, when set, is the one address ("ip:port") every connection dials, whatever
	// the URL's host resolves to later.
	Pinned string
	// Dial, when set, makes every connection (Pinned is then ignored): a load balancer's
	// choice of gateway, say.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnStatus, when set, is told every exchange's HTTP status (0: no answer came).
	OnStatus func(status int)
}

// Client speaks the HTTP API of one gateway. It is safe for concurrent use.
type Client struct {
	base     string
	http     *http.Client
	timeout  time.Duration
	onStatus func(int)
	header   http.Header // sent with every request besides the client's own (WithHeader)
}

// New is a client of the gateway at base (e.g. http://127.0.0.1:8888): keep-alive
// connections, no proxy (a load test measures the target, not a proxy), redirects never
// followed (a redirect could lead anywhere).
func New(base string, o Options) *Client {
	if o.Conns <= 0 {
		o.Conns = 64
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	dial := d.DialContext
	if pinned := o.Pinned; pinned != "" {
		dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, pinned)
		}
	}
	if o.Dial != nil {
		dial = o.Dial
	}
	hc := &http.Client{Transport: newTransport(o.Conns, dial),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Client{base: strings.TrimRight(base, "/"), http: hc, timeout: o.Timeout, onStatus: o.OnStatus}
}

// newTransport is the transport of a client with conns requests in flight: the load
// generator's settings (devkit/baseline's load runs use the same client, so the gateway and
// the baselines see the same transport).
func newTransport(conns int, dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         dial,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		IdleConnTimeout:     90 * time.Second,
	}
}

// WithHeader is a client sharing c's connections that also sends h with every request
// (a traceparent, say).
func (c *Client) WithHeader(h http.Header) *Client {
	cc := *c
	cc.header = h
	return &cc
}

// Base is the gateway's URL.
func (c *Client) Base() string { return c.base }

// Close closes the idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Meta is how one exchange went.
type Meta struct {
	Code   string        // CodeOK, CodeQueued, the API's code word, CodeTransport, HTTP_<status>...
	Status int           // the HTTP status (0: none)
	Took   time.Duration // sending .. body read
	Header http.Header   // the answer's headers (nil: none came)
}

// Error is every failed exchange: no answer (Status 0, Code CodeTransport), an answer
// other than 200 or 202 (its status and the body's code word, or HTTP_<status> when the
// body has none), or a success body that did not decode (CodeBadResponse).
type Error struct {
	Method, Path string
	Status       int
	Code, Msg    string
	Err          error // the transport's or decoder's error, if any
}

func (e *Error) Error() string {
	switch {
	case e.Status == 0:
		return fmt.Sprintf("%s %s: %v", e.Method, e.Path, e.Err)
	case e.Err != nil:
		return fmt.Sprintf("%s %s: HTTP %d: %v", e.Method, e.Path, e.Status, e.Err)
	}
	return fmt.Sprintf("%s %s: HTTP %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf is err's outcome word: CodeOK for nil, an *Error's Code, CodeRequest otherwise.
func CodeOf(err error) string {
	if err == nil {
		return CodeOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeRequest
}

// StatusOf is err's HTTP status: 200 for nil, 0 when no answer came.
func StatusOf(err error) int {
	if err == nil {
		return http.StatusOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// Do sends one request (body: nil, JSON bytes, or a value to encode) and decodes a 200 or
// 202 body into out (when not nil). err is an *Error for anything but a 200 or 202.
func (c *Client) Do(ctx context.Context, method, path, token string, body, out any) (Meta, error) {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case []byte: // already JSON
		raw = b
	default:
		enc, err := json.Marshal(body)
		if err != nil {
			return Meta{Code: CodeRequest}, err
		}
		raw = enc
	}
	m, data, err := c.exchange(ctx, method, path, token, raw, body != nil)
	if err != nil {
		return m, err
	}
	return c.answer(m, method, path, data, out)
}

// Send is Do for callers that judge the answer's body themselves (devkit/baseline's load
// runs, whose targets are not all the API): body is JSON or nil, and the answer's body is
// returned as read, beside its Meta and, for anything but a 200 or 202, an *Error.
func (c *Client) Send(ctx context.Context, method, path, token string, body []byte) (Meta, []byte, error) {
	m, data, err := c.exchange(ctx, method, path, token, body, body != nil)
	if err != nil {
		return m, nil, err
	}
	m, err = c.answer(m, method, path, data, nil)
	return m, data, err
}

// exchange sends one request and reads the answer's body; err is an *Error when no answer
// was read.
func (c *Client) exchange(ctx context.Context, method, path, token string, body []byte, hasBody bool) (
	Meta, []byte, error) {
	return c.exchangeWith(ctx, method, path, token, body, hasBody, nil)
}

// exchangeWith is exchange with extra headers (nil: none).
func (c *Client) exchangeWith(ctx context.Context, method, path, token string, body []byte, hasBody bool,
	extra http.Header) (Meta, []byte, error) {
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return Meta{Code: CodeRequest}, nil, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.observe(0)
		return Meta{Code: CodeTransport, Took: time.Since(start)}, nil,
			&Error{Method: method, Path: path, Code: CodeTransport, Err: err}
	}
	c.observe(resp.StatusCode)
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	m := Meta{Status: resp.StatusCode, Took: time.Since(start), Header: resp.Header}
	if err != nil {
		m.Code = CodeTransport
		return m, nil, &Error{Method: method, Path: path, Status: m.Status, Code: CodeTransport,
			Err: fmt.Errorf("read body: %w", err)}
	}
	return m, data, nil
}

// answer classifies a read answer.
func (c *Client) answer(m Meta, method, path string, data []byte, out any) (Meta, error) {
	switch m.Status {
	case http.StatusOK:
		m.Code = CodeOK
	case http.StatusAccepted: // only an entry of the opening draw answers 202
		m.Code = CodeQueued
	default:
		var e struct {
			Code string `json:"code"`
			Msg  string `json:"msg"`
		}
		if json.Unmarshal(data, &e) != nil || e.Code == "" {
			e.Code = fmt.Sprintf("HTTP_%d", m.Status)
		}
		m.Code = e.Code
		return m, &Error{Method: method, Path: path, Status: m.Status, Code: e.Code, Msg: e.Msg}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			m.Code = CodeBadResponse
			return m, &Error{Method: method, Path: path, Status: m.Status, Code: CodeBadResponse,
				Err: fmt.Errorf("decode %q: %w", truncate(data, 200), err)}
		}
	}
	return m, nil
}

func (c *Client) observe(status int) {
	if c.onStatus != nil {
		c.onStatus(status)
	}
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
