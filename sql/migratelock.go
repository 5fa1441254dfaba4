package schema

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// lockWait is how long a Migrate waits for another one on the same database to finish.
const lockWait = 10 * time.Minute

// lockName is the migrations' named lock (GET_LOCK), as SQL: one per database. A lock name
// is at most 64 characters and a database name may be 64 on its own, hence the MD5.
const lockName = "CONCAT('seckill-migrate:', MD5(DATABASE()))"

// withLock runs fn while holding the migrations' named lock of db's database, on a session
// of its own: concurrent runs (processes, goroutines) take turns, and the server releases
// the lock when that session ends, so a killed run leaves no stale lock. The lock is not
// goose's SessionLocker (goose ships one for Postgres only) because goose takes that one
// for the migrations alone: Up first asks HasPending without it, which creates goose's
// version table when missing, so a second process could list that table between its
// creation and its first row and fail ("missing zero version migration";
// TestConcurrentMigrateRunsEachMigrationOnce). fn's goose calls use other sessions of db:
// db must allow two connections.
func withLock(ctx context.Context, db *sql.DB, wait time.Duration, fn func() error) (err error) {
	if db.Stats().MaxOpenConnections == 1 {
		return errors.New("migrations: the pool needs two connections (the lock's and goose's)")
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer conn.Close()
	var got sql.NullInt64
	err = conn.QueryRowContext(ctx, "SELECT GET_LOCK("+lockName+", ?)", int64(wait/time.Second)).Scan(&got)
	switch {
	case err != nil:
		return fmt.Errorf("migration lock: %w", err)
	case !got.Valid:
		return errors.New("migration lock: GET_LOCK returned NULL (no database selected?)")
	case got.Int64 != 1:
		return fmt.Errorf("migration lock: another migration held it for %s", wait)
	}
	defer func() {
		// Not under ctx: a cancelled run still releases (closing conn would too).
		var released sql.NullInt64
		uerr := conn.QueryRowContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK("+lockName+")").Scan(&released)
		if uerr == nil && released.Int64 != 1 {
			uerr = errors.New("the lock was not this session's")
		}
		if uerr != nil && err == nil {
			err = fmt.Errorf("migration unlock: %w", uerr)
		}
	}()
	return fn()
}
