// Package schema embeds the DDL in schema.sql and applies it.
package schema

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strings"
)

// DDL is the contents of schema.sql.
//
//go:embed schema.sql
var DDL string

// Statements splits DDL into single statements (comments dropped).
func Statements() []string {
	var lines []string
	for _, l := range strings.Split(DDL, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "--") {
			lines = append(lines, l)
		}
	}
	var out []string
	for _, st := range strings.Split(strings.Join(lines, "\n"), ";") {
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}

// Apply creates the tables (IF NOT EXISTS) in the database db is connected to.
func Apply(ctx context.Context, db *sql.DB) error {
	for _, st := range Statements() {
		if _, err := db.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("apply schema: %w", err)
		}
	}
	return nil
}
