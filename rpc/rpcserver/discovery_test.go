package rpcserver_test

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/discov"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/internal/devenv"
	"github.com/seckill/seckill/internal/stock/stocktest"
	"github.com/seckill/seckill/internal/testenv"
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
	etcd, err := devenv.StartEtcd(ctx)
	if err != nil {
		if testenv.IsCI() {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() { _ = etcd.Close() })
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	etcdConf := discov.EtcdConf{Hosts: []string{etcd.Addr}, Key: testenv.RandomName("inventory.rpc.")}

	servers := make([]*rpcserver.Server, 2)
	for i := range servers {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		_ = l.Close()
		var c rpcserver.Config
		if err := conf.FillDefault(&c); err != nil {
			t.Fatal(err)
		}
		c.Name, c.ListenOn, c.Mode, c.Etcd = "inventory.rpc.test", addr, "test", etcdConf
		c.Log.Level, c.Log.Stat = "severe", false
		c.StockRedis, c.KeyPrefix, c.Mysql.DataSource = testenv.RedisConf(), env.Keys.Prefix, db.DSN
		srv, err := rpcserver.New(c)
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = srv
		go srv.Start()
	}
	t.Cleanup(func() { servers[1].Stop() })

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
