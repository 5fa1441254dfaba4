package rpcserver_test

import (
	"fmt"
	"io"
	"math/rand"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/rpc/inventory"
)

// countingProxy forwards TCP to target and counts the bytes of the commands clients send:
// every MySQL query the service makes goes through it, so 0 bytes is 0 reads. A COM_PING
// (the service's dependency probe, every Probe.Interval) and a connection's handshake read
// nothing and are not counted.
type countingProxy struct {
	l    net.Listener
	sent atomic.Int64
}

func startProxy(t *testing.T, target string) *countingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{l: l}
	var conns sync.Map
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			conns.Store(c, s)
			go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
			go func() { _, _ = io.Copy(byteCounter{s, &p.sent}, c); _ = s.Close() }()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		conns.Range(func(k, v any) bool { _ = k.(net.Conn).Close(); _ = v.(net.Conn).Close(); return true })
	})
	return p
}

type byteCounter struct {
	w io.Writer
	n *atomic.Int64
}

func (c byteCounter) Write(p []byte) (int, error) {
	if !readsNothing(p) {
		c.n.Add(int64(len(p)))
	}
	return c.w.Write(p)
}

// readsNothing says whether p, what a client sent, starts with a packet that is no query: a
// handshake's (sequence number above 0), exactly one COM_PING (payload length 1, command
// 0x0e) or exactly one COM_STMT_CLOSE (payload length 5, command 0x19 and a statement id:
// database/sql closes a query's statement after its rows, and a backfill's close can trail
// its answer into the next measurement: 9 bytes counted once in CI).
func readsNothing(p []byte) bool {
	const header = 4 // payload length (3 bytes, little endian), sequence number
	if len(p) <= header {
		return false
	}
	one := func(payload int, command byte) bool {
		return len(p) == header+payload && int(p[0]) == payload && p[1] == 0 && p[2] == 0 && p[4] == command
	}
	return p[3] != 0 || one(1, 0x0e) || one(5, 0x19)
}

// Unknown activity ids and forged order numbers are answered without a MySQL read once
// the service has started (its Bloom filter seeded), at any rate; a real miss still reads.
// With degrade mode on, the fence's mode read asks the same filter first.
func TestRandomIdsStopBeforeMySQL(t *testing.T) {
	for _, degrade := range []string{"off", "mysql"} {
		t.Run("degrade "+degrade, func(t *testing.T) { randomIdsStopBeforeMySQL(t, degrade) })
	}
}

