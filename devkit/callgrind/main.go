// Command callgrind counts the instructions redis-server runs per reservation: it starts a
// private redis-server under valgrind's callgrind (its own port and directory, counting
// nothing until told), and for each batch size warms a fresh activity, makes -warm
// reservations uncounted, then -n counted ones through the real Go path
// (stock.Store.ReserveBatch, reserve.lua), one client, distinct buyers, fixed request ids.
// It prints the instructions per reservation (the dump's total ÷ n), the functions of most
// instructions of their own, and the commands per reservation (INFO commandstats). The count
// does not depend on the machine or its load; it moves by about 1,000 between runs (the Lua
// collector's cycles, the order numbers' random digits). make callgrind runs it;
// docs/DESIGN.md "### reserve" keeps its numbers.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

type config struct {
	n, warm, top      int
	sizes             []int
	entries, keep     bool
	valgrind, control string
	redisServer       string
}

func main() {
	var c config
	sizes := flag.String("sizes", "32,1", "batch sizes, comma-separated, each measured on its own activity")
	flag.IntVar(&c.n, "n", 4096, "counted reservations per batch size")
	flag.IntVar(&c.warm, "warm", 512, "reservations before counting (same activity, not counted)")
	flag.IntVar(&c.top, "top", 15, "functions to list per batch size")
	flag.BoolVar(&c.entries, "entries", false, "the store built WithEntries (the script returns the batch's entry)")
	flag.BoolVar(&c.keep, "keep", false, "keep the server's directory (callgrind's dumps, for callgrind_annotate)")
	flag.StringVar(&c.valgrind, "valgrind", "valgrind", "the valgrind command")
	flag.StringVar(&c.control, "callgrind-control", "callgrind_control", "the callgrind_control command")
	flag.StringVar(&c.redisServer, "redis-server", "redis-server", "the redis-server command")
	flag.Parse()
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fail(fmt.Errorf("-sizes: %q is not a batch size", f))
		}
		c.sizes = append(c.sizes, n)
	}
	if err := run(context.Background(), c, os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "callgrind:", err)
	os.Exit(1)
}

// A Result is one batch size's count.
type Result struct {
	Size, N  int
	Total    int64            // instructions of the n reservations
	Top      []Fn             // functions of most instructions of their own
	Commands map[string]int64 // commands run (INFO commandstats calls), by name
	File     string           // callgrind's dump
}

// PerReservation is the instructions per reservation.
func (r Result) PerReservation() float64 { return float64(r.Total) / float64(r.N) }

func run(ctx context.Context, c config, w io.Writer) error {
	for _, tool := range []string{c.valgrind, c.control, c.redisServer} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found (apt-get install valgrind redis-server): %w", tool, err)
		}
	}
	s, err := startServer(ctx, c.valgrind, c.redisServer)
	if err != nil {
		return err
	}
	defer s.stop(!c.keep)
	fmt.Fprintf(w, "redis-server under callgrind on %s (%s); %d reservations counted after %d, entries %v\n",
		s.addr, s.dir, c.n, c.warm, c.entries)
	d, err := newDriver(ctx, s.addr, c.entries)
	if err != nil {
		return err
	}
	defer d.close()
	for i, size := range c.sizes {
		r, err := measure(ctx, c, s, d, int64(i+1), size)
		if err != nil {
			return fmt.Errorf("batches of %d: %w", size, err)
		}
		report(w, r)
	}
	return nil
}

// measure counts the instructions of c.n reservations in batches of size on activity aid.
func measure(ctx context.Context, c config, s *server, d *driver, aid int64, size int) (Result, error) {
	if err := d.warm(ctx, aid, c.warm+c.n); err != nil {
		return Result{}, err
	}
	if err := d.reserve(ctx, aid, 0, c.warm, size); err != nil {
		return Result{}, err
	}
	before, err := d.commands(ctx)
	if err != nil {
		return Result{}, err
	}
	if err := s.control(c.control, "-i", "on"); err != nil {
		return Result{}, err
	}
	if err := d.reserve(ctx, aid, c.warm, c.n, size); err != nil {
		return Result{}, err
	}
	if err := s.control(c.control, "-i", "off"); err != nil {
		return Result{}, err
	}
	file, err := s.dump(c.control)
	if err != nil {
		return Result{}, err
	}
	after, err := d.commands(ctx)
	if err != nil {
		return Result{}, err
	}
	f, err := os.Open(file)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	p, err := ParseProfile(f)
	if err != nil {
		return Result{}, err
	}
	if p.Total == 0 {
		return Result{}, fmt.Errorf("%s counted nothing", file)
	}
	r := Result{Size: size, N: c.n, Total: p.Total, Top: p.Top(c.top), Commands: map[string]int64{}, File: file}
	for name, n := range after {
		if n -= before[name]; n > 0 && name != "info" {
			r.Commands[name] = n
		}
	}
	return r, nil
}
