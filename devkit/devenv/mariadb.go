package devenv

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	schema "github.com/seckill/seckill/sql"
)

// Database is the database StartMariaDB creates and migrates.
const Database = "seckill"

// MariaDB is a private MariaDB (or MySQL) server with the seckill database migrated.
type MariaDB struct {
	*Proc
	// DSN reaches the seckill database as root (no password) over TCP, with
	// parseTime=true as the services need.
	DSN string
}

// StartMariaDB initializes a data directory in a temporary directory with the installed
// mariadb-install-db (or mysqld --initialize-insecure for MySQL), runs the server on a free
// loopback port, waits until it accepts connections, creates the seckill database and
// applies the migrations (sql/migrations). root has no password and is reachable only on 127.0.0.1. Close
// stops the server and deletes the directory.
//
// The server trades durability for speed (innodb_flush_log_at_trx_commit=2, no binary
// log): its data is thrown away on exit anyway.
func StartMariaDB(ctx context.Context) (*MariaDB, error) { return StartMariaDBAlsoOn(ctx, "") }

// StartMariaDBAlsoOn is StartMariaDB listening on address also beside loopback ("": none),
// for clients elsewhere (the deploy test's hosts); root stays reachable on loopback only.
func StartMariaDBAlsoOn(ctx context.Context, also string) (*MariaDB, error) {
	bind := "127.0.0.1"
	if also != "" {
		bind += "," + also
	}
	server, err := LookFirst(MariaDBPackage.Binaries...)
	if err != nil {
		return nil, notInstalled(MariaDBPackage, "no mariadbd or mysqld in PATH or sbin")
	}
	isMySQL := isOracleMySQL(ctx, server)
	var proc *Proc
	proc, err = startOnFreePort(ctx, func(ctx context.Context, port int) (*Proc, error) {
		dir, err := privateDir("mariadb")
		if err != nil {
			return nil, err
		}
		// Short paths: a unix socket path must fit in ~100 bytes.
		data := filepath.Join(dir, "data")
		if err := initDataDir(ctx, server, isMySQL, dir, data); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		args := []string{
			"--no-defaults",
			"--datadir=" + data,
			"--port=" + strconv.Itoa(port),
			"--bind-address=" + bind,
			"--socket=" + filepath.Join(dir, "sock"),
			"--pid-file=" + filepath.Join(dir, "pid"),
			"--log-error=" + filepath.Join(dir, "server.log"),
			"--skip-name-resolve",
			"--skip-log-bin",
			"--max-connections=1000",
			"--innodb-buffer-pool-size=128M",
			"--innodb-log-file-size=32M",
			"--innodb-flush-log-at-trx-commit=2",
		}
		if isMySQL {
			args = append(args, "--mysqlx=OFF") // it would listen on 33060 otherwise
		}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root") // mariadbd refuses to run as root otherwise
		}
		p, err := startProc("mariadb", Loopback(port), dir, filepath.Join(dir, "server.log"), exec.Command(server, args...))
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := p.waitReady(wctx, func(ctx context.Context) error {
			return pingMySQL(ctx, rootDSN(p.Addr,
				""))
		}); err != nil {
			_ = p.Close()
			return nil, err
		}
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	m := &MariaDB{Proc: proc, DSN: rootDSN(proc.Addr, Database)}
	if err := CreateDatabase(ctx, rootDSN(proc.Addr, ""), Database); err != nil {
		_ = proc.Close()
		return nil, err
	}
	return m, nil
}

// CreateDatabase creates database name (if absent) on the server serverDSN reaches and
// applies the migrations it has not applied yet (schema.Migrate).
func CreateDatabase(ctx context.Context, serverDSN, name string) error {
	cfg, err := mysql.ParseDSN(serverDSN)
	if err != nil {
		return fmt.Errorf("bad DSN: %w", err)
	}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer admin.Close()
	if err := schema.CreateDatabase(ctx, admin, name); err != nil {
		return err
	}
	cfg.DBName = name
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = schema.Migrate(ctx, db)
	return err
}

// rootDSN is root without a password over TCP to addr, database db ("" for none).
func rootDSN(addr, db string) string {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = addr
	cfg.DBName = db
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	cfg.Params = map[string]string{"charset": "utf8mb4"}
	return cfg.FormatDSN()
}

func pingMySQL(ctx context.Context, dsn string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.PingContext(pctx)
}

// isOracleMySQL tells MySQL from MariaDB: they initialize a data directory differently.
func isOracleMySQL(ctx context.Context, server string) bool {
	if strings.Contains(filepath.Base(server), "mariadb") {
		return false
	}
	out, err := exec.CommandContext(ctx, server, "--version").CombinedOutput()
	return err == nil && !strings.Contains(string(out), "MariaDB")
}

// initDataDir creates the system tables with a password-less root.
func initDataDir(ctx context.Context, server string, isMySQL bool, dir, data string) error {
	logFile := filepath.Join(dir, "install.log")
	var cmd *exec.Cmd
	if isMySQL {
		args := []string{"--no-defaults", "--initialize-insecure", "--datadir=" + data}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		cmd = exec.CommandContext(ctx, server, args...)
	} else {
		installer, err := LookFirst("mariadb-install-db", "mysql_install_db")
		if err != nil {
			return notInstalled(MariaDBPackage, "mariadb-install-db is missing")
		}
		args := []string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal",
			"--skip-test-db", "--skip-name-resolve", "--innodb-log-file-size=32M"}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		cmd = exec.CommandContext(ctx, installer, args...)
		cmd.Dir = dir
	}
	out, err := os.Create(logFile)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initialize MariaDB data directory (%s): %w; log %s:\n%s", cmd.Path, err, logFile, tail(logFile,
			2048))
	}
	return nil
}
