package schema_test

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/seckill/seckill/devkit/testenv"
	schema "github.com/seckill/seckill/sql"
)

// The schema the migrations add up to (make gen's source), and the one the code of
// 4c34631 applied with CREATE TABLE IF NOT EXISTS (verbatim; the last tree before migrations).
var (
	//go:embed schema.sql
	currentDDL string
	//go:embed testdata/schema-4c34631.sql
	ddl4c34631 string
)

var fileName = regexp.MustCompile(`^(\d{5})_[a-z0-9_]+\.sql$`)

// Migration files are numbered 1, 2, 3 … without gaps or twins (two branches that both add
// a next migration collide here, not in production), and each has its Up section.
func TestMigrationFilesNumberedInOrder(t *testing.T) {
	got := versions(t)
	if len(got) == 0 {
		t.Fatal("no migrations embedded")
	}
	for i, v := range got {
		if v != int64(i+1) {
			t.Fatalf("migration versions %v: want 1..%d, one file each", got, len(got))
		}
	}
}

// From an empty database: every migration applies, the ledger's tables and goose's exist,
// and the database is at the latest version.
func TestMigrateEmptyDatabase(t *testing.T) {
	d := testenv.EmptyMySQL(t)
	ctx := context.Background()
	applied, err := schema.Migrate(ctx, d.DB)
	if err != nil {
		t.Fatal(err)
	}
	if want := versions(t); !slices.Equal(applied, want) {
		t.Fatalf("applied %v, want %v", applied, want)
	}
	want := []string{"activity", "draw_entry", "goose_db_version", "idempotency_key", "inventory", "seckill_order",
		"stock_adjustment"}
	if got := tableNames(t, d.DB); !slices.Equal(got, want) {
		t.Fatalf("tables %v, want %v", got, want)
	}
	current, latest, err := schema.Version(ctx, d.DB)
	if err != nil || current != latest || latest != int64(len(applied)) {
		t.Fatalf("version %d of %d (%v), want %d of %d", current, latest, err, len(applied), len(applied))
	}
	st, err := schema.Status(ctx, d.DB)
	if err != nil || len(st) != len(applied) {
		t.Fatalf("status %v (%v)", st, err)
	}
	for _, s := range st {
		if !s.Applied || s.AppliedAt.IsZero() {
			t.Fatalf("status %+v: want applied, with its time", s)
		}
	}
}

// sql/schema.sql is the schema the migrations add up to: table for table, SHOW CREATE
// TABLE of a migrated database and of one given schema.sql are the same.
func TestMigrationsAddUpToSchemaSQL(t *testing.T) {
	migrated := testenv.MySQL(t)
	direct := testenv.EmptyMySQL(t)
	execDDL(t, direct.DB, currentDDL)
	sameShape(t, "migrations", shape(t, migrated.DB), "sql/schema.sql", shape(t, direct.DB))
}

// A database the code of 4c34631 created, with data in it: the migrations apply, the rows
// stay, and the database ends as a fresh one does.
func TestMigrateFrom4c34631KeepsData(t *testing.T) {
	old := testenv.EmptyMySQL(t)
	execDDL(t, old.DB, ddl4c34631)
	rows := []string{
		"INSERT INTO activity (id, sku_id, name, total, start_time, end_time, merchant_id) " +
			"VALUES (7, 70, 'kept', 100, 1700000000, 1700003600, 5)",
		"INSERT INTO inventory (activity_id, available, locked, sold, epoch) VALUES (7, 90, 4, 6, 3)",
		"INSERT INTO seckill_order (order_no, request_id, activity_id, uid, quantity, status, expire_at) " +
			"VALUES ('o-1', 'r-1', 7, 42, 2, 'paid', 1700000900)",
	}
	for _, q := range rows {
		if _, err := old.DB.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	applied, err := schema.Migrate(context.Background(), old.DB)
	if err != nil {
		t.Fatal(err)
	}
	if want := versions(t); !slices.Equal(applied, want) {
		t.Fatalf("applied %v, want %v (the baseline is recorded there too)", applied, want)
	}
	var name string
	var available, locked, sold, epoch, quantity uint64
	err = old.DB.QueryRow("SELECT a.name, i.available, i.locked, i.sold, i.epoch, o.quantity FROM activity a "+
		"JOIN inventory i ON i.activity_id = a.id JOIN seckill_order o ON o.activity_id = a.id WHERE a.id = 7").
		Scan(&name, &available, &locked, &sold, &epoch, &quantity)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%s %d %d %d %d %d", name, available, locked, sold, epoch, quantity); got != "kept 90 4 6 3 2" {
		t.Fatalf("rows after migrating: %s, want kept 90 4 6 3 2", got)
	}
	fresh := testenv.MySQL(t)
	sameShape(t, "4c34631 migrated", shape(t, old.DB), "fresh", shape(t, fresh.DB))
}

