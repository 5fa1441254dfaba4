package middleware

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// A ClientIP names a request's client: the connection's remote address, or, on a request
// from one of the trusted proxies, the address its Header gives.
type ClientIP struct {
	Header  string // X-Real-IP, X-Forwarded-For (its last address not a proxy's); "": none
	proxies []netip.Prefix
}

// NewClientIP believes header on requests from proxies (addresses or CIDR blocks).
func NewClientIP(header string, proxies []string) (ClientIP, error) {
	c := ClientIP{Header: header}
	for _, p := range proxies {
		pfx, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return c, fmt.Errorf("config: AddrLimit.TrustedProxies: %q is not an address or a CIDR block", p)
			}
			pfx = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		c.proxies = append(c.proxies, pfx.Masked())
	}
	return c, nil
}

// Addr is r's client address.
func (c ClientIP) Addr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if c.Header == "" || !c.trusted(host) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values(c.Header), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- { // from the nearest hop back
		addr, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return host
		}
		if i == 0 || !c.trusted(addr.String()) {
			return addr.Unmap().String()
		}
	}
	return host
}

func (c ClientIP) trusted(host string) bool {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, p := range c.proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}
