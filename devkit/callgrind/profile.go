package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A Profile is what one callgrind output file counted (its first event, Ir: instructions).
type Profile struct {
	// Total is the file's totals: (or summary:) line, the instructions of the whole dump.
	Total int64
	// Self is each function's own instructions (its callees' left out), by "object:function"
	// (the object's base name; valgrind names a function without a symbol by its address).
	Self map[string]int64
}

// Fn is one function's own instructions.
type Fn struct {
	Name string
	Ir   int64
}

// Top returns the k functions of most instructions of their own, most first (ties by name).
func (p Profile) Top(k int) []Fn {
	fns := make([]Fn, 0, len(p.Self))
	for name, ir := range p.Self {
		fns = append(fns, Fn{name, ir})
	}
	slices.SortFunc(fns, func(a, b Fn) int {
		if c := cmp.Compare(b.Ir, a.Ir); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name)
	})
	return fns[:min(k, len(fns))]
}

// parser reads callgrind's format (valgrind's docs/html/cl-format.html): header lines, then
// position specifications (ob=, fl=, fi=, fe=, fn=, cob=, cfi=, cfl=, cfn=), their names
// compressed to "(id) name" the first time and "(id)" after; cost lines are the positions
// (the header's "positions:", line by default) then the events; a calls= line's next cost
// line is the call's inclusive cost, the callee's, not the caller's own.
type parser struct {
	names     map[string]map[string]string // "ob", "fn" (and the rest) -> id -> name
	ob, fn    string
	positions int
	inCall    bool
	p         Profile
	hasTotal  bool
}

// ParseProfile reads one callgrind output file.
func ParseProfile(r io.Reader) (Profile, error) {
	ps := &parser{names: map[string]map[string]string{}, positions: 1, p: Profile{Self: map[string]int64{}}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		if err := ps.line(sc.Text()); err != nil {
			return Profile{}, fmt.Errorf("callgrind output line %d: %w", n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Profile{}, err
	}
	if !ps.hasTotal {
		return Profile{}, errors.New("callgrind output without a totals or summary line")
	}
	return ps.p, nil
}

func (ps *parser) line(l string) error {
	switch {
	case l == "" || l[0] == '#':
		return nil
	case l[0] >= '0' && l[0] <= '9', l[0] == '+', l[0] == '-', l[0] == '*':
		return ps.cost(l)
	}
	key, val, ok := strings.Cut(l, "=")
	if !ok || strings.ContainsAny(key, " :") {
		return ps.header(l)
	}
	switch key {
	case "ob", "fn", "cob", "cfn", "cfi", "cfl", "fl", "fi", "fe":
		name := ps.name(key, val)
		switch key {
		case "ob":
			ps.ob = filepath.Base(name)
		case "fn":
			ps.fn = name
		}
	case "calls":
		ps.inCall = true
	case "jump", "jcnd":
		// jumps (--collect-jumps): no cost of their own
	default:
		return fmt.Errorf("unknown specification %q", key)
	}
	return nil
}

// name resolves a compressed name: "(id) name" defines id, "(id)" uses it. The
// cfi/cfl and fi/fe/fl specifications share one table (files), cob and ob (objects), cfn and
// fn (functions).
func (ps *parser) name(key, val string) string {
	table := map[string]string{"ob": "ob", "cob": "ob", "fn": "fn", "cfn": "fn"}[key]
	if table == "" {
		table = "fl"
	}
	if !strings.HasPrefix(val, "(") {
		return val
	}
	id, rest, ok := strings.Cut(val[1:], ")")
	if !ok {
		return val
	}
	if ps.names[table] == nil {
		ps.names[table] = map[string]string{}
	}
	if rest = strings.TrimPrefix(rest, " "); rest != "" {
		ps.names[table][id] = rest
		return rest
	}
	return ps.names[table][id]
}

// header reads the header lines the totals and the cost lines depend on.
func (ps *parser) header(l string) error {
	key, val, ok := strings.Cut(l, ":")
	if !ok {
		return fmt.Errorf("not a header line: %q", l)
	}
	val = strings.TrimSpace(val)
	switch key {
	case "positions":
		ps.positions = len(strings.Fields(val))
	case "events":
		if f := strings.Fields(val); len(f) == 0 || f[0] != "Ir" {
			return fmt.Errorf("events %q: the first must be Ir", val)
		}
	case "totals", "summary":
		f := strings.Fields(val)
		if len(f) == 0 {
			return fmt.Errorf("%s without a count", key)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if key == "totals" || !ps.hasTotal {
			ps.p.Total, ps.hasTotal = n, true
		}
	}
	return nil
}

// cost reads a cost line: the positions, then Ir (absent: 0).
func (ps *parser) cost(l string) error {
	f := strings.Fields(l)
	call := ps.inCall
	ps.inCall = false
	if call || len(f) <= ps.positions {
		return nil // a call's inclusive cost (the callee's own is counted where it ran), or no Ir
	}
	ir, err := strconv.ParseInt(f[ps.positions], 10, 64)
	if err != nil {
		return fmt.Errorf("cost %q: %w", l, err)
	}
	ps.p.Self[ps.ob+":"+ps.fn] += ir
	return nil
}
