// Package mysqlx opens the services' MySQL connections: go-zero's sqlx over a DSN whose
// statements with arguments go as one query each (the driver's interpolateParams).
package mysqlx

import (
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/zeromicro/go-zero/core/stores/sqlx"
)

// interpolateParam is the DSN parameter that chooses how arguments are sent.
const interpolateParam = "interpolateParams"

// Open is go-zero's sqlx.NewMysql over DSN(dsn).
func Open(dsn string, opts ...sqlx.SqlOption) sqlx.SqlConn { return sqlx.NewMysql(DSN(dsn), opts...) }

// DSN is dsn with the driver's interpolateParams on, unless dsn names the parameter itself
// (or does not parse: the driver then refuses it as it is). Without it, database/sql sends
// each statement with arguments as three commands, a prepare, an execute and a close, and
// MySQL parses and plans it twice; the writer's multi-row statements, a new text for every
// batch size, are never reused. With it, the driver writes the arguments into the statement
// (escaped as the server's NO_BACKSLASH_ESCAPES says) and sends one query.
func DSN(dsn string) string {
	if strings.Contains(dsn, interpolateParam+"=") {
		return dsn
	}
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return dsn
	}
	c.InterpolateParams = true
	return c.FormatDSN()
}
