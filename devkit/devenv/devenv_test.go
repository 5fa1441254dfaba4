package devenv

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/event"
	schema "github.com/seckill/seckill/sql"
)

// need installs a server binary where it is missing (apt-get), or fails: never a skip.
func need(t *testing.T, pkg Package) {
	t.Helper()
	if _, err := EnsureInstalled(context.Background(), pkg, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// assertStopped checks that Close stopped the server and removed its directory.
func assertStopped(t *testing.T, p *Proc) {
	t.Helper()
	select {
	case <-p.Exited():
	default:
		t.Fatalf("%s still running after Close", p.Name)
	}
	if _, err := os.Stat(p.Dir); !os.IsNotExist(err) {
		t.Fatalf("%s directory %s still exists (%v)", p.Name, p.Dir, err)
	}
	if c, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
		_ = c.Close()
		t.Fatalf("%s still accepts connections on %s", p.Name, p.Addr)
	}
}

func notDefaultPort(t *testing.T, addr, def string) {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == def || port == "0" {
		t.Fatalf("address %q: want a free port other than %s (%v)", addr, def, err)
	}
}

func TestStartRedis(t *testing.T) {
	need(t, RedisPackage)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	notDefaultPort(t, p.Addr, "6379")

	rds := redis.MustNewRedis(redis.RedisConf{Host: p.Addr, Type: redis.NodeType, DisableIdentity: true})
	if err := rds.Set("k", "v"); err != nil {
		t.Fatal(err)
	}
	if v, err := rds.Get("k"); err != nil || v != "v" {
		t.Fatalf("get = %q, %v", v, err)
	}
	// It is our server, not the one on the default port: a fresh server holds one key.
	if n, err := rds.Eval("return redis.call('DBSIZE')", nil); err != nil || n.(int64) != 1 {
		t.Fatalf("dbsize = %v, %v; want 1", n, err)
	}
	if _, err := os.Stat(p.Dir); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	assertStopped(t, p)
}

func TestStartRedisTwice(t *testing.T) {
	need(t, RedisPackage)
	ctx := context.Background()
	a, err := StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.Addr == b.Addr || a.Dir == b.Dir {
		t.Fatalf("two servers share %s / %s", a.Addr, a.Dir)
	}
}

func TestStartMariaDB(t *testing.T) {
	need(t, MariaDBPackage)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, err := StartMariaDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	notDefaultPort(t, m.Addr, "3306")
	if !strings.Contains(m.DSN, "parseTime=true") || !strings.Contains(m.DSN, "/"+Database) {
		t.Fatalf("DSN %q lacks the database or parseTime", m.DSN)
	}

	db, err := sql.Open("mysql", m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The migrations are applied: the ledger's tables exist and take rows.
	if _, err := db.Exec("INSERT INTO activity (id, sku_id, name, total, start_time, end_time, per_user_limit, " +
		"pay_timeout_seconds) VALUES (1, 2, 'x', 10, NOW(), NOW() + INTERVAL 1 HOUR, 1, 60)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO inventory (activity_id, available, locked, sold) VALUES (1, 10, 0, 0)"); err != nil {
		t.Fatal(err)
	}
	// BIGINT UNSIGNED underflow is an error here (1690), as on the real server it is.
	_, err = db.Exec("UPDATE inventory SET available = available - 11 WHERE activity_id = 1")
	if err == nil || !strings.Contains(err.Error(), "1690") {
		t.Fatalf("underflow: err = %v, want error 1690", err)
	}
	var tables int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ?",
		Database).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	current, latest, err := schema.Version(ctx, db)
	if err != nil || current != latest || tables < 6 {
		t.Fatalf("%d tables in %s at migration %d of %d (%v), want the 5 of sql/migrations and goose's",
			tables, Database, current, latest, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	assertStopped(t, m.Proc)
}

func TestStartKafka(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dataDir bool
	}{
		{"in memory", false},
		{"data dir survives a restart", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dir string
			if tc.dataDir {
				dir = t.TempDir()
			}
			port, err := FreePort()
			if err != nil {
				t.Fatal(err)
			}
			addr := Loopback(port)
			k, err := StartKafka(addr, dir, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(k.Addrs) != 1 || k.Addrs[0] != addr {
				_ = k.Close()
				t.Fatalf("listening on %v, want [%s]", k.Addrs, addr)
			}
			produce(t, k.Addrs, "order-1", "hello")
			if tc.dataDir {
				if err := k.Close(); err != nil {
					t.Fatal(err)
				}
				if k, err = StartKafka(addr, dir, 3); err != nil {
					t.Fatal(err)
				}
			}
			defer k.Close()
			if got := consumeOne(t, k.Addrs); got != "hello" {
				t.Fatalf("consumed %q, want hello", got)
			}
			if n := partitions(t, k); n != 3 {
				t.Fatalf("%s has %d partitions, want 3", event.Topic, n)
			}
		})
	}
}

func produce(t *testing.T, addrs []string, key, value string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: event.Topic, Key: []byte(key),
		Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func consumeOne(t *testing.T, addrs []string) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics(event.Topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no record: %v", err)
		}
		for _, r := range fs.Records() {
			return string(r.Value)
		}
	}
}

func partitions(t *testing.T, k *Kafka) int {
	t.Helper()
	n := 0
	for p := int32(0); p < 64; p++ {
		if k.Cluster.LeaderFor(event.Topic, p) < 0 {
			break
		}
		n++
	}
	return n
}

func TestNotInstalledSaysWhatToInstall(t *testing.T) {
	err := notInstalled(MariaDBPackage, "not found")
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("%v does not wrap ErrNotInstalled", err)
	}
	for _, want := range []string{"apt-get install mariadb-server", "brew install mariadb"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestEnsureInstalledFindsInstalled(t *testing.T) {
	need(t, RedisPackage)
	p, err := EnsureInstalled(context.Background(), RedisPackage, os.Stderr)
	if err != nil || !strings.HasSuffix(p, "/redis-server") {
		t.Fatalf("EnsureInstalled = %q, %v", p, err)
	}
}
