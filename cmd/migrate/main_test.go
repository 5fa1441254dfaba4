package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/testenv"
)

func migrate(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, func(k string) string { return env[k] }, &out, &errOut)
	return out.String() + errOut.String(), err
}

// status, up, status again, up again, version: on an empty database, with the DSN from the
// environment the first time and from -dsn after.
func TestUpStatusVersion(t *testing.T) {
	d := testenv.EmptyMySQL(t)
	env := map[string]string{EnvDSN: d.DSN}
	out, err := migrate(t, env, "status")
	if err != nil || !regexp.MustCompile(`(?m)^\s+1  00001_baseline\.sql\s+pending$`).MatchString(out) {
		t.Fatalf("status before: %v\n%s", err, out)
	}
	out, err = migrate(t, nil, "-dsn", d.DSN, "up")
	if err != nil || !strings.Contains(out, "applied 1\n") {
		t.Fatalf("up: %v\n%s", err, out)
	}
	latest := strings.Count(out, "applied ") - 1 // "applied N" lines, and the summary's "applied now"
	if !strings.Contains(out, fmt.Sprintf("at version %d (%d applied now)", latest, latest)) {
		t.Fatalf("up: %s", out)
	}
	out, err = migrate(t, env, "status")
	if err != nil || strings.Contains(out, "pending") || !strings.Contains(out, "applied 20") {
		t.Fatalf("status after: %v\n%s", err, out)
	}
	out, err = migrate(t, env, "up")
	if err != nil || !strings.Contains(out, fmt.Sprintf("at version %d (0 applied now)", latest)) {
		t.Fatalf("second up: %v\n%s", err, out)
	}
	out, err = migrate(t, env, "version")
	if err != nil || out != fmt.Sprintf("version %d, latest %d\n", latest, latest) {
		t.Fatalf("version: %v\n%s", err, out)
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{}, {"down"}, {"up", "extra"}, {"-nope", "up"}} {
		if out, err := migrate(t, nil, args...); !errors.Is(err, errUsage) || !strings.Contains(out, "usage:") {
			t.Errorf("%q: %v, %q; want the usage", args, err, out)
		}
	}
	if _, err := migrate(t, nil, "up"); err == nil || !strings.Contains(err.Error(), EnvDSN) {
		t.Errorf("no DSN: %v, want it named", err)
	}
	if _, err := migrate(t, nil, "-dsn", "root@tcp(127.0.0.1:3306)/", "up"); err == nil ||
		!strings.Contains(err.Error(), "no database") {
		t.Errorf("DSN without a database: %v", err)
	}
}
