package opstest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/seckill/seckill/devkit/testenv"
	schema "github.com/seckill/seckill/sql"
)

var tableGrant = regexp.MustCompile("(?m)^GRANT ([A-Z, ]+) ON `seckill`\\.`(\\w+)` TO '(\\w+)'@'%';$")

// deploy/mysql/grants.sql grants every table the migrations create to a service, names no
// table they do not create, and gives no service goose's record, a schema-wide grant or
// more than SELECT, INSERT, UPDATE. migrator.sql gives the migration user what goose and
// a migration need on the whole schema.
func TestGrantsCoverTheMigratedTables(t *testing.T) {
	grants := read(t, "../../deploy/mysql/grants.sql")
	if strings.Contains(grants, "`seckill`.*") {
		t.Error("grants.sql: a service has a schema-wide grant")
	}
	granted := map[string]bool{}
	for _, m := range tableGrant.FindAllStringSubmatch(grants, -1) {
		granted[m[2]] = true
		for _, p := range strings.Split(m[1], ", ") {
			if p != "SELECT" && p != "INSERT" && p != "UPDATE" {
				t.Errorf("grants.sql: %s on %s to %s", p, m[2], m[3])
			}
		}
	}
	if granted[schema.VersionTable] {
		t.Errorf("grants.sql: a service has %s", schema.VersionTable)
	}
	d := testenv.MySQL(t)
	rows, err := d.DB.Query("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	migrated := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		migrated[n] = true
		if n != schema.VersionTable && !granted[n] {
			t.Errorf("grants.sql: table %s (sql/migrations) is granted to no service", n)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for n := range granted {
		if !migrated[n] {
			t.Errorf("grants.sql: table %s is not created by sql/migrations (a grant on it fails)", n)
		}
	}
	m := regexp.MustCompile("(?m)^GRANT ([A-Z, \n]+) ON `seckill`\\.\\* TO 'seckill_migrate'@'%';$").
		FindStringSubmatch(read(t, "../../deploy/mysql/migrator.sql"))
	if m == nil {
		t.Fatal("migrator.sql: no grant on `seckill`.* to seckill_migrate")
	}
	have := strings.Fields(strings.ReplaceAll(m[1], ",", " "))
	for _, p := range []string{"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "ALTER", "DROP", "INDEX"} {
		if !slices.Contains(have, p) {
			t.Errorf("migrator.sql: seckill_migrate lacks %s on `seckill`.*", p)
		}
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The overlay: the one change a test makes to deploy/mysql's SQL files before running them.
// The schema `seckill` becomes the test's database and each user seckill_<name> gets the
// test's suffix ('seckill_rpc'@, and ”seckill_rpc”@ inside a string; users are global to
// the server, and tests run in parallel); the hosts ('%'), the privileges and everything
// else run as deploy/ has them.
func overlay(sqlText, db, suffix string) string {
	sqlText = strings.ReplaceAll(sqlText, "`seckill`.", "`"+db+"`.")
	return regexp.MustCompile(`('+)(seckill_\w+)('+@)`).ReplaceAllString(sqlText, "${1}${2}_"+suffix+"${3}")
}

// grantCase is one statement a service user runs: allowed or refused by the grants.
type grantCase struct {
	user, stmt string
	allowed    bool
}

// grantCases: what each service's statements do to each table (model/, the writer's
// mq/internal/writer/writer.go, the jobs, internal/reconcile, the draw in rpc/internal/draw),
// and what it must not do. Activity 1 and its rows exist; each runs in a rolled-back
// transaction.
var grantCases = []grantCase{
	// the inventory service: CreateActivity, the loader, degrade mode, Repair, the draw
	{"rpc", "INSERT INTO activity (sku_id, name, total, start_time, end_time) VALUES (1, 'x', 5, 0, 9)", true},
	{"rpc", "UPDATE activity SET draw_done_at = 1, draw_stock = 5 WHERE id = 1", true},
	{"rpc", "SELECT `mode` FROM inventory WHERE activity_id = 1 FOR UPDATE", true},
	{"rpc", "INSERT INTO inventory (activity_id, available) VALUES (2, 5)", true},
	{"rpc", "UPDATE inventory SET available = available - 1, locked = locked + 1 WHERE activity_id = 1", true},
	{"rpc", "SELECT order_no, status FROM seckill_order WHERE order_no IN ('o1') FOR UPDATE", true},
	{"rpc", "INSERT INTO seckill_order (order_no, request_id, activity_id, uid, quantity, status) " +
		"VALUES ('o2', 'r2', 1, 2, 1, 'reserved')", true},
	{"rpc", "UPDATE seckill_order SET status = 'paid' WHERE order_no = 'o1'", true},
	{"rpc", "INSERT INTO stock_adjustment (event_id, activity_id, delta) VALUES ('e2', 1, 1)", true},
	{"rpc", "INSERT INTO idempotency_key (merchant_id, idem_key, fingerprint, activity_id) VALUES (1, '1:k', 'f', 1)",
		true},
	{"rpc", "SELECT activity_id, fingerprint FROM idempotency_key WHERE merchant_id = 1 AND idem_key = '1:k'", true},
	{"rpc", "DELETE FROM idempotency_key WHERE merchant_id = 1", false},
	{"mq", "SELECT activity_id FROM idempotency_key", false},
	{"rpc", "SELECT uid, quantity, request_id FROM draw_entry WHERE activity_id = 1", true},
	{"rpc", "INSERT INTO draw_entry (activity_id, uid, quantity, request_id, event_id) VALUES (1, 9, 1, 'r', 'e')", false},
	{"rpc", "DELETE FROM seckill_order WHERE order_no = 'o1'", false},
	{"rpc", "SELECT * FROM goose_db_version", false},
	{"rpc", "CREATE TABLE t_rpc (id INT)", false},
	// the writer and its jobs: events applied to orders and inventory, adjustments, entries
	{"mq", "SELECT total FROM activity WHERE id = 1", true},
	{"mq", "UPDATE activity SET total = total + 1 WHERE id = 1", true},
	{"mq", "SELECT activity_id, epoch FROM inventory WHERE activity_id IN (1) ORDER BY activity_id FOR UPDATE", true},
	{"mq", "UPDATE inventory SET locked = locked - 1, sold = sold + 1 WHERE activity_id = 1", true},
	{"mq", "INSERT INTO inventory (activity_id, available) VALUES (3, 5)", true},
	{"mq", "SELECT order_no, status FROM seckill_order WHERE order_no IN ('o1') FOR UPDATE", true},
	{"mq", "INSERT INTO seckill_order (order_no, request_id, activity_id, uid, quantity, status) " +
		"VALUES ('o3', 'r3', 1, 3, 1, 'reserved')", true},
	{"mq", "UPDATE seckill_order SET status = 'cancelled' WHERE order_no = 'o1'", true},
	{"mq", "INSERT IGNORE INTO stock_adjustment (event_id, activity_id, delta) VALUES ('e3', 1, 1)", true},
	{"mq", "INSERT IGNORE INTO draw_entry (activity_id, uid, quantity, request_id, event_id, entered_at) " +
		"VALUES (1, 7, 1, 'r7', 'e7', 1)", true},
	{"mq", "INSERT INTO activity (sku_id, name, total, start_time, end_time) VALUES (1, 'x', 5, 0, 9)", false},
	{"mq", "DELETE FROM seckill_order WHERE order_no = 'o1'", false},
	{"mq", "DELETE FROM draw_entry WHERE activity_id = 1", false},
	{"mq", "UPDATE goose_db_version SET is_applied = 0", false},
	{"mq", "DROP TABLE seckill_order", false},
}

// deploy/mysql's files run against a real MariaDB as deploy/ runs them (overlay above):
// migrator.sql as root, the migrations as its migration user, grants.sql as root; then
// each service's user runs what its service runs, and is refused what it must not do. The
// users are exactly the MySQL users of deploy/multinode's configs: the gateway has none.
func TestGrantsAsTheServices(t *testing.T) {
	d := testenv.EmptyMySQL(t)
	suffix := strings.ToLower(testenv.RandomName(""))
	pw := map[string]string{"migrate": testenv.RandomSecret(), "rpc": testenv.RandomSecret(), "mq": testenv.RandomSecret(),
		"exporter": testenv.RandomSecret()}
	root := rootConn(t, d.Name)
	t.Cleanup(func() {
		for u := range pw {
			if _, err := root.Exec("DROP USER IF EXISTS 'seckill_" + u + "_" + suffix + "'@'%'"); err != nil {
				t.Error(err)
			}
		}
	})
	run := func(file string) { // as mysql/grants.sh runs it: the passwords as session variables
		vars := fmt.Sprintf("SET @migrate = '%s', @rpc = '%s', @mq = '%s', @exporter = '%s';\n",
			pw["migrate"], pw["rpc"], pw["mq"], pw["exporter"])
		if _, err := root.Exec(vars + overlay(read(t, "../../deploy/mysql/"+file), d.Name, suffix)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	run("migrator.sql")
	if _, err := schema.Migrate(context.Background(), userConn(t, d.DSN, "migrate", suffix, pw["migrate"])); err != nil {
		t.Fatalf("migrate up as the migration user: %v", err)
	}
	run("grants.sql")
	checkServiceUsers(t, read(t, "../../deploy/mysql/grants.sql"))
	checkExporterUser(t, d.DSN, d.Name, suffix, pw["exporter"])
	seed := []string{"INSERT INTO activity (id, sku_id, name, total, start_time, end_time) VALUES (1, 1, 'a', 5, 0, 9)",
		"INSERT INTO inventory (activity_id, available, locked) VALUES (1, 5, 2)",
		"INSERT INTO seckill_order (order_no, request_id, activity_id, uid, quantity, status) " +
			"VALUES ('o1', 'r1', 1, 1, 1, 'reserved')",
		"INSERT INTO stock_adjustment (event_id, activity_id, delta) VALUES ('e1', 1, 1)",
		"INSERT INTO draw_entry (activity_id, uid, quantity, request_id, event_id) VALUES (1, 1, 1, 'r1', 'e1')"}
	for _, s := range seed {
		if _, err := d.DB.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	users := map[string]*sql.DB{"rpc": userConn(t, d.DSN, "rpc", suffix, pw["rpc"]),
		"mq": userConn(t, d.DSN, "mq", suffix, pw["mq"])}
	for _, c := range grantCases {
		err := inRollback(users[c.user], c.stmt)
		var me *mysql.MySQLError
		switch {
		case c.allowed && err != nil:
			t.Errorf("%s cannot: %s: %v", c.user, c.stmt, err)
		case !c.allowed && err == nil:
			t.Errorf("%s may: %s", c.user, c.stmt)
		case !c.allowed && !(errors.As(err, &me) && (me.Number == 1142 || me.Number == 1044)):
			t.Errorf("%s: %s: %v, want a privilege error", c.user, c.stmt, err)
		}
	}
}

// rootConn is the test server's root on database db, several statements per Exec (a file).
func rootConn(t *testing.T, db string) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(testenv.MySQLDSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName, cfg.MultiStatements = db, true
	return open(t, cfg.FormatDSN())
}

// userConn is the test database as the user seckill_<name>_<suffix>.
func userConn(t *testing.T, dsn, name, suffix, pass string) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Passwd = "seckill_"+name+"_"+suffix, pass
	return open(t, cfg.FormatDSN())
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() }) // closing a pool the test is done with
	if err := db.Ping(); err != nil {
		t.Fatal(err)
	}
	return db
}

// inRollback runs stmt (a query's rows read to the end) in a transaction rolled back.
func inRollback(db *sql.DB, stmt string) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // nothing a case does is kept
	rows, err := tx.Query(stmt)
	if err != nil {
		return err
	}
	defer func() { _ = rows.Close() }() // read to the end: Err says how it went
	for rows.Next() {                   //nolint:revive // read to the end
	}
	return rows.Err()
}

// checkServiceUsers: grants.sql creates exactly the MySQL users of deploy/multinode's
// configs (rpc.yaml, mq.yaml), and the gateway (api.yaml) connects to MySQL as none.
func checkServiceUsers(t *testing.T, grants string) {
	t.Helper()
	created := map[string]bool{}
	createUser := regexp.MustCompile(`(?m)^CREATE USER IF NOT EXISTS '(\w+)'@'%';$`)
	for _, m := range createUser.FindAllStringSubmatch(grants, -1) {
		created[m[1]] = true
	}
	dsnUser := regexp.MustCompile(`(?m)^\s*DataSource: (\w+):`)
	for _, f := range []string{"rpc.yaml", "mq.yaml", "api.yaml"} {
		m := dsnUser.FindStringSubmatch(read(t, "../../deploy/multinode/"+f))
		switch {
		case f == "api.yaml" && m != nil:
			t.Errorf("api.yaml: the gateway connects to MySQL as %s", m[1])
		case f != "api.yaml" && (m == nil || !created[m[1]]):
			t.Errorf("%s: its MySQL user %v is not created by grants.sql (%v)", f, m, created)
		case m != nil:
			delete(created, m[1])
		}
	}
	delete(created, exporterUser) // the metrics exporter's (checkExporterUser)
	if len(created) != 0 {
		t.Errorf("grants.sql creates users no service uses: %v", created)
	}
}

// exporterUser is prom/mysqld-exporter's MySQL user (deploy/docker-compose.yml).
const exporterUser = "seckill_exporter"

// checkExporterUser: the exporter's user reads what mysqld-exporter's default collectors
// read (InnoDB status needs PROCESS, performance_schema's summaries SELECT on it), and no
// table of the application's database.
func checkExporterUser(t *testing.T, dsn, db, suffix, pass string) {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Passwd, cfg.DBName = exporterUser+"_"+suffix, pass, ""
	c := open(t, cfg.FormatDSN())
	for _, stmt := range []string{"SHOW GLOBAL STATUS", "SHOW ENGINE INNODB STATUS",
		"SELECT COUNT(*) FROM performance_schema.events_statements_summary_by_digest",
		"SELECT COUNT(*) FROM performance_schema.table_io_waits_summary_by_table"} {
		if err := inRollback(c, stmt); err != nil {
			t.Errorf("%s cannot: %s: %v", exporterUser, stmt, err)
		}
	}
	for _, stmt := range []string{"SELECT * FROM `" + db + "`.seckill_order", "SELECT * FROM `" + db + "`.activity",
		"SELECT * FROM mysql.user", "CREATE DATABASE exporter_" + suffix} {
		var me *mysql.MySQLError
		if err := inRollback(c, stmt); !errors.As(err, &me) || (me.Number != 1142 && me.Number != 1044) {
			t.Errorf("%s: %s: %v, want a privilege error", exporterUser, stmt, err)
		}
	}
}
