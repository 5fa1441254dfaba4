package rpcserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/rpctls"
	"github.com/seckill/seckill/rpc/inventory"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key (PEM) into dir.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "inventory.rpc.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "rpc.crt"), filepath.Join(dir, "rpc.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	kpem := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	if err := os.WriteFile(keyFile, kpem, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// With TLS configured the service answers a client that trusts its certificate, with the
// app's credentials, and no plaintext client.
func TestCallOverTLS(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	c := rpctest.Config(t, env.Keys, db.DSN)
	token := freshToken(t)
	c.Auth, c.Apps = true, []rpcserver.AppToken{{App: "api", Token: token, Methods: []string{"Ping"}}}
	certFile, keyFile := selfSigned(t, t.TempDir())
	c.TLS = rpctls.ServerConf{CertFile: certFile, KeyFile: keyFile}
	srv, err := rpcserver.New(c)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Stop)

	opts, err := rpctls.ClientConf{CAFile: certFile}.Options()
	if err != nil {
		t.Fatal(err)
	}
	cc := zrpc.RpcClientConf{Endpoints: []string{c.ListenOn}, App: "api", Token: token, NonBlock: true, Timeout: 2000}
	cli, err := zrpc.NewClient(cc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Conn().Close() })
	tlsClient := inventory.NewInventoryClient(cli.Conn())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := tlsClient.Ping(ctx, &inventory.PingReq{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ping over TLS: %v", err)
		}
	}
	if _, err := dial(t, c.ListenOn, "api", token).Ping(ctx, &inventory.PingReq{}); err == nil {
		t.Fatal("a plaintext client was answered")
	}
}