func randomIdsStopBeforeMySQL(t *testing.T, degrade string) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	// Ten activities with ids 1000, 2000, ... 10000: every other id up to 10000 is unknown.
	seedTenActivities(t, db)
	dsn, err := mysql.ParseDSN(db.DSN)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startProxy(t, dsn.Addr)
	dsn.Addr = proxy.l.Addr().String()
	c := rpctest.Config(t, env.Keys, dsn.FormatDSN())
	c.OrderKey = "0b9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a493"
	c.Stock.BloomRefreshMs = 60000 // no catching up during the test
	c.Degrade = degrade
	rpctest.Start(t, c)
	cli := dial(t, c.ListenOn, "", "")

	// Warm-up: a known activity is read from MySQL.
	before := proxy.sent.Load()
	if st, err := cli.GetStock(ctx, &inventory.GetStockReq{ActivityId: 3000}); err != nil || st.Stock.Remaining != 5 {
		t.Fatalf("known activity: %v %v", st, err)
	}
	if proxy.sent.Load() == before {
		t.Fatal("the proxy saw no MySQL traffic for a cache miss: it does not count")
	}

	rng := rand.New(rand.NewSource(1))
	unknown := func() int64 {
		for {
			if id := rng.Int63n(10000) + 1; id%1000 != 0 {
				return id
			}
		}
	}
	before = proxy.sent.Load()
	wrong := askUnknownIDs(cli, unknown)
	if wrong != 0 {
		t.Fatalf("%d unknown ids not answered NotFound", wrong)
	}
	if n := proxy.sent.Load() - before; n != 0 {
		t.Fatalf("400 unknown activity ids sent %d bytes to MySQL, want 0", n)
	}

	// Forged order numbers: random tags, an unkeyed tag, another key's tag.
	before = proxy.sent.Load()
	for i := 0; i < 100; i++ {
		forged := []string{
			fmt.Sprintf("%d-%d%08x%016x", 3000, 1700000000000+i, rng.Uint32(), rng.Uint64()),
			domain.NewOrderNo(3000),
			domain.NewOrderNo(3000, []byte("some-other-key-some-other-key-00")),
		}[i%3]
		req := &inventory.OrderReq{OrderNo: forged, Uid: 1}
		if _, err := cli.GetOrder(ctx, req); status.Code(err) != codes.NotFound {
			t.Fatalf("GetOrder %s: %v", forged, err)
		}
		if _, err := cli.Confirm(ctx, req); status.Code(err) != codes.NotFound {
			t.Fatalf("Confirm %s: %v", forged, err)
		}
		if _, err := cli.Release(ctx, req); status.Code(err) != codes.NotFound {
			t.Fatalf("Release %s: %v", forged, err)
		}
	}
	if n := proxy.sent.Load() - before; n != 0 {
		t.Fatalf("forged order numbers sent %d bytes to MySQL, want 0", n)
	}
	// A genuine number of an order not in Redis is looked up in MySQL (the ledger).
	before = proxy.sent.Load()
	genuine := domain.NewOrderNo(3000, []byte(c.OrderKey))
	if _, err := cli.GetOrder(ctx, &inventory.OrderReq{OrderNo: genuine, Uid: 1}); status.Code(err) != codes.NotFound {
		t.Fatalf("genuine missing order: %v", err)
	}
	if proxy.sent.Load() == before {
		t.Fatal("a genuine order number did not reach MySQL")
	}
}

// seedTenActivities writes the activities 1000, 2000, ... 10000 (5 units each) to db.
func seedTenActivities(t *testing.T, db *testenv.Database) {
	t.Helper()
	for id := 1000; id <= 10000; id += 1000 {
		if _, err := db.DB.Exec("INSERT INTO activity (id, sku_id, name, total, start_time, end_time) VALUES (?, 3, "+
			"'tea', 5, UNIX_TIMESTAMP() - 60, UNIX_TIMESTAMP() + 3600)", id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.DB.Exec("INSERT INTO inventory (activity_id, available) VALUES (?, 5)", id); err != nil {
			t.Fatal(err)
		}
	}
}

// askUnknownIDs sends 400 calls (GetStock, Warmup, Reserve) for ids unknown returns, from
// 8 clients at once, and returns how many were not answered NotFound.
func askUnknownIDs(cli inventory.InventoryClient, unknown func() int64) int64 {
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for w := 0; w < 8; w++ {
		ids := make([]int64, 50)
		for i := range ids {
			ids[i] = unknown()
		}
		wg.Add(1)
		go func(ids []int64) {
			defer wg.Done()
			for i, id := range ids {
				var err error
				switch i % 3 {
				case 0:
					_, err = cli.GetStock(ctx, &inventory.GetStockReq{ActivityId: id})
				case 1:
					_, err = cli.Warmup(ctx, &inventory.WarmupReq{ActivityId: id})
				case 2:
					_, err = cli.Reserve(
						ctx,
						&inventory.ReserveReq{
							ActivityId: id,
							Uid:        1,
							Quantity:   1,
							RequestId:  fmt.Sprintf("unknown-%08d", id),
						},
					)
				}
				if status.Code(err) != codes.NotFound {
					wrong.Add(1)
				}
			}
		}(ids)
	}
	wg.Wait()
	return wrong.Load()
}
