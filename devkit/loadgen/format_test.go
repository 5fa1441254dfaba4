package loadgen

import "testing"

func TestFormatCounts(t *testing.T) {
	if got := FormatCounts(map[string]int{"b": 1, "a": 1, "c": 5, "zero": 0}); got != "c 5, a 1, b 1" {
		t.Errorf("FormatCounts = %q", got)
	}
	if got := FormatCounts(nil); got != "none" {
		t.Errorf("FormatCounts(nil) = %q", got)
	}
}
