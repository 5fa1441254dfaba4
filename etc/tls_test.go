package etc_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/service"
	"github.com/zeromicro/go-zero/zrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/seckill/seckill/internal/rpctls"
)

// genCerts runs deploy/tls/gen-certs.sh, the script an operator runs, into a fresh directory.
func genCerts(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("openssl (apt-get install openssl): %v", err)
	}
	dir := t.TempDir()
	out, err := exec.Command("bash", "../deploy/tls/gen-certs.sh", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("gen-certs.sh: %v\n%s", err, out)
	}
	return dir
}

// The certificates of deploy/tls/gen-certs.sh are where deploy/multinode's configs expect
// them (the files compose mounts), form a chain to the CA, name every host the clients
// check, and carry a real zRPC call over TLS from a client configured as api.yaml and
// mq.yaml are; a client trusting another CA is refused.
func TestGeneratedCertificatesServeZRPC(t *testing.T) {
	setSecrets(t)
	dir := genCerts(t)
	rc, ac, mc := loadMultinode(t)
	files := map[string]string{rc.TLS.CertFile: "rpc.crt", rc.TLS.KeyFile: "rpc.key",
		ac.InventoryTLS.CAFile: "ca.crt", mc.InventoryTLS.CAFile: "ca.crt"}
	for path, name := range files {
		if path != "/etc/seckill/tls/"+name {
			t.Errorf("a config names %s, want /etc/seckill/tls/%s (the script's %s)", path, name, name)
		}
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(dir, "rpc.crt"), filepath.Join(dir, "rpc.key")); err != nil {
		t.Fatal(err)
	}
	leaf := readCert(t, filepath.Join(dir, "rpc.crt"))
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, filepath.Join(dir, "ca.crt")))
	for _, c := range []rpctls.ClientConf{ac.InventoryTLS, mc.InventoryTLS} {
		if c.ServerName == "" {
			t.Fatalf("InventoryTLS %+v: no ServerName (discovered through etcd, the name checked would be the etcd hosts)", c)
		}
	}
	names := []string{ac.InventoryTLS.ServerName, mc.InventoryTLS.ServerName}
	for host, svc := range loadCompose(t) { // the inventory's hosts, for clients that dial one (cmd/repair)
		if bin, _ := seckillConfig(t, host, svc); bin == "rpc" {
			names = append(names, host)
		}
	}
	if len(names) < 3 {
		t.Fatalf("names to check %v: no inventory service in docker-compose.yml", names)
	}
	for _, name := range names {
		_, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: roots,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		if err != nil {
			t.Errorf("rpc.crt for %s: %v", name, err)
		}
	}
	addr := serveHealth(t, rpctls.ServerConf{CertFile: filepath.Join(dir, "rpc.crt"),
		KeyFile: filepath.Join(dir, "rpc.key")})
	for name, c := range map[string]rpctls.ClientConf{"api.yaml": ac.InventoryTLS, "mq.yaml": mc.InventoryTLS} {
		c.CAFile = filepath.Join(dir, "ca.crt")
		if err := checkHealth(t, addr, c); err != nil {
			t.Errorf("%s's client over TLS: %v", name, err)
		}
	}
	other := genCerts(t)
	if err := checkHealth(t, addr, rpctls.ClientConf{CAFile: filepath.Join(other, "ca.crt"),
		ServerName: ac.InventoryTLS.ServerName}); err == nil {
		t.Error("a client trusting another CA was answered")
	}
}

func readCert(t *testing.T, file string) *x509.Certificate {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(raw)
	if b == nil || b.Type != "CERTIFICATE" {
		t.Fatalf("%s: no PEM certificate", file)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c
}

// serveHealth starts a zRPC server (gRPC health service only) with the TLS options the
// inventory service uses, on a free loopback port.
func serveHealth(t *testing.T, sc rpctls.ServerConf) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	opts, err := sc.Options()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := zrpc.NewServer(zrpc.RpcServerConf{
		ServiceConf: service.ServiceConf{Name: "tls-test", Mode: service.TestMode},
		ListenOn:    addr, Health: true, Timeout: 2000,
	}, func(*grpc.Server) {})
	if err != nil {
		t.Fatal(err)
	}
	srv.AddOptions(opts...)
	go srv.Start()
	t.Cleanup(srv.Stop)
	return addr
}

// checkHealth calls the health service at addr with a zRPC client configured by c; it
// retries while the server starts.
func checkHealth(t *testing.T, addr string, c rpctls.ClientConf) error {
	t.Helper()
	opts, err := c.Options()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := zrpc.NewClient(zrpc.RpcClientConf{Endpoints: []string{addr}, NonBlock: true, Timeout: 2000}, opts...)
	if err != nil {
		return err
	}
	defer func() { _ = cli.Conn().Close() }()
	hc := grpc_health_v1.NewHealthClient(cli.Conn())
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = hc.Check(ctx, &grpc_health_v1.HealthCheckRequest{})
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}
