package loadgen

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/seckill/seckill/devkit/apiclient"
)

// Outcome words besides the API's own error codes.
const (
	CodeOK        = apiclient.CodeOK        // HTTP 200
	CodeQueued    = apiclient.CodeQueued    // HTTP 202: an entry of the opening draw (docs/API.md)
	CodeSoldOut   = apiclient.CodeSoldOut   // the API's word, counted on its own
	CodeTransport = apiclient.CodeTransport // no HTTP response (refused, reset, timeout)
)

// retryable outcomes may be retried with the same request_id (API.md: safe to retry).
func retryable(code string) bool {
	return code == apiclient.CodeBusy || code == apiclient.CodeRateLimited || code == CodeTransport
}

// newClient speaks to base with conns requests in flight. pinned, when set, is the one
// address ("ip:port") every connection dials, whatever the URL's host resolves to later
// (checkTarget's answer: the loopback check and the connections see the same address).
func newClient(base string, conns int, timeout time.Duration, pinned string) *apiclient.Client {
	return apiclient.New(base, apiclient.Options{Conns: conns, Timeout: timeout, Pinned: pinned})
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
			return "", fmt.Errorf("target %s is not a loopback address (%s): "+
				"pass -allow-remote to load a remote deployment you operate", base, ip)
		}
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("target %q resolves to no address", base)
	}
	return net.JoinHostPort(ips[0].String(), port), nil
}