// A second Migrate applies nothing and changes nothing, goose's record included.
func TestMigrateTwiceIsANoop(t *testing.T) {
	d := testenv.MySQL(t)
	before, records := shape(t, d.DB), versionRecords(t, d.DB)
	applied, err := schema.Migrate(context.Background(), d.DB)
	if err != nil || len(applied) != 0 {
		t.Fatalf("second migrate applied %v (%v), want none", applied, err)
	}
	sameShape(t, "once", before, "twice", shape(t, d.DB))
	if got := versionRecords(t, d.DB); !slices.Equal(got, records) {
		t.Fatalf("%s after the second migrate: %v, want %v", schema.VersionTable, got, records)
	}
}

// Several processes migrating one empty database at once (each its own pool, as separate
// processes would have) take turns: each migration runs once, a migration that cannot run
// twice (ADD COLUMN) included, and every call succeeds.
func TestConcurrentMigrateRunsEachMigrationOnce(t *testing.T) {
	d := testenv.EmptyMySQL(t)
	probe := int64(len(versions(t)) + 1)
	files := fstest.MapFS{fmt.Sprintf("%05d_probe.sql", probe): {
		Data: []byte("-- +goose Up\nALTER TABLE `activity` ADD COLUMN `probe` BIGINT NOT NULL DEFAULT 0;\n")}}
	entries, err := fs.ReadDir(schema.MigrationFiles(), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := fs.ReadFile(schema.MigrationFiles(), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = &fstest.MapFile{Data: b}
	}
	const procs = 4
	var wg sync.WaitGroup
	applied := make([][]int64, procs)
	errs := make([]error, procs)
	for i := range procs {
		wg.Go(func() {
			db, err := sql.Open("mysql", d.DSN)
			if err != nil {
				errs[i] = err
				return
			}
			defer db.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			applied[i], errs[i] = schema.MigrateFS(ctx, db, files)
		})
	}
	wg.Wait()
	var all []int64
	for i := range procs {
		if errs[i] != nil {
			t.Errorf("migrate %d: %v", i, errs[i])
		}
		all = append(all, applied[i]...)
	}
	slices.Sort(all)
	want := append(versions(t), probe)
	if !slices.Equal(all, want) {
		t.Fatalf("applied across the %d: %v, want each of %v once", procs, all, want)
	}
	if got := versionRecords(t, d.DB); !slices.Equal(got, append([]int64{0}, want...)) {
		t.Fatalf("%s: %v, want 0 and %v once each", schema.VersionTable, got, want)
	}
}

func versions(t *testing.T) []int64 {
	t.Helper()
	entries, err := fs.ReadDir(schema.MigrationFiles(), ".")
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			t.Fatalf("sql/migrations/%s: want NNNNN_what.sql", e.Name())
		}
		b, err := fs.ReadFile(schema.MigrationFiles(), e.Name())
		if err != nil || !strings.Contains(string(b), "\n-- +goose Up\n") {
			t.Fatalf("sql/migrations/%s: no -- +goose Up line (%v)", e.Name(), err)
		}
		v, _ := strconv.ParseInt(m[1], 10, 64)
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}
