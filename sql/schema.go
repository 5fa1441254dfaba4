// Package schema holds the database schema: the migrations (migrations/, applied by
// Migrate with goose) and schema.sql, the schema they add up to (the source of make gen's
// models; never applied by code). Besides, the few statements on databases as a whole that
// tooling needs (create, drop, disconnect, status).
package schema

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

func quoteIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// CreateDatabase creates database name on the server admin is connected to, if absent.
func CreateDatabase(ctx context.Context, admin *sql.DB, name string) error {
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(name)); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// DropDatabase drops database name, if present.
func DropDatabase(ctx context.Context, admin *sql.DB, name string) error {
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+quoteIdent(name)); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// Disconnect closes every other session using database name (tests: go-zero keeps a pool
// per DSN for the life of the process, so a dropped test database's idle connections
// would otherwise hold server slots until their lifetime ends).
func Disconnect(ctx context.Context, admin *sql.DB, name string) error {
	rows, err := admin.QueryContext(ctx,
		"SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()", name)
	if err != nil {
		return fmt.Errorf("sessions of %s: %w", name, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			_ = rows.Close() //nolint:sqlclosecheck // closed on each path, before the KILLs
			return err
		}
		ids = append(ids, id)
	}
	_ = rows.Close()
	for _, id := range ids {
		// Gone meanwhile (ER_NO_SUCH_THREAD) is what we wanted.
		_, _ = admin.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id))
	}
	return rows.Err()
}

// GlobalStatus reads the named server status variables (SHOW GLOBAL STATUS) as (name,
// value) rows, for measurements (make bench: Threads_running, InnoDB row lock waits).
// Names are letters, digits and underscores.
func GlobalStatus(ctx context.Context, db *sql.DB, names ...string) ([][2]string, error) {
	quoted := make([]string, 0, len(names))
	for _, n := range names {
		if n == "" || strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			return nil, fmt.Errorf("status variable %q: not a name", n)
		}
		quoted = append(quoted, "'"+n+"'")
	}
	rows, err := db.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ("+strings.Join(quoted, ",")+")")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var r [2]string
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
