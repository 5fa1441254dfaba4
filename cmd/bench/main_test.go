package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/benchrun"
	"github.com/seckill/seckill/devkit/testenv"
)

// TestMain lets a test run this binary's main in a child process (SECKILL_BENCH_MAIN=1):
// what lands on the process's own stdout is what a user piping -json sees.
func TestMain(m *testing.M) {
	if os.Getenv("SECKILL_BENCH_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestJSONAloneOnStdout runs a tiny bench with -json: stdout must be one JSON document and
// nothing else (go-zero's log lines, the services' among them, go to the log directory),
// with a row for each of the words the table names.
func TestJSONAloneOnStdout(t *testing.T) {
	_, keys := testenv.Redis(t) // skips (or fails under CI) without Redis
	db := testenv.MySQL(t)
	cmd := exec.Command(os.Args[0], "-dir", "../..", "-no-go", "-no-degrade", "-no-install", "-q", "-json",
		"-redis", testenv.RedisAddr(), "-mysql", db.DSN, "-key-prefix", keys.Prefix, "-logs", t.TempDir(),
		"-requests", "40", "-c", "4", "-rounds", "1", "-storm-stock", "5", "-storm-buyers", "60",
		"-sale-buyers", "60", "-sale-stock", "5", "-sale-conc", "4",
		"-redis-n", "64", "-redis-batch", "4", "-timeout", "2m",
		"-capacity-budget", "6s", "-capacity-step", "250ms", "-capacity-p99", "500ms",
		"-no-prod") // deploy/'s multi-node system is too big here: devkit/benchrun prod_test.go tests its rows
	cmd.Env = append(os.Environ(), "SECKILL_BENCH_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	dec := json.NewDecoder(bytes.NewReader(stdout.Bytes()))
	var res benchrun.Result
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("stdout is not a JSON document: %v\n%s", err, head(stdout.String()))
	}
	if err := dec.Decode(&json.RawMessage{}); !errors.Is(err, io.EOF) {
		t.Fatalf("more than one JSON document on stdout (%v):\n%s", err, head(stdout.String()))
	}
	if !strings.HasPrefix(stdout.String(), "{") {
		t.Fatalf("stdout does not start with the document:\n%s", head(stdout.String()))
	}
	for _, word := range []string{"reservations", "reservations vs bare", "storm", "redis us per reservation",
		"capacity at p99 <= 500ms", "sale vs bare"} {
		found := false
		for _, row := range res.Rows {
			if strings.Contains(row.Label, word) && row.Error == "" && row.Subject.Rate > 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("no measured row labelled with %q", word)
		}
	}
}

func head(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}
