package opstest

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

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
