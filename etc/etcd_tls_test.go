package etc_test

import (
	"crypto/x509"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zeromicro/go-zero/core/discov"
)

// mounted says whether compose service s mounts ./tls/out/<name> at dst.
func mounted(s composeService, name, dst string) bool {
	return slices.Contains(s.Volumes, "./tls/out/"+name+":"+dst+":ro")
}

// etcd runs over TLS as deploy/ ships it: every Etcd block names the script's client
// certificate and CA where compose mounts them (and systemd hosts install them); the
// members serve https only, to clients and peers, with client certificates required; the
// script's etcd.crt is valid for every etcd host the configs name, and its client
// certificate for client authentication, both under the CA the clients trust.
func TestEtcdOverTLS(t *testing.T) {
	setSecrets(t)
	dir := genCerts(t)
	rc, ac, mc := loadMultinode(t)
	etcds := map[string]discov.EtcdConf{"rpc": rc.Etcd, "api": ac.Inventory.Etcd, "mq": mc.Inventory.Etcd}
	want := []string{"etcd-client.crt", "etcd-client.key", "ca.crt"}
	for bin, e := range etcds {
		if !e.HasTLS() || e.InsecureSkipVerify {
			t.Errorf("%s's Etcd block: no TLS (%q, %q, %q) or the server not checked", bin, e.CertFile, e.CertKeyFile,
				e.CACertFile)
		}
		for name, file := range map[string]string{"etcd-client.crt": e.CertFile, "etcd-client.key": e.CertKeyFile,
			"ca.crt": e.CACertFile} {
			if file != "/etc/seckill/tls/"+name {
				t.Errorf("%s's Etcd names %s, want /etc/seckill/tls/%s (the script's %s)", bin, file, name, name)
			}
		}
	}
	services := loadCompose(t)
	for host, s := range services {
		bin, _ := seckillConfig(t, host, s)
		if bin == "" && host != "etcd-auth" {
			continue
		}
		for _, name := range want {
			if !mounted(s, name, "/etc/seckill/tls/"+name) {
				t.Errorf("%s (%s) does not mount ./tls/out/%s at /etc/seckill/tls/%s", host, bin, name, name)
			}
		}
	}
	checkComposeEtcdMembers(t, services)

	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, filepath.Join(dir, "ca.crt")))
	server := readCert(t, filepath.Join(dir, "etcd.crt"))
	for bin, e := range etcds {
		for _, h := range e.Hosts {
			name, _, _ := strings.Cut(h, ":")
			for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
				if _, err := server.Verify(x509.VerifyOptions{DNSName: name, Roots: roots,
					KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
					t.Errorf("etcd.crt for %s (%s's Etcd.Hosts), usage %v (clients, peers): %v", name, bin, usage, err)
				}
			}
		}
	}
	client := readCert(t, filepath.Join(dir, "etcd-client.crt"))
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("etcd-client.crt: %v", err)
	}
	if slices.Contains([]string{"root", "rpc", "client"}, client.Subject.CommonName) {
		t.Errorf("etcd-client.crt's name %q is an etcd user (etcd/auth.sh): the certificate alone would log in",
			client.Subject.CommonName)
	}
}

// checkComposeEtcdMembers: every etcd member serves https to clients and peers with the
// script's certificate (mounted), requires client certificates, and is checked over TLS.
func checkComposeEtcdMembers(t *testing.T, services map[string]composeService) {
	t.Helper()
	n := 0
	for host, s := range services {
		if !strings.HasPrefix(s.Image, "quay.io/coreos/etcd:") {
			continue
		}
		n++
		env := s.Environment
		for _, k := range []string{"ETCD_LISTEN_CLIENT_URLS", "ETCD_LISTEN_PEER_URLS", "ETCD_INITIAL_CLUSTER"} {
			if strings.Contains(env[k], "http://") || !strings.Contains(env[k], "https://") {
				t.Errorf("%s: %s=%q, want https only", host, k, env[k])
			}
		}
		if env["ETCD_CLIENT_CERT_AUTH"] != "true" || env["ETCD_PEER_CLIENT_CERT_AUTH"] != "true" {
			t.Errorf("%s: client certificates not required (ETCD_CLIENT_CERT_AUTH, ETCD_PEER_CLIENT_CERT_AUTH)", host)
		}
		for k, name := range map[string]string{"ETCD_CERT_FILE": "etcd.crt", "ETCD_KEY_FILE": "etcd.key",
			"ETCD_TRUSTED_CA_FILE": "ca.crt", "ETCD_PEER_CERT_FILE": "etcd.crt", "ETCD_PEER_KEY_FILE": "etcd.key",
			"ETCD_PEER_TRUSTED_CA_FILE": "ca.crt"} {
			if env[k] == "" || !mounted(s, name, env[k]) {
				t.Errorf("%s: %s=%q is not ./tls/out/%s mounted", host, k, env[k], name)
			}
		}
		for _, a := range s.Command {
			if strings.HasPrefix(a, "http://") {
				t.Errorf("%s: command advertises %s", host, a)
			}
		}
		if s.Healthcheck == nil || !strings.Contains(strings.Join(s.Healthcheck.Test, " "), "https://") {
			t.Errorf("%s: healthcheck not over https", host)
		}
	}
	if n < 3 {
		t.Errorf("%d etcd members in docker-compose.yml, want 3", n)
	}
	if e := services["etcd-auth"].Environment["ETCDCTL_ENDPOINTS"]; strings.Contains(e, "http://") {
		t.Errorf("etcd-auth: ETCDCTL_ENDPOINTS=%s, want https only", e)
	}
}
