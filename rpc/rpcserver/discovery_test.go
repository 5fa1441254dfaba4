package rpcserver_test

import (
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/discov"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/rpc/inventory"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// TestDiscoveryThroughEtcd runs two inventory instances registered in a real etcd and a
// client that finds them there, as the multi-node deployment does; with one instance
// stopped the client keeps being served by the other.
func TestDiscoveryThroughEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd")
	}
	testenv.Need(t, devenv.EtcdPackage)
	etcd, err := devenv.StartEtcd(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = etcd.Close() })
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	etcdConf := discov.EtcdConf{Hosts: []string{etcd.Addr}, Key: testenv.RandomName("inventory.rpc.")}

	servers := make([]*rpcserver.Server, 2)
	for i := range servers {
		c := rpctest.Config(t, env.Keys, db.DSN)
		c.Etcd = etcdConf
		_, servers[i] = rpctest.Start(t, c)
	}

	cli, err := zrpc.NewClient(zrpc.RpcClientConf{Etcd: etcdConf, NonBlock: true, Timeout: 2000})
	if err != nil {
		t.Fatal(err)
	}
	client := inventory.NewInventoryClient(cli.Conn())
	pingUntil := func(what string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		ok := 0
		for ok < 20 {
			if _, err := client.Ping(ctx, &inventory.PingReq{}); err == nil {
				ok++
			} else if time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, err)
			} else {
				ok = 0
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	pingUntil("discover both instances")
	servers[0].Stop()
	pingUntil("served by the remaining instance")
}
