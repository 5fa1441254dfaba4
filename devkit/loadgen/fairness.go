package loadgen

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Outcome is one buyer's place and result in a sale: Rank is the order (1, 2, ...) in which
// the buyers sent their earliest accepted requests (a 202 entry in a draw, a 200 or SOLD_OUT without
// one), Heavy whether it sent several reservations, Won whether it ended holding an order.
type Outcome struct {
	Rank  int
	Heavy bool
	Won   bool
}

// Ratio is a win-rate ratio; +Inf when only the numerator's group won, NaN when it is
// undefined (an empty group, or neither group won). JSON: a number, or null when not finite.
type Ratio float64

// MarshalJSON writes null for a ratio that is not finite (JSON has no Inf or NaN).
func (r Ratio) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(r), 0) || math.IsNaN(float64(r)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(r))
}

func (r Ratio) String() string {
	switch {
	case math.IsNaN(float64(r)):
		return "undefined"
	case math.IsInf(float64(r), 1):
		return "inf"
	}
	return fmt.Sprintf("%.3f", float64(r))
}

// Fairness compares win rates within one sale's entrants: the earliest EarlyFraction (10 %)
// of them by Rank against the rest, and the buyers who sent several reservations against
// those who sent one.
type Fairness struct {
	Entrants   int   `json:"entrants"`
	Winners    int   `json:"winners"`
	Early      int   `json:"early"` // the earliest 10 % by rank
	EarlyWins  int   `json:"early_wins"`
	Rest       int   `json:"rest"`
	RestWins   int   `json:"rest_wins"`
	Heavy      int   `json:"heavy"`
	HeavyWins  int   `json:"heavy_wins"`
	Light      int   `json:"light"`
	LightWins  int   `json:"light_wins"`
	EarlyRatio Ratio `json:"early_ratio"` // early win rate / rest's
	HeavyRatio Ratio `json:"heavy_ratio"` // heavy buyers' win rate / light buyers'
}

// EarlyFraction is the share of entrants, by arrival, called "the earliest".
const EarlyFraction = 0.10

// ComputeFairness sorts the outcomes by Rank (in place) and compares the groups' win rates.
func ComputeFairness(outs []Outcome) Fairness {
	sort.Slice(outs, func(i, j int) bool { return outs[i].Rank < outs[j].Rank })
	f := Fairness{Entrants: len(outs)}
	f.Early = int(math.Round(EarlyFraction * float64(len(outs))))
	if f.Early == 0 && len(outs) > 1 {
		f.Early = 1
	}
	f.Rest = len(outs) - f.Early
	for i, o := range outs {
		if o.Heavy {
			f.Heavy++
		} else {
			f.Light++
		}
		if !o.Won {
			continue
		}
		f.Winners++
		if i < f.Early {
			f.EarlyWins++
		} else {
			f.RestWins++
		}
		if o.Heavy {
			f.HeavyWins++
		} else {
			f.LightWins++
		}
	}
	f.EarlyRatio = rateRatio(f.EarlyWins, f.Early, f.RestWins, f.Rest)
	f.HeavyRatio = rateRatio(f.HeavyWins, f.Heavy, f.LightWins, f.Light)
	return f
}

// rateRatio is (a/n) / (b/m).
func rateRatio(a, n, b, m int) Ratio {
	if n == 0 || m == 0 || a == 0 && b == 0 {
		return Ratio(math.NaN())
	}
	if b == 0 {
		return Ratio(math.Inf(1))
	}
	return Ratio((float64(a) / float64(n)) / (float64(b) / float64(m)))
}

// fairSpread is the standard deviation of the win-rate ratio of a group of n among N
// entrants, k of whom win, when the winners are a uniformly random k of the N (a fair
// draw): by the delta method, sqrt((1-p)·N / (p·n·(N-n))) with p = k/N. It is what the
// bound [0.9, 1.1] must be compared with: a small sale's fair draw strays past it by chance.
func fairSpread(n, total, winners int) float64 {
	if n == 0 || n == total || winners == 0 {
		return math.Inf(1)
	}
	p := float64(winners) / float64(total)
	return math.Sqrt((1 - p) * float64(total) / (p * float64(n) * float64(total-n)))
}

// meanRatio is the mean of ratios (NaN when any is undefined, +Inf when any is infinite).
func meanRatio(rs []Ratio) Ratio {
	if len(rs) == 0 {
		return Ratio(math.NaN())
	}
	var s float64
	for _, r := range rs {
		s += float64(r)
	}
	return Ratio(s / float64(len(rs)))
}
