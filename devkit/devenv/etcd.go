package devenv

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// EtcdPackage is Debian's etcd server.
var EtcdPackage = Package{Binaries: []string{"etcd"}, Apt: "etcd-server", Brew: "etcd"}

// EtcdClientPackage is etcdctl, which deploy/etcd/auth.sh runs (the deploy test).
var EtcdClientPackage = Package{Binaries: []string{"etcdctl"}, Apt: "etcd-client", Brew: "etcd"}

// StartEtcd runs a single-member etcd on free loopback ports (client and peer) with its
// data in a temporary directory; Proc.Addr is the client address (host:port).
func StartEtcd(ctx context.Context) (*Proc, error) {
	bin, err := LookPath("etcd")
	if err != nil {
		return nil, notInstalled(EtcdPackage, "not found in PATH or sbin")
	}
	return startOnFreePort(ctx, func(ctx context.Context, port int) (*Proc, error) {
		peer, err := FreePort()
		if err != nil {
			return nil, err
		}
		dir, err := privateDir("etcd")
		if err != nil {
			return nil, err
		}
		client := "http://" + Loopback(port)
		peerURL := "http://" + Loopback(peer)
		cmd := exec.Command(bin, "--name", "default", "--data-dir", filepath.Join(dir, "data"),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
			"--initial-cluster", "default="+peerURL, "--log-level", "error")
		p, err := startProc("etcd", Loopback(port), dir, filepath.Join(dir, "etcd.log"), cmd)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := p.waitReady(wctx, func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, client+"/health", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("etcd health: %s", resp.Status)
			}
			return nil
		}); err != nil {
			_ = p.Close()
			return nil, err
		}
		return p, nil
	})
}
