package schema

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"time"

	"github.com/pressly/goose/v3"
)

// Migrations are the versioned schema changes, applied in order by Migrate: goose SQL files
// named NNNNN_what.sql. schema.sql is what they add up to (a test compares the two).
//
//go:embed migrations/*.sql
var Migrations embed.FS

// VersionTable is goose's record of the applied migrations, in the migrated database.
const VersionTable = "goose_db_version"

// Migrate applies every migration the database db is connected to has not applied yet, and
// returns their versions (none: it was up to date). It is the one way the schema gets into
// a database: make run, the tests' databases and cmd/migrate all call it. Concurrent calls
// (processes, goroutines) on one database take turns: each holds a MySQL named lock
// (GET_LOCK, withLock) for the whole run.
func Migrate(ctx context.Context, db *sql.DB) ([]int64, error) {
	return migrate(ctx, db, migrationFiles())
}

func migrate(ctx context.Context, db *sql.DB, fsys fs.FS) ([]int64, error) {
	p, err := provider(db, fsys)
	if err != nil {
		return nil, err
	}
	var results []*goose.MigrationResult
	err = withLock(ctx, db, lockWait, func() (err error) {
		results, err = p.Up(ctx)
		return err
	})
	applied := make([]int64, 0, len(results))
	for _, r := range results {
		if r.Error == nil {
			applied = append(applied, r.Source.Version)
		}
	}
	if err != nil {
		return applied, fmt.Errorf("migrate: %w", err)
	}
	return applied, nil
}

// MigrationState is one migration and whether the database has applied it.
type MigrationState struct {
	Version   int64
	File      string
	Applied   bool
	AppliedAt time.Time // zero when not applied
}

// Status lists every migration, oldest first, with whether db has applied it. Like Version,
// it waits for a Migrate in progress (goose creates its version table when missing, even
// to read it). db's DSN needs parseTime=true.
func Status(ctx context.Context, db *sql.DB) ([]MigrationState, error) {
	p, err := provider(db, migrationFiles())
	if err != nil {
		return nil, err
	}
	var st []*goose.MigrationStatus
	if err := withLock(ctx, db, lockWait, func() (err error) {
		st, err = p.Status(ctx)
		return err
	}); err != nil {
		return nil, fmt.Errorf("migration status: %w", err)
	}
	out := make([]MigrationState, 0, len(st))
	for _, s := range st {
		out = append(out, MigrationState{Version: s.Source.Version, File: s.Source.Path,
			Applied: s.State == goose.StateApplied, AppliedAt: s.AppliedAt})
	}
	return out, nil
}

// Version returns the highest migration db has applied (0: none) and the highest there is.
func Version(ctx context.Context, db *sql.DB) (current, latest int64, err error) {
	p, err := provider(db, migrationFiles())
	if err != nil {
		return 0, 0, err
	}
	if err = withLock(ctx, db, lockWait, func() (err error) {
		current, latest, err = p.GetVersions(ctx)
		return err
	}); err != nil {
		return 0, 0, fmt.Errorf("migration version: %w", err)
	}
	return current, latest, nil
}

func migrationFiles() fs.FS {
	sub, err := fs.Sub(Migrations, "migrations")
	if err != nil {
		panic(err) // the embedded directory exists: go:embed fails the build otherwise
	}
	return sub
}

func provider(db *sql.DB, fsys fs.FS) (*goose.Provider, error) {
	p, err := goose.NewProvider(goose.DialectMySQL, db, fsys,
		goose.WithTableName(VersionTable),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}
