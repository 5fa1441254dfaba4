package mysqlx_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/mysqlx"
)

func TestDSNInterpolatesUnlessTold(t *testing.T) {
	got := mysqlx.DSN("u:p@tcp(127.0.0.1:3306)/seckill?parseTime=true&loc=UTC")
	for _, want := range []string{"interpolateParams=true", "parseTime=true", "/seckill", "u:p@tcp(127.0.0.1:3306)"} {
		if !strings.Contains(got, want) {
			t.Errorf("DSN = %q, want %s in it", got, want)
		}
	}
	for _, dsn := range []string{"u@tcp(h:3306)/db?interpolateParams=false", "not a dsn ::"} {
		if got := mysqlx.DSN(dsn); got != dsn {
			t.Errorf("DSN(%q) = %q, want it as it is", dsn, got)
		}
	}
}

// prepares is how many statements conn's session prepared after running a statement with
// arguments on it.
func prepares(t *testing.T, db *sql.DB) int {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	count := func() (n int) {
		var name string
		if err := conn.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Com_stmt_prepare'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	var sum int
	if err := conn.QueryRowContext(ctx, "SELECT ? + ?", 2, 3).Scan(&sum); err != nil || sum != 5 {
		t.Fatalf("SELECT 2 + 3: %d, %v", sum, err)
	}
	return count() - before
}

// TestStatementsWithArgumentsAreOneQuery: through Open, a statement with arguments is sent as
// one query, not prepared (which the driver's default does, the control).
func TestStatementsWithArgumentsAreOneQuery(t *testing.T) {
	d := testenv.EmptyMySQL(t)
	raw, err := mysqlx.Open(d.DSN).RawDB()
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if n := prepares(t, raw); n != 0 {
		t.Errorf("through Open: %d statements prepared, want 0", n)
	}
	if n := prepares(t, d.DB); n == 0 {
		t.Error("the control (the DSN as given) prepared nothing: the count does not show it")
	}
}
