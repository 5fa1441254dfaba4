package main

import (
	"compress/gzip"
	"os"
	"strings"
	"testing"
)

// A small file in callgrind's format: compressed names defined and reused (also across ob and
// cob, fn and cfn), relative positions, a call whose inclusive cost is the callee's, and the
// totals at the end.
const small = `# callgrind format
version: 1
positions: line
events: Ir
summary: 0

ob=(1) /usr/bin/redis-check-rdb
fl=(1) ???
fn=(1) lpFind
10 100
+2 50
cob=(2) /usr/lib/libc.so.6
cfi=(1)
cfn=(2) memcpy
calls=3 0
* 999
fn=(3) 0x00000000001613d0
0 7

ob=(2)
fl=(1)
fn=(2)
0 30
0

totals: 187
`

func TestParseProfileSmall(t *testing.T) {
	p, err := ParseProfile(strings.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"redis-check-rdb:lpFind": 150, "redis-check-rdb:0x00000000001613d0": 7,
		"libc.so.6:memcpy": 30}
	if p.Total != 187 || len(p.Self) != len(want) {
		t.Fatalf("total %d, self %v; want 187, %v", p.Total, p.Self, want)
	}
	for name, ir := range want {
		if p.Self[name] != ir {
			t.Errorf("%s: %d instructions of its own, want %d (all: %v)", name, p.Self[name], ir, p.Self)
		}
	}
	top := p.Top(2)
	if len(top) != 2 || top[0].Name != "redis-check-rdb:lpFind" || top[1].Name != "libc.so.6:memcpy" {
		t.Errorf("top 2: %v", top)
	}
}

// TestParseProfileRecorded reads a dump of this tool (make callgrind, batches of 32 on main,
// Dec 5 2026): every instruction is some function's own, so the functions' own add up to the
// totals (a call's inclusive cost counted as the caller's own, or a name misread, would not).
func TestParseProfileRecorded(t *testing.T) {
	f, err := os.Open("testdata/reserve32.callgrind.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProfile(z)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, ir := range p.Self {
		sum += ir
	}
	if p.Total != 211232674 || sum != p.Total {
		t.Fatalf("totals %d, the functions' own %d; want 211232674 both", p.Total, sum)
	}
	if top := p.Top(1); top[0].Name != "redis-check-rdb:0x00000000001613d0" || top[0].Ir != 40833496 {
		t.Errorf("top function %v", top)
	}
	for _, name := range []string{"libjemalloc.so.2:malloc", "redis-check-rdb:siphash"} {
		if p.Self[name] == 0 {
			t.Errorf("no %s", name)
		}
	}
}

func TestParseProfileRefusesNoTotals(t *testing.T) {
	if _, err := ParseProfile(strings.NewReader("events: Ir\nfn=(1) f\n0 3\n")); err == nil {
		t.Fatal("a file without totals parsed")
	}
	if _, err := ParseProfile(strings.NewReader("events: Dr Ir\ntotals: 3\n")); err == nil {
		t.Fatal("a file whose first event is not Ir parsed")
	}
}
