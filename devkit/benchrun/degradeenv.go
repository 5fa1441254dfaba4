package benchrun

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/standalone"
	"github.com/seckill/seckill/model"
	schema "github.com/seckill/seckill/sql"
)

// degradeEnv is what every point shares.
type degradeEnv struct {
	c      *Config
	sys    *standalone.System
	tag    string
	server *mysql.Config // the system's MySQL DSN
	admin  *sql.DB       // the server: SHOW GLOBAL STATUS, databases
	// The current point's deployment (fresh).
	kafka     *devenv.Kafka
	dsn       string
	prefix    string
	conn      sqlx.SqlConn
	inventory model.InventoryModel
	orders    model.SeckillOrderModel
	logf      func(string, ...any)
	uid       int64 // next buyer id
}

func newDegradeEnv(ctx context.Context, c *Config, sys *standalone.System, logf func(string, ...any)) (
	*degradeEnv, func(), error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	env := &degradeEnv{c: c, sys: sys, logf: logf, tag: hex.EncodeToString(b[:]),
		uid: time.Now().Unix()%1_000_000*1_000_000 + 500_000}
	mc, err := mysql.ParseDSN(sys.MySQLDSN)
	if err != nil {
		return nil, nil, err
	}
	env.server = mc
	server := *mc
	server.DBName = ""
	if env.admin, err = sql.Open("mysql", server.FormatDSN()); err != nil {
		return nil, nil, err
	}
	env.admin.SetMaxOpenConns(2)
	return env, func() { _ = env.admin.Close() }, nil
}

// fresh gives point i a deployment of its own beside the others' (closed by then): a
// database on the system's MySQL server, a key prefix on its Redis server, an in-process
// Kafka. Shared, the next point's jobs and recovery would work on the last point's
// activities (rebuilding thousands of orders into Redis during its bursts).
func (e *degradeEnv) fresh(ctx context.Context, i int) (func(), error) {
	var cleanup []func()
	closeAll := func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}
	name := fmt.Sprintf("seckill_degrade_%s_%d", e.tag, i)
	e.prefix = fmt.Sprintf("%sdegrade-%s-%d:", e.sys.KeyPrefix, e.tag, i)
	mc := *e.server
	mc.DBName = name
	e.dsn = mc.FormatDSN()
	cleanup = append(cleanup, func() {
		// go-zero keeps the services' pool of this DSN for the life of the process: end
		// its sessions so that they hold no server slots.
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = schema.Disconnect(dctx, e.admin, name)
		_ = schema.DropDatabase(dctx, e.admin, name)
	})
	if err := devenv.CreateDatabase(ctx, e.dsn, name); err != nil {
		closeAll()
		return nil, fmt.Errorf("database: %w", err)
	}
	db, err := sql.Open("mysql", e.dsn)
	if err != nil {
		closeAll()
		return nil, err
	}
	db.SetMaxOpenConns(2)
	cleanup = append(cleanup, func() { _ = db.Close() })
	e.conn = sqlx.NewSqlConnFromDB(db)
	e.inventory, e.orders = model.NewInventoryModel(e.conn), model.NewSeckillOrderModel(e.conn)
	k, err := devenv.StartKafka("127.0.0.1:0", "", 4)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("kafka: %w", err)
	}
	e.kafka = k
	cleanup = append(cleanup, func() { _ = k.Close() })
	return closeAll, nil
}

// take reserves n fresh buyer ids and returns the uid base of buyerRequest.
func (e *degradeEnv) take(n int) int64 {
	base := e.uid
	e.uid += int64(n) + 1
	return base
}
