package schema

import (
	"context"
	"database/sql"
	"strings"
)

// SessionUsers are the distinct users with a session on database name (the deploy test:
// each service connects as its own user).
func SessionUsers(ctx context.Context, db *sql.DB, name string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT user FROM information_schema.PROCESSLIST WHERE db = ?", name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }() // read to the end: Err says how it went
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// RevokeInsert revokes user@'%”s INSERT on table of the connection's database (the deploy
// test's -break grant: a wrong grant must fail it).
func RevokeInsert(ctx context.Context, db *sql.DB, table, user string) error {
	_, err := db.ExecContext(ctx, "REVOKE INSERT ON "+quoteIdent(table)+" FROM '"+
		strings.ReplaceAll(user, "'", "''")+"'@'%'")
	return err
}
