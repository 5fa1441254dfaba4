package faults

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/discov"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"gopkg.in/yaml.v3"

	"github.com/seckill/seckill/devkit/devenv"
)

// etcd over TLS as deploy/ runs it (docker-compose.yml's x-etcd and etcd-auth, the
// multinode Etcd blocks), the certificates from tls/gen-certs.sh in the run's tls directory:
// the overlay maps deploy/'s certificate directories there and changes nothing else.
var etcdTLSDirs = []string{"/etc/etcd/tls/", "/etc/seckill/tls/"}

// overlayPath is a certificate path of deploy/ in the run's tls directory.
func overlayPath(p, tlsDir string) string {
	for _, d := range etcdTLSDirs {
		if strings.HasPrefix(p, d) {
			return filepath.Join(tlsDir, strings.TrimPrefix(p, d))
		}
	}
	return p
}

// composeEnv is the environment of the compose file's x-etcd (the members') and etcd-auth
// service, as KEY=VALUE with the certificate paths overlaid.
func composeEnv(compose, tlsDir string) (members, auth []string, err error) {
	b, err := os.ReadFile(compose)
	if err != nil {
		return nil, nil, err
	}
	var doc struct {
		Etcd struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"x-etcd"`
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", compose, err)
	}
	pick := func(env map[string]string, keep func(k string) bool) []string {
		var out []string
		for k, v := range env {
			if keep(k) {
				out = append(out, k+"="+overlayPath(v, tlsDir))
			}
		}
		return out
	}
	// The members' TLS settings (certificates, client certificate checks); their URLs and
	// cluster are the run's (devenv.StartEtcdOf).
	members = pick(doc.Etcd.Environment, func(k string) bool {
		return strings.HasSuffix(k, "_FILE") || strings.HasSuffix(k, "_CERT_AUTH")
	})
	auth = pick(doc.Services["etcd-auth"].Environment, func(k string) bool {
		return k == "ETCDCTL_CACERT" || k == "ETCDCTL_CERT" || k == "ETCDCTL_KEY"
	})
	if len(members) == 0 || len(auth) < 3 {
		return nil, nil, fmt.Errorf("%s: x-etcd has no certificates (%v) or etcd-auth no ETCDCTL_CACERT/CERT/KEY (%v)",
			compose, members, auth)
	}
	return members, auth, nil
}

// etcdOptions are the private etcd's: deploy/'s TLS settings, the services' client
// certificate for the readiness check; -break etcd-tls also serves plain http.
func (d *Deployment) etcdOptions(tlsDir string) (devenv.EtcdOptions, error) {
	members, auth, err := composeEnv(filepath.Join(d.Dir, "docker-compose.yml"), tlsDir)
	if err != nil {
		return devenv.EtcdOptions{}, err
	}
	d.etcdctlEnv = auth
	c, err := etcdClientTLS(tlsDir, true)
	if err != nil {
		return devenv.EtcdOptions{}, err
	}
	d.etcdTLS = c
	return devenv.EtcdOptions{Env: members, TLS: true, Client: c, AlsoPlain: d.Break == "etcd-tls"}, nil
}

// etcdClientTLS trusts the script's CA; with cert, it presents the services' client certificate.
func etcdClientTLS(tlsDir string, cert bool) (*tls.Config, error) {
	ca, err := os.ReadFile(filepath.Join(tlsDir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("ca.crt: no certificate")
	}
	c := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert {
		kp, err := tls.LoadX509KeyPair(filepath.Join(tlsDir, "etcd-client.crt"), filepath.Join(tlsDir, "etcd-client.key"))
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{kp}
	}
	return c, nil
}

// overlayEtcd points the Etcd blocks' certificates at the run's tls directory.
func overlayEtcd(tlsDir string, confs ...*discov.EtcdConf) {
	for _, e := range confs {
		e.CertFile, e.CertKeyFile = overlayPath(e.CertFile, tlsDir), overlayPath(e.CertKeyFile, tlsDir)
		e.CACertFile = overlayPath(e.CACertFile, tlsDir)
	}
}

// etcdCheck: the private etcd refuses plain http and plain gRPC, and a TLS client without
// a certificate; over TLS, as root, every inventory instance is registered (they could
// register only over TLS).
func (s *System) etcdCheck(ctx context.Context) Check {
	d, addr := s.Deploy, s.Etcd.Addr
	var notes []string
	plainRefused := true
	hc := &http.Client{Timeout: 3 * time.Second}
	if resp, err := hc.Get("http://" + addr + "/version"); err != nil {
		notes = append(notes, "plain http: "+clip(err.Error()))
	} else {
		_ = resp.Body.Close()
		plainRefused = resp.StatusCode != http.StatusOK
		notes = append(notes, "plain http /version: "+resp.Status)
	}
	root := os.Getenv("SECKILL_ETCD_ROOT_PASSWORD")
	key := s.invCfg.Etcd.Key
	_, err := etcdKeys(ctx, addr, key, nil, root)
	notes = append(notes, "plain gRPC as root: "+errText1(err))
	plainRefused = plainRefused && err != nil
	noCert, cerr := etcdClientTLS(filepath.Join(s.Dir, "tls"), false)
	if cerr == nil {
		_, cerr = etcdKeys(ctx, addr, key, noCert, root)
	}
	notes = append(notes, "TLS without a client certificate: "+errText1(cerr))
	keys, err := etcdKeys(ctx, addr, key, d.etcdTLS, root)
	notes = append(notes, fmt.Sprintf("over TLS as root: %d registrations under %s (%d instances)%s", len(keys),
		key, len(s.Inventories), reasons(errText(err))))
	ok := plainRefused && cerr != nil && err == nil && len(keys) == len(s.Inventories)
	return check("etcd: TLS only, the services registered over it", ok, "%s", strings.Join(notes, "; "))
}

// etcdKeys lists the keys under prefix at addr as root, over TLS with c (nil: plain).
func etcdKeys(ctx context.Context, addr, prefix string, c *tls.Config, pass string) ([]string, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, TLS: c, Username: "root", Password: pass,
		DialTimeout: 3 * time.Second, Context: ctx, Logger: zap.NewNop()})
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	gctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	resp, err := cli.Get(gctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys, nil
}

// errText1 says how a call ended: "answered", or "refused" and why.
func errText1(err error) string {
	if err == nil {
		return "answered"
	}
	return "refused (" + clip(err.Error()) + ")"
}

// clip shortens a message for the table.
func clip(s string) string {
	if len(s) > 90 {
		return s[:90] + "…"
	}
	return s
}
