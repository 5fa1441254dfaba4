package pipelinetest_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/seckill/seckill/devkit/pipelinetest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/inventoryclient"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// mysqlOrders counts the orders of activity aid in MySQL.
func mysqlOrders(t *testing.T, p *pipelinetest.Pipeline, aid int64) int {
	t.Helper()
	var n int
	if err := p.DB.DB.QueryRow("SELECT COUNT(*) FROM `seckill_order` WHERE `activity_id` = ?", aid).
		Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// reserveAll reserves one unit for each of uids and fails the test on any error.
func reserveAll(t *testing.T, p *pipelinetest.Pipeline, aid int64, round string, uids ...int64) {
	t.Helper()
	for _, uid := range uids {
		if _, err := p.Inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1,
			RequestId: rid(uid, round)}); err != nil {
			t.Fatalf("reserve for %d: %v", uid, err)
		}
	}
}

// A sale with Redis behind an ACL user (default user off) and Kafka behind SASL/SCRAM, the
// services configured with their credentials: it sells through to MySQL. An inventory
// service with a wrong or no Redis password does not start; a writer with a wrong Kafka
// password applies nothing.
func TestSaleWithCredentialsOnEveryHop(t *testing.T) {
	p := pipelinetest.Start(t, pipelinetest.Options{Auth: true})
	aid := p.Activity(100, 1, 600, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	reserveAll(t, p, aid, "a", 1, 2, 3, 4, 5)
	p.Drain(aid, 30*time.Second)
	if n := mysqlOrders(t, p, aid); n != 5 {
		t.Fatalf("%d orders in MySQL, want 5", n)
	}

	// go-zero shares one Redis client per address in a process: reach the same server by
	// another name, as another process would get a client of its own.
	_, port, err := net.SplitHostPort(p.Redis.Addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, host, user, pass string }{
		{"wrong", "localhost", p.Creds.RedisUser, testenv.RandomSecret()},
		{"no", "::ffff:127.0.0.1", "", ""},
	} {
		name, bad := c.name, p.RPC
		bad.StockRedis.Host = net.JoinHostPort(c.host, port)
		bad.StockRedis.User, bad.StockRedis.Pass = c.user, c.pass
		if _, err := rpcserver.New(bad); err == nil { // (not started: nothing to stop)
			t.Fatalf("an inventory service with %s Redis password started", name)
		} else {
			t.Logf("%s Redis password: %v", name, err)
		}
	}

	// Kafka refuses a client with a wrong password, or none.
	for name, a := range map[string]kafkax.Auth{"wrong": {Mechanism: p.Creds.Kafka.Mechanism,
		User: p.Creds.Kafka.User, Pass: testenv.RandomSecret()}, "no": {}} {
		pc := kafkax.Conf{Brokers: p.Brokers, Topic: event.Topic, BatchSize: 1, WriteTimeout: 2 * time.Second, Auth: a}
		prod, err := kafkax.NewProducer(pc)
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = prod.Send(sctx, kafkax.Message{Key: []byte("k"), Value: []byte("v")})
		cancel()
		_ = prod.Close()
		if err == nil {
			t.Fatalf("Kafka took a message from a producer with %s password", name)
		}
	}

	p.StopWriter()
	wc := p.WriterConfig()
	wc.Kafka.Pass = testenv.RandomSecret()
	if w, err := mqserver.New(wc); err != nil {
		t.Logf("writer with a wrong Kafka password: %v", err)
	} else { // kafka-go dials lazily: it starts, and is refused
		done := make(chan struct{})
		go func() { defer close(done); w.Start() }()
		reserveAll(t, p, aid, "b", 6, 7, 8)
		time.Sleep(3 * time.Second)
		w.Stop()
		<-done
		if n := mysqlOrders(t, p, aid); n != 5 {
			t.Fatalf("a writer with a wrong Kafka password applied %d orders", n-5)
		}
	}
	p.StartWriter()
	p.Drain(aid, 30*time.Second)
	if n := mysqlOrders(t, p, aid); n != 8 {
		t.Fatalf("%d orders in MySQL, want 8", n)
	}
}
