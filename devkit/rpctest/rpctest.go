// Package rpctest runs the real inventory service in a test: on a free loopback port,
// over the test Redis (under the test's key prefix) and the test's database, without a
// relay unless the test configures one.
package rpctest

import (
	"context"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/rpc/inventoryclient"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// Config is an inventory service configuration for a test: a free loopback port, the
// test Redis under keys' prefix, the database dsn, quiet logs, no relay.
func Config(t testing.TB, keys stock.Keys, dsn string) rpcserver.Config {
	t.Helper()
	var c rpcserver.Config
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	port, err := devenv.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c.Name, c.ListenOn, c.Mode = "inventory.rpc.test", devenv.Loopback(port), "test"
	c.Log.Level, c.Log.Stat = "severe", false
	c.DevServer.Enabled = false
	c.StockRedis = testenv.RedisConf()
	c.KeyPrefix = keys.Prefix
	c.Mysql.DataSource = dsn
	// Required in every YAML; a test that sets Relay.Brokers relays to the usual topics.
	c.Relay.Topic, c.Relay.DeadLetterTopic = event.Topic, event.DeadLetterTopic
	// A small Bloom filter (the shared Redis holds one per test), catching up quickly with
	// activities a test inserts with SQL after the service started.
	c.Stock.BloomBits, c.Stock.BloomRefreshMs = 1<<20, 20
	return c
}

// Start runs the service until the test ends and returns a client once it answers.
func Start(t testing.TB, c rpcserver.Config) (inventoryclient.Inventory, *rpcserver.Server) {
	t.Helper()
	srv, err := rpcserver.New(c)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(srv.Stop)
	cc := zrpc.RpcClientConf{Endpoints: []string{c.ListenOn}, NonBlock: true, Timeout: 10000}
	if c.Auth && len(c.Apps) > 0 { // the first app's credentials
		cc.App, cc.Token = c.Apps[0].App, c.Apps[0].Token
	}
	cli, err := zrpc.NewClient(cc)
	if err != nil {
		t.Fatal(err)
	}
	inv := inventoryclient.NewInventory(cli)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := inv.Ping(context.Background(), &inventoryclient.PingReq{})
		if err == nil {
			return inv, srv
		}
		if time.Now().After(deadline) {
			t.Fatalf("inventory service at %s did not come up: %v", c.ListenOn, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
