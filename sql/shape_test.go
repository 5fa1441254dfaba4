package schema_test

import (
	"database/sql"
	"regexp"
	"slices"
	"strings"
	"testing"

	schema "github.com/seckill/seckill/sql"
)

// execDDL runs the statements of a schema file (comment lines dropped, split at ';').
func execDDL(t *testing.T, db *sql.DB, ddl string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(ddl, "\n") {
		if s := strings.TrimSpace(l); s != "" && !strings.HasPrefix(s, "--") {
			lines = append(lines, l)
		}
	}
	for _, st := range strings.Split(strings.Join(lines, "\n"), ";") {
		if st = strings.TrimSpace(st); st != "" {
			if _, err := db.Exec(st); err != nil {
				t.Fatalf("%v\n%s", err, st)
			}
		}
	}
}

func tableNames(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// shape is SHOW CREATE TABLE of every table but goose's, by name, without the AUTO_INCREMENT
// counter (rows move it, the schema does not).
func shape(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range tableNames(t, db) {
		if name == schema.VersionTable {
			continue
		}
		var n, create string
		if err := db.QueryRow("SHOW CREATE TABLE `"+name+"`").Scan(&n, &create); err != nil {
			t.Fatal(err)
		}
		out[name] = autoIncrement.ReplaceAllString(create, "")
	}
	return out
}

func sameShape(t *testing.T, aName string, a map[string]string, bName string, b map[string]string) {
	t.Helper()
	for name, ca := range a {
		if cb, ok := b[name]; !ok {
			t.Errorf("table %s: in %s, not in %s", name, aName, bName)
		} else if ca != cb {
			t.Errorf("table %s differs:\n%s:\n%s\n%s:\n%s", name, aName, ca, bName, cb)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			t.Errorf("table %s: in %s, not in %s", name, bName, aName)
		}
	}
}

// versionRecords are the versions goose recorded as applied, in the order it recorded them.
func versionRecords(t *testing.T, db *sql.DB) []int64 {
	t.Helper()
	rows, err := db.Query("SELECT version_id FROM " + schema.VersionTable + " WHERE is_applied ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
