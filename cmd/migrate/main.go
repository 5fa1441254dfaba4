// Command migrate applies the schema migrations (sql/migrations, embedded) to a MySQL or
// MariaDB database, or says where the database stands. It runs as the migration user
// (deploy/mysql/grants.sql), never as a service's. The DSN is go-sql-driver's, from -dsn or
// SECKILL_MIGRATE_DSN (the environment keeps the password out of the process list);
// parseTime=true is added.
//
//	SECKILL_MIGRATE_DSN='seckill_migrate:…@tcp(127.0.0.1:3306)/seckill' go run -tags no_k8s ./cmd/migrate up
//
// up: applies every pending migration (none pending: nothing happens; concurrent runs take
// turns). status: each migration, applied or pending. version: the database's version and
// the latest. There is no down: a migration that went wrong is undone by the next one.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-sql-driver/mysql"

	schema "github.com/seckill/seckill/sql"
)

// EnvDSN names the variable holding the DSN when -dsn is not given.
const EnvDSN = "SECKILL_MIGRATE_DSN"

var errUsage = errors.New("usage")

func main() {
	err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if errors.Is(err, errUsage) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fl := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	dsn := fl.String("dsn", "", "go-sql-driver DSN of the database (default $"+EnvDSN+")")
	timeout := fl.Duration("timeout", 15*time.Minute, "deadline of the whole command")
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: migrate [-dsn DSN] [-timeout D] up|status|version")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		return errUsage
	}
	if fl.NArg() != 1 || (fl.Arg(0) != "up" && fl.Arg(0) != "status" && fl.Arg(0) != "version") {
		fl.Usage()
		return errUsage
	}
	if *dsn == "" {
		*dsn = getenv(EnvDSN)
	}
	db, err := open(*dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	switch fl.Arg(0) {
	case "up":
		return up(ctx, db, stdout)
	case "status":
		return status(ctx, db, stdout)
	default:
		current, latest, err := schema.Version(ctx, db)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "version %d, latest %d\n", current, latest)
		return nil
	}
}

func open(dsn string) (*sql.DB, error) {
	if dsn == "" {
		return nil, fmt.Errorf("no DSN: give -dsn or set %s", EnvDSN)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("bad DSN: %w", err)
	}
	if cfg.DBName == "" {
		return nil, errors.New("the DSN names no database")
	}
	cfg.ParseTime = true
	return sql.Open("mysql", cfg.FormatDSN())
}

func up(ctx context.Context, db *sql.DB, out io.Writer) error {
	applied, err := schema.Migrate(ctx, db)
	for _, v := range applied {
		fmt.Fprintf(out, "applied %d\n", v)
	}
	if err != nil {
		return err
	}
	current, _, err := schema.Version(ctx, db)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "at version %d (%d applied now)\n", current, len(applied))
	return nil
}

func status(ctx context.Context, db *sql.DB, out io.Writer) error {
	st, err := schema.Status(ctx, db)
	if err != nil {
		return err
	}
	for _, s := range st {
		state := "pending"
		if s.Applied {
			state = "applied " + s.AppliedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(out, "%5d  %-40s %s\n", s.Version, s.File, state)
	}
	return nil
}
