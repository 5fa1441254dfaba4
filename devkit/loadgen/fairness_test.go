package loadgen

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// A hand-made outcome set, handed over out of rank order: 20 entrants, the earliest 10 % are
// ranks 1-2; ranks 1-5 are heavy. Winners: ranks 1, 3, 4, 5, 6 and 20.
func TestComputeFairnessByHand(t *testing.T) {
	var outs []Outcome
	for rank := 1; rank <= 20; rank++ {
		won := rank == 1 || rank >= 3 && rank <= 6 || rank == 20
		outs = append(outs, Outcome{Rank: rank, Heavy: rank <= 5, Won: won})
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(outs), func(i, j int) { outs[i], outs[j] = outs[j], outs[i] })
	f := ComputeFairness(outs)
	// early 1/2 against the rest's 5/18; heavy 4/5 against light 2/15.
	if f.Entrants != 20 || f.Winners != 6 || f.Early != 2 || f.EarlyWins != 1 || f.Rest != 18 || f.RestWins != 5 ||
		f.Heavy != 5 || f.HeavyWins != 4 || f.Light != 15 || f.LightWins != 2 {
		t.Fatalf("counts %+v", f)
	}
	if e, h := float64(f.EarlyRatio), float64(f.HeavyRatio); math.Abs(e-1.8) > 1e-9 || math.Abs(h-6) > 1e-9 {
		t.Fatalf("early ratio %v (want 0.5 / (5/18) = 1.8), heavy ratio %v (want 0.8 / (2/15) = 6)", e, h)
	}

	// Without a draw the earliest take everything: the ratio is infinite, and printed so.
	outs = outs[:0]
	for rank := 1; rank <= 100; rank++ {
		outs = append(outs, Outcome{Rank: rank, Won: rank <= 10})
	}
	f = ComputeFairness(outs)
	if !math.IsInf(float64(f.EarlyRatio), 1) || f.EarlyRatio.String() != "inf" || !math.IsNaN(float64(f.HeavyRatio)) {
		t.Fatalf("no draw: early %v heavy %v", f.EarlyRatio, f.HeavyRatio)
	}
	if b, err := f.EarlyRatio.MarshalJSON(); err != nil || string(b) != "null" {
		t.Fatalf("an infinite ratio as JSON: %s %v", b, err)
	}
}

// The size (20,000 entrants, 2,000 winners, the earliest 2,000): a fair draw's ratio
// varies by about 0.07 per sale, so the mean of 5 stays within ±0.1 at 3 σ and the bound is
// checked; a 400-entrant sale's varies by 0.45 and the bound is not applied. A mean of 1.2
// over 5 big sales fails.
func TestFairnessChecks(t *testing.T) {
	if s := fairSpread(2000, 20000, 2000); math.Abs(s-math.Sqrt(0.005)) > 1e-9 {
		t.Fatalf("spread %v, want sqrt(0.005)", s)
	}
	sale := func(entrants, winners int, early Ratio) *DrawSale {
		n := entrants / 10
		return &DrawSale{Fairness: Fairness{Entrants: entrants, Winners: winners, Early: n, Heavy: n,
			EarlyRatio: early, HeavyRatio: early}}
	}
	for _, tc := range []struct {
		name     string
		sales    []*DrawSale
		skip, ok bool
	}{
		{"big and fair", []*DrawSale{sale(20000, 2000, 1.05), sale(20000, 2000, 0.97), sale(20000, 2000, 1),
			sale(20000, 2000, 1.02), sale(20000, 2000, 0.99)}, false, true},
		{"big and unfair", []*DrawSale{sale(20000, 2000, 1.2), sale(20000, 2000, 1.2), sale(20000, 2000, 1.2),
			sale(20000, 2000, 1.2), sale(20000, 2000, 1.2)}, false, false},
		{"small", []*DrawSale{sale(400, 40, 2.5)}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &DrawReport{Sales: tc.sales}
			r.summarize()
			if len(r.Checks) != 2 {
				t.Fatalf("checks %+v", r.Checks)
			}
			for _, c := range r.Checks {
				if c.Skip != tc.skip || !c.Skip && c.OK != tc.ok || !strings.Contains(c.Detail, "σ") {
					t.Errorf("%+v, want skip %v ok %v", c, tc.skip, tc.ok)
				}
			}
		})
	}
}
