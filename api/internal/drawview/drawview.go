// Package drawview is what every gateway view of an activity with an opening draw shows of
// it (docs/API.md, "The opening draw"): seconds, draw_at, the seed's commitment and, once the
// draw is done, the seed.
package drawview

import (
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// Public is activity a's draw as every view shows it (nil: it has no draw).
func Public(a *inventoryclient.Activity) *types.DrawPublic {
	if a.GetDrawSeconds() == 0 {
		return nil
	}
	return &types.DrawPublic{Seconds: a.GetDrawSeconds(), DrawAt: a.GetDrawAt(), Commitment: a.GetDrawCommitment(),
		Seed: a.GetDrawSeed()}
}
