package jobs_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/conf"

	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/mq/internal/jobs"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

var ctx = context.Background()

// fixture is the real inventory service (zRPC, on a fresh Redis prefix and database) with
// a client, and optionally the event pipeline: a relay (outbox -> kfake) and the mq writer
// (kfake -> MariaDB), each started and stopped by the test.
type fixture struct {
	t       *testing.T
	env     *stocktest.Env
	db      *testenv.Database
	inv     inventoryclient.Inventory
	addr    string // the inventory service
	brokers []string
	group   string // the writer's consumer group
}

// confirmAfter is the reconciler's confirmation window in these tests.
const confirmAfter = 1500 * time.Millisecond

func newFixture(t *testing.T, kafka bool) *fixture {
	t.Helper()
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	c := rpctest.Config(t, env.Keys, db.DSN)
	c.Name = "inventory.rpc.jobs-test"
	c.Reconcile.ConfirmAfter = confirmAfter
	f := &fixture{t: t, env: env, db: db, group: testenv.RandomName("writer-")}
	if kafka {
		f.brokers = testenv.Kafka(t, 4)
		// Reconciliation watches the writer's group, as in production.
		c.Reconcile.Brokers, c.Reconcile.WriterGroup = f.brokers, f.group
	}
	f.inv, _ = rpctest.Start(t, c) // no relay inside: the tests run their own
	f.addr = c.ListenOn
	return f
}

// activity inserts an activity and its inventory row; returns its id.
func (f *fixture) activity(total, limit, payTimeout int64, start, end time.Time) int64 {
	f.t.Helper()
	res, err := f.db.DB.Exec("INSERT INTO `activity` (`sku_id`, `name`, `total`, `start_time`, `end_time`, "+
		"`per_user_limit`, `pay_timeout_seconds`) VALUES (9, 'jobs', ?, ?, ?, ?, ?)",
		total, start.Unix(), end.Unix(), limit, payTimeout)
	if err != nil {
		f.t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	if _, err := f.db.DB.Exec("INSERT INTO `inventory` (`activity_id`, `available`) VALUES (?, ?)", id,
		total); err != nil {
		f.t.Fatal(err)
	}
	return id
}

// live inserts an activity running now and warms it.
func (f *fixture) live(total, limit, payTimeout int64) int64 {
	f.t.Helper()
	id := f.activity(total, limit, payTimeout, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if _, err := f.inv.Warmup(ctx, &inventoryclient.WarmupReq{ActivityId: id}); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { f.env.CheckInvariant(id) })
	return id
}

// startRelay runs a relay over the fixture's Redis; the returned func stops it.
func (f *fixture) startRelay() (stop func()) {
	f.t.Helper()
	var rc relay.Conf
	if err := conf.FillDefault(&rc); err != nil {
		f.t.Fatal(err)
	}
	rc.Enabled, rc.Brokers, rc.Topic, rc.DeadLetterTopic = true, f.brokers, event.Topic, event.DeadLetterTopic
	rc.BatchSize, rc.Block, rc.ClaimIdle, rc.ClaimInterval = 200, 20*time.Millisecond, time.Minute, time.Second
	rc.RefreshInterval, rc.BatchTimeout = 100*time.Millisecond, time.Millisecond
	r, err := relay.New(rc, f.env.Store, time.Hour)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.run(r.Start, r.Stop)
}

// startWriter runs the mq service (kq consumer group + writer) against the database; with
// jc non-nil also the jobs, wired by mqserver as in production.
func (f *fixture) startWriter(jc *jobs.Conf) (stop func()) {
	f.t.Helper()
	var c mqserver.Config
	if err := conf.FillDefault(&c); err != nil {
		f.t.Fatal(err)
	}
	c.Name, c.Mode = "mq-jobs-test", "test"
	// no HTTP server (kq's consumer would start its own); the metrics are on (init below)
	c.DevServer.Enabled, c.Consumer.DevServer.Enabled = false, false
	c.Log.Mode, c.Log.Encoding, c.Log.Level = "console", "plain", "error"
	c.Consumer.Name = "mq-jobs-test-writer"
	c.Consumer.Brokers = f.brokers
	c.Consumer.Group = f.group
	c.Consumer.Topic = event.Topic
	c.DeadLetter.Topic = event.DeadLetterTopic
	c.Consumer.Offset = "first"
	c.Consumer.MinBytes = 1
	c.Consumer.Conns = 2
	c.Mysql.DataSource = f.db.DSN
	c.Jobs.Enabled = false
	if jc != nil {
		c.Jobs = *jc
		c.Inventory.Endpoints = []string{f.addr}
		c.Inventory.Timeout = 10000
	}
	s, err := mqserver.New(c)
	if err != nil {
		f.t.Fatal(err)
	}
	return f.run(s.Start, s.Stop)
}

// testConf is the jobs' configuration with go-zero's defaults and every job off: a test
// turns on the ones it runs.
func testConf(t testing.TB) jobs.Conf {
	t.Helper()
	var c jobs.Conf
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	c.Expiry.Enabled, c.Reconcile.Enabled, c.Warmup.Enabled, c.Books.Enabled, c.Sweep.Enabled = false, false, false,
		false, false
	return c
}

func (f *fixture) run(start, stop func()) func() {
	done := make(chan struct{})
	go func() { defer close(done); start() }()
	var once sync.Once
	halt := func() { once.Do(func() { stop(); <-done }) }
	f.t.Cleanup(halt)
	return halt
}

func (f *fixture) waitFor(what string, limit time.Duration, cond func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (f *fixture) reserve(aid, uid int64) string {
	f.t.Helper()
	r, err := f.inv.Reserve(ctx, &inventoryclient.ReserveReq{ActivityId: aid, Uid: uid, Quantity: 1,
		RequestId: "req-" + strconv.FormatInt(aid, 10) + "-" + strconv.FormatInt(uid, 10) + "-" +
			strconv.FormatInt(time.Now().UnixNano()%1e9, 10)})
	if err != nil {
		f.t.Fatalf("reserve for uid %d: %v", uid, err)
	}
	return r.OrderNo
}

func (f *fixture) state(orderNo string) string {
	f.t.Helper()
	o, err := f.env.Store.Order(ctx, orderNo)
	if err != nil {
		f.t.Fatalf("order %s: %v", orderNo, err)
	}
	return o.State
}

func (f *fixture) reconcile(aid int64) *inventoryclient.ReconcileResp {
	f.t.Helper()
	resp, err := jobs.NewReconcile(f.inv).Run(ctx, aid)
	if err != nil {
		f.t.Fatalf("reconcile %d: %v", aid, err)
	}
	return resp
}
