package faults

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Failed reports whether any row failed.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

// Print writes the table, then one line per reason and the non-200 answers of each row.
func Print(w io.Writer, results []Result) {
	head := []string{"fault", "acknowledged", "oversold", "lost", "duplicated", "told no", "BUSY", "time to consistent",
		"result"}
	rows := [][]string{head}
	for _, r := range results {
		ttc := "-"
		if r.Consistent {
			ttc = r.TimeToConsistent.Round(100 * time.Millisecond).String()
		} else if r.Status == Fail {
			ttc = "not consistent"
		}
		cell := itoa
		rows = append(rows, []string{r.Row.Name, cell(int64(r.Acknowledged)), cell(r.Oversold), cell(int64(r.Lost)),
			cell(int64(r.Duplicated)), cell(int64(r.ToldNo)), r.Busy.Round(100 * time.Millisecond).String(), ttc, r.Status})
	}
	width := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	line := func(row []string) {
		for i, c := range row {
			if i > 0 {
				fmt.Fprint(w, " | ")
			}
			fmt.Fprintf(w, "%-*s", width[i], c)
		}
		fmt.Fprintln(w)
	}
	line(rows[0])
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
	fmt.Fprintln(w)
	for _, r := range results {
		var codes []string
		for c, n := range r.Codes {
			codes = append(codes, fmt.Sprintf("%s %d", c, n))
		}
		sort.Strings(codes)
		if len(r.Reasons) == 0 && len(codes) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n", r.Row.Name)
		if len(codes) > 0 {
			fmt.Fprintf(w, "  answers besides 200: %s\n", strings.Join(codes, ", "))
		}
		for _, reason := range r.Reasons {
			fmt.Fprintf(w, "  %s\n", reason)
		}
	}
}
