package loadgen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/internal/domain"
)

// VerifyDrawAudit recomputes a done draw from its audit, as anyone given it can (docs/API.md
// "The opening draw"): the seed matches the commitment; the entrants sorted by
// HMAC-SHA256(seed, decimal uid), each served its quantity against the stock, one that does
// not fit skipped, give the audit's winners. won, when not nil, are the buyers who learnt
// they won: they must be the same. It returns what does not hold (nil: verified).
func VerifyDrawAudit(a apiclient.DrawAudit, won []int64) error {
	seed, err := hex.DecodeString(a.Seed)
	switch {
	case a.Status != "done":
		return fmt.Errorf("the draw is %q, not done", a.Status)
	case err != nil || len(seed) != 32:
		return fmt.Errorf("seed %q is not 32 bytes of hex", a.Seed)
	}
	if sum := sha256.Sum256(seed); hex.EncodeToString(sum[:]) != a.Commitment {
		return fmt.Errorf("sha256(seed) %x is not the commitment %s", sum, a.Commitment)
	}
	entries := make([]domain.DrawEntry, len(a.Entrants))
	for i, e := range a.Entrants {
		entries[i] = domain.DrawEntry{UID: e.UID, Qty: e.Quantity}
	}
	var winners []int64
	left := a.Stock
	for _, e := range domain.DrawOrder(entries, seed) {
		if e.Qty <= left {
			left -= e.Qty
			winners = append(winners, e.UID)
		}
	}
	slices.Sort(winners)
	audit := slices.Sorted(slices.Values(a.Winners))
	if !slices.Equal(winners, audit) {
		return fmt.Errorf("recomputed %d winners, the audit names %d (first few: %v and %v)",
			len(winners), len(audit), head(winners), head(audit))
	}
	if won != nil {
		if told := slices.Sorted(slices.Values(won)); !slices.Equal(told, audit) {
			return fmt.Errorf("%d buyers were told they won, the audit names %d", len(told), len(audit))
		}
	}
	return nil
}

func head(v []int64) []int64 { return v[:min(len(v), 5)] }

// verifyAudit reads the sale's draw audit and recomputes its winners ("draw verified").
func (g *run) verifyAudit(ctx context.Context, sale *DrawSale, buyers []*drawBuyer) {
	a, err := g.c.DrawAudit(ctx, g.merchant, g.r.ActivityID)
	if err == nil {
		var won []int64
		for _, b := range buyers {
			if b.outcome == "won" {
				won = append(won, b.uid)
			}
		}
		err = VerifyDrawAudit(a, won)
	}
	detail := fmt.Sprintf("the audit's %d entrants, seed and stock %d give its %d winners, the buyers told won",
		len(a.Entrants), a.Stock, len(a.Winners))
	if err != nil {
		detail = err.Error()
	}
	sale.check("draw verified", err == nil, "%s", detail)
}
