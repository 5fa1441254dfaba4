// Package testenv connects tests to the real services: Redis and MariaDB/MySQL over TCP
// (addresses from the environment, defaults 127.0.0.1:6379 and root@127.0.0.1:3306) and
// an in-process Kafka-protocol broker (kfake). Each test gets its own Redis key prefix and
// its own database with the migrations of sql/ applied, removed when the test ends.
//
// Where the servers come from, for Redis and MySQL alike: an address given in the
// environment (SECKILL_TEST_REDIS, SECKILL_TEST_MYSQL) is used as it is, and a test fails
// when it is unreachable; with none given, a server answering on the default port is used;
// with none there either, a private server is started once per test binary by the same
// starter `make run` uses (devkit/devenv, installing the package with apt-get where it is
// missing). A test never skips for want of a server: it runs, or it fails saying why.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	red "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
	schema "github.com/seckill/seckill/sql"
)

const (
	envRedis     = "SECKILL_TEST_REDIS"
	envMySQL     = "SECKILL_TEST_MYSQL"
	defaultRedis = "127.0.0.1:6379"
	defaultMySQL = "root:@tcp(127.0.0.1:3306)/"
)

// server is one dependency resolved once per test binary.
type server struct {
	once sync.Once
	addr string // Redis host:port, or a MySQL DSN without database
	err  error
}

var redisServer, mysqlServer server

