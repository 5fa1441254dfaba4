package loadgen

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/internal/domain"
)

// audit is a done draw of stock over entrants uid 1..n of quantity 1 or 2 under seed, with
// the winners the serve rule gives.
func audit(seed []byte, n int, stockN int64) apiclient.DrawAudit {
	sum := sha256.Sum256(seed)
	a := apiclient.DrawAudit{Stock: stockN, Commitment: hex.EncodeToString(sum[:]), Seed: hex.EncodeToString(seed),
		Status: "done"}
	entries := make([]domain.DrawEntry, n)
	for i := range n {
		q := int64(1 + i%2)
		entries[i] = domain.DrawEntry{UID: int64(i + 1), Qty: q}
		a.Entrants = append(a.Entrants, struct {
			UID      int64 `json:"uid"`
			Quantity int64 `json:"quantity"`
		}{int64(i + 1), q})
	}
	left := stockN
	for _, e := range domain.DrawOrder(entries, seed) {
		if e.Qty <= left {
			left -= e.Qty
			a.Winners = append(a.Winners, e.UID)
		}
	}
	return a
}

func TestVerifyDrawAudit(t *testing.T) {
	seed := []byte(strings.Repeat("s", 32))
	good := audit(seed, 200, 50)
	if err := VerifyDrawAudit(good, good.Winners); err != nil {
		t.Fatalf("a true audit: %v", err)
	}
	zeros := hex.EncodeToString(make([]byte, 32))
	for name, bad := range map[string]func(a *apiclient.DrawAudit) []int64{
		"another seed":       func(a *apiclient.DrawAudit) []int64 { a.Seed = zeros; return nil },
		"a winner swapped":   func(a *apiclient.DrawAudit) []int64 { a.Winners[0] = 9999; return nil },
		"more stock":         func(a *apiclient.DrawAudit) []int64 { a.Stock++; return nil },
		"not done":           func(a *apiclient.DrawAudit) []int64 { a.Status = "drawing"; return nil },
		"told another":       func(a *apiclient.DrawAudit) []int64 { return append([]int64{9999}, a.Winners[1:]...) },
		"shuffled, not HMAC": func(a *apiclient.DrawAudit) []int64 { a.Winners = shuffledWinners(a); return nil },
	} {
		a := audit(seed, 200, 50)
		won := bad(&a)
		if err := VerifyDrawAudit(a, won); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
}

// shuffledWinners are the winners of the uid order (not the HMAC order) over a's entrants.
func shuffledWinners(a *apiclient.DrawAudit) []int64 {
	var out []int64
	left := a.Stock
	for _, e := range a.Entrants {
		if e.Quantity <= left {
			left -= e.Quantity
			out = append(out, e.UID)
		}
	}
	return out
}
