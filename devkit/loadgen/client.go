package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Outcome words besides the API's own error codes.
const (
	CodeOK        = "OK"              // HTTP 200
	CodeQueued    = "QUEUED"          // HTTP 202: an entry of the opening draw (docs/API.md)
	CodeSoldOut   = "SOLD_OUT"        // the API's word, counted on its own
	CodeTransport = "TRANSPORT_ERROR" // no HTTP response (refused, reset, timeout)
)

// retryable outcomes may be retried with the same request_id (API.md: safe to retry).
func retryable(code string) bool {
	return code == "BUSY" || code == "RATE_LIMITED" || code == CodeTransport
}

// client speaks the HTTP API.
type client struct {
	base    string
	http    *http.Client
	timeout time.Duration
}

// newClient speaks to base. pinned, when set, is the one address ("ip:port") every
// connection dials, whatever the URL's host resolves to later (checkTarget's answer: the
// loopback check and the connections see the same address). Redirects are never followed.
func newClient(base string, conns int, timeout time.Duration, pinned string) *client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	dial := d.DialContext
	if pinned != "" {
		dial = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, pinned)
		}
	}
	tr := &http.Transport{
		Proxy:               nil, // a load test measures the target, not a proxy
		DialContext:         dial,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns * 2,
		IdleConnTimeout:     90 * time.Second,
	}
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // a redirect could lead anywhere: never follow one
	}}
	return &client{base: strings.TrimRight(base, "/"), http: hc, timeout: timeout}
}

func (c *client) close() { c.http.CloseIdleConnections() }

// apiError is the API's error body.
type apiError struct {
	Code string `json:"code"`
	Msg  string `json:"msg"`
}

// call sends one request (body: a value to encode, or JSON bytes) and decodes a 200 or 202 body into out. It returns the
// outcome word (CodeOK, CodeQueued for a 202, the API's code, CodeTransport, or HTTP_<status> when the error body has
// no code) and how long the exchange took; err is non-nil for anything but a 200 or 202.
func (c *client) call(ctx context.Context, method, path, token string, body, out any) (code string, took time.Duration, err error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte: // already JSON
		rd = bytes.NewReader(b)
	default:
		b2, err := json.Marshal(body)
		if err != nil {
			return "", 0, err
		}
		rd = bytes.NewReader(b2)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return "", 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		return CodeTransport, time.Since(start), fmt.Errorf("%s %s: %w", method, path, err)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	took = time.Since(start)
	if err != nil {
		return CodeTransport, took, fmt.Errorf("%s %s: read body: %w", method, path, err)
	}
	code = CodeOK
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusAccepted: // only an entry of the opening draw answers 202
		code = CodeQueued
	default:
		var e apiError
		if json.Unmarshal(data, &e) != nil || e.Code == "" {
			e.Code = fmt.Sprintf("HTTP_%d", resp.StatusCode)
		}
		return e.Code, took, &StatusError{Method: method, Path: path, Status: resp.StatusCode, Code: e.Code, Msg: e.Msg}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return "BAD_RESPONSE", took, fmt.Errorf("%s %s: decode %q: %w", method, path, truncate(data, 200), err)
		}
	}
	return code, took, nil
}

// StatusError is a non-200 answer.
type StatusError struct {
	Method, Path string
	Status       int
	Code, Msg    string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Msg)
}

// IsCode reports whether err is an API error with the given code.
func IsCode(err error, code string) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == code
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}

// checkTarget refuses a base URL whose host is not a loopback address unless allowed: a
// load generator pointed at someone else's server by a typo is an attack. The name is
// resolved once; the address returned ("ip:port", "" when remote targets are allowed) is
// the one the client then dials, so a second lookup cannot lead elsewhere.
func checkTarget(ctx context.Context, base string, allowRemote bool) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("target %q: want http(s)://host[:port]", base)
	}
	if allowRemote {
		return "", nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	host := u.Hostname()
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return "", fmt.Errorf("target %q: %w", base, err)
		}
		ips = ips[:0]
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return "", fmt.Errorf("target %s is not a loopback address (%s): pass -allow-remote to load a remote deployment you operate", base, ip)
		}
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("target %q resolves to no address", base)
	}
	return net.JoinHostPort(ips[0].String(), port), nil
}