func (s *server) resolve(env, def string, up func(string) error, start func(context.Context) (string, error)) (string,
	error) {
	if v := os.Getenv(env); v != "" {
		return v, nil // given: used as it is
	}
	s.once.Do(func() {
		if up(def) == nil {
			s.addr = def
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		devenv.SweepStale()
		s.addr, s.err = start(ctx)
		if s.err != nil {
			s.addr = def
			s.err = fmt.Errorf("nothing answers on %s and no private server could be started: %w", def, s.err)
		}
	})
	return s.addr, s.err
}

func redisUp(addr string) error {
	c := red.NewClient(&red.Options{Addr: addr, DisableIdentity: true, DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

func mysqlUp(dsn string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

func startRedis(ctx context.Context) (string, error) {
	if _, err := devenv.EnsureInstalled(ctx, devenv.RedisPackage, os.Stderr); err != nil {
		return "", err
	}
	p, err := devenv.StartRedis(ctx)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "testenv: no Redis on %s: started a private redis-server on %s\n", defaultRedis, p.Addr)
	return p.Addr, nil // stopped by the kernel when the test binary exits (devenv: parent-death signal)
}

func startMySQL(ctx context.Context) (string, error) {
	if _, err := devenv.EnsureInstalled(ctx, devenv.MariaDBPackage, os.Stderr); err != nil {
		return "", err
	}
	m, err := devenv.StartMariaDB(ctx)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "testenv: no MySQL on 127.0.0.1:3306: started a private MariaDB on %s\n", m.Addr)
	return "root:@tcp(" + m.Addr + ")/", nil
}

// RedisServer returns the test Redis's address, or why there is none.
func RedisServer() (string, error) {
	return redisServer.resolve(envRedis, defaultRedis, redisUp, startRedis)
}

// MySQLServer returns the test MySQL server's DSN without a database, or why there is none.
func MySQLServer() (string, error) {
	return mysqlServer.resolve(envMySQL, defaultMySQL, mysqlUp, startMySQL)
}

// RedisAddr is the test Redis (see the package comment); Redis(t) fails a test that has none.
func RedisAddr() string {
	addr, _ := RedisServer()
	return addr
}

// MySQLDSN is the test server's DSN without a database (see the package comment).
func MySQLDSN() string {
	dsn, _ := MySQLServer()
	return dsn
}

// unavailable fails the test: a test never passes by not testing.
func unavailable(t testing.TB, what string, err error) {
	t.Helper()
	t.Fatalf("%s is required (give %s, or let the harness start one): %v", what, map[string]string{"redis": envRedis,
		"mysql": envMySQL}[what], err)
}

// Need makes sure a server binary is installed (apt-get where it is missing), else fails.
func Need(t testing.TB, pkg devenv.Package) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := devenv.EnsureInstalled(ctx, pkg, os.Stderr); err != nil {
		t.Fatal(err)
	}
}

// RandomName returns a short random lower-case name with the given prefix.
func RandomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// RandomSecret is 32 random bytes, hex-encoded: a key secrets.Check accepts (EventKey).
func RandomSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RedisConf is the go-zero configuration for the test Redis.
func RedisConf() redis.RedisConf {
	return redis.RedisConf{Host: RedisAddr(), Type: redis.NodeType, DisableIdentity: true,
		NonBlock: true, PingTimeout: time.Second}
}

// Redis returns a client for the test Redis and a key naming with a fresh prefix; every
// key under the prefix is deleted when the test ends.
func Redis(t testing.TB) (*redis.Redis, stock.Keys) {
	t.Helper()
	if _, err := RedisServer(); err != nil {
		unavailable(t, "redis", err)
	}
	rds, err := redis.NewRedis(RedisConf())
	if err == nil && !rds.Ping() {
		err = fmt.Errorf("no PONG from %s", RedisAddr())
	}
	if err != nil {
		unavailable(t, "redis", err)
	}
	keys := stock.Keys{Prefix: RandomName("t") + ":"}
	t.Cleanup(func() { DeletePrefix(rds, keys.Prefix) })
	return rds, keys
}

// DeletePrefix deletes every key starting with prefix.
func DeletePrefix(rds *redis.Redis, prefix string) {
	var cursor uint64
	for {
		keys, next, err := rds.Scan(cursor, prefix+"*", 1000)
		if err != nil {
			return
		}
		if len(keys) > 0 {
			_, _ = rds.Del(keys...)
		}
		if cursor = next; cursor == 0 {
			return
		}
	}
}

// Database is a fresh test database.
type Database struct {
	Name string
	DSN  string // with parseTime=true, as the services use
	Conn sqlx.SqlConn
	DB   *sql.DB
}

// MySQL creates a database with the migrations applied (schema.Migrate), dropped when the
// test ends.
func MySQL(t testing.TB) *Database {
	t.Helper()
	d := EmptyMySQL(t)
	if _, err := schema.Migrate(context.Background(), d.DB); err != nil {
		t.Fatal(err)
	}
	return d
}

// EmptyMySQL creates a database without any table, dropped when the test ends.
func EmptyMySQL(t testing.TB) *Database {
	t.Helper()
	server, err := MySQLServer()
	if err != nil {
		unavailable(t, "mysql", err)
	}
	cfg, err := mysql.ParseDSN(server)
	if err != nil {
		t.Fatalf("bad %s: %v", envMySQL, err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = admin.PingContext(ctx)
		cancel()
	}
	if err != nil {
		unavailable(t, "mysql", err)
	}
	name := RandomName("sk_t_")
	if err := schema.CreateDatabase(context.Background(), admin, name); err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	cfg.ParseTime = true
	dsn := cfg.FormatDSN()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = db.Close()
		_ = schema.Disconnect(context.Background(), admin, name)
		_ = schema.DropDatabase(context.Background(), admin, name)
		_ = admin.Close()
	})
	return &Database{Name: name, DSN: dsn, Conn: sqlx.NewSqlConnFromDB(db), DB: db}
}

// Kafka starts an in-process Kafka-protocol broker with the event topics created
// (partitions each) and returns its seed addresses. It is closed when the test ends.
func Kafka(t testing.TB, partitions int) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), event.Topic,
		event.DeadLetterTopic))
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// IsCI reports whether the tests run under CI.
func IsCI() bool { return strings.EqualFold(os.Getenv("CI"), "true") }
