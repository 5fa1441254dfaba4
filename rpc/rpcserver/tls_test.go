package rpcserver_test

import (
	"testing"
	"time"

	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/rpctls"
	"github.com/seckill/seckill/rpc/inventory"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// With TLS configured the service answers a client that trusts its certificate, with the
// app's credentials, and no plaintext client.
func TestCallOverTLS(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	c := rpctest.Config(t, env.Keys, db.DSN)
	token := freshToken(t)
	c.Auth, c.Apps = true, []rpcserver.AppToken{{App: "api", Token: token, Methods: []string{"Ping"}}}
	certFile, keyFile, err := devenv.SelfSignedTLS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
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
	t.Cleanup(func() { _ = cli.Conn().Close() })
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
