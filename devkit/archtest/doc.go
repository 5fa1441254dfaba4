// Package archtest holds the repository's layout rules as tests: which folders may import
// which, and where SQL may be written. `go test ./devkit/archtest/` checks them; the rules
// are the table in archtest_test.go, and docs/DESIGN.md ("Layout") explains them.
package archtest
