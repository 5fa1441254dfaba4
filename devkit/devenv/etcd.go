package devenv

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// EtcdPackage is Debian's etcd server.
var EtcdPackage = Package{Binaries: []string{"etcd"}, Apt: "etcd-server", Brew: "etcd"}

// EtcdClientPackage is etcdctl, which deploy/etcd/auth.sh runs (the deploy test).
var EtcdClientPackage = Package{Binaries: []string{"etcdctl"}, Apt: "etcd-client", Brew: "etcd"}

// EtcdOptions are how StartEtcdOf runs etcd. The zero value is StartEtcd's plain etcd.
type EtcdOptions struct {
	// Env is given to the etcd process (ETCD_* variables, etcd's flags: deploy/'s TLS
	// settings, the deploy test); the listen and advertise URLs are always StartEtcdOf's.
	Env []string
	// TLS: the client and peer URLs are https (Env names the certificates); Client is how the
	// readiness check connects (etcd may require a client certificate).
	TLS    bool
	Client *tls.Config
	// AlsoPlain serves plain http on the client port beside https (the deploy test's
	// -break etcd-tls: what deploy/ must not do).
	AlsoPlain bool
	// Host is the address etcd listens on and advertises; "": loopback.
	Host string
}

// StartEtcd runs a single-member etcd on free loopback ports (client and peer) with its
// data in a temporary directory; Proc.Addr is the client address (host:port).
func StartEtcd(ctx context.Context) (*Proc, error) { return StartEtcdOf(ctx, EtcdOptions{}) }

// StartEtcdOf is StartEtcd with o.
func StartEtcdOf(ctx context.Context, o EtcdOptions) (*Proc, error) {
	bin, err := LookPath("etcd")
	if err != nil {
		return nil, notInstalled(EtcdPackage, "not found in PATH or sbin")
	}
	scheme := "http://"
	if o.TLS {
		scheme = "https://"
	}
	host := o.Host
	if host == "" {
		host = "127.0.0.1"
	}
	at := func(port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
	return startOnFreePort(ctx, func(ctx context.Context, port int) (*Proc, error) {
		peer, err := FreePort()
		if err != nil {
			return nil, err
		}
		dir, err := privateDir("etcd")
		if err != nil {
			return nil, err
		}
		client := scheme + at(port)
		listen := client
		if o.AlsoPlain {
			listen += ",http://" + at(port)
		}
		peerURL := scheme + at(peer)
		cmd := exec.Command(bin, "--name", "default", "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", listen, "--advertise-client-urls", client,
			"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
			"--initial-cluster", "default="+peerURL, "--log-level", "error")
		cmd.Env = append(os.Environ(), o.Env...)
		p, err := startProc("etcd", at(port), dir, filepath.Join(dir, "etcd.log"), cmd)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: o.Client}}
		defer hc.CloseIdleConnections()
		if err := p.waitReady(wctx, func(ctx context.Context) error { return etcdHealthy(ctx, hc, client) }); err != nil {
			_ = p.Close()
			return nil, err
		}
		return p, nil
	})
}

// etcdHealthy asks etcd's /health at url through hc.
func etcdHealthy(ctx context.Context, hc *http.Client, url string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd health: %s", resp.Status)
	}
	return nil
}
