// Package testenv connects tests to the real services: Redis and MariaDB/MySQL over TCP
// (addresses from the environment, defaults 127.0.0.1:6379 and root@127.0.0.1:3306) and
// an in-process Kafka-protocol broker (kfake). Each test gets its own Redis key prefix and
// its own database with sql/ applied, removed when the test ends.
//
// When a service is unreachable the test is skipped on a laptop but fails when CI=true:
// CI must never pass by not testing.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/zeromicro/go-zero/core/stores/redis"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/event"
	"github.com/seckill/seckill/internal/stock"
	schema "github.com/seckill/seckill/sql"
)

// RedisAddr is the test Redis (SECKILL_TEST_REDIS, default 127.0.0.1:6379).
func RedisAddr() string { return env("SECKILL_TEST_REDIS", "127.0.0.1:6379") }

// MySQLDSN is the test server's DSN without a database
// (SECKILL_TEST_MYSQL, default root:@tcp(127.0.0.1:3306)/).
func MySQLDSN() string { return env("SECKILL_TEST_MYSQL", "root:@tcp(127.0.0.1:3306)/") }

func env(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// unavailable skips the test, or fails it under CI.
func unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required under CI=true: %v", what, err)
	}
	t.Skipf("%s unavailable: %v", what, err)
}

// RandomName returns a short random lower-case name with the given prefix.
func RandomName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
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

// MySQL creates a database with the schema applied, dropped when the test ends.
func MySQL(t testing.TB) *Database {
	t.Helper()
	cfg, err := mysql.ParseDSN(MySQLDSN())
	if err != nil {
		t.Fatalf("bad SECKILL_TEST_MYSQL: %v", err)
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
	if err := schema.Apply(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = db.Close()
		_ = schema.DropDatabase(context.Background(), admin, name)
		_ = admin.Close()
	})
	return &Database{Name: name, DSN: dsn, Conn: sqlx.NewSqlConnFromDB(db), DB: db}
}

// Kafka starts an in-process Kafka-protocol broker with the event topics created
// (partitions each) and returns its seed addresses. It is closed when the test ends.
func Kafka(t testing.TB, partitions int) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), event.Topic, event.DeadLetterTopic))
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// IsCI reports whether the tests run under CI.
func IsCI() bool { return strings.EqualFold(os.Getenv("CI"), "true") }
