package benchrun

import (
	"strings"
	"testing"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/loadgen"
)

// TestBaselineRequestIsASalesBuyers: a baseline's request carries the token the load
// generator mints for the same buyer, and costs its client no more allocations than a sale's
// buyer costs the load generator (its token minted without jwt's reflection: authtoken.Buyer
// alone makes 39).
func TestBaselineRequestIsASalesBuyers(t *testing.T) {
	const secret, uidBase = "test-buyer-secret-0123456789abcdef", 1_000_000_000_000
	req := buyerRequest(apiclient.ReservePath, secret, uidBase, 7, "bench-bare")
	r, err := req(41)
	if err != nil {
		t.Fatal(err)
	}
	mint, err := loadgen.BuyerTokens(secret, loadgen.BuyerTokenTTL, uidBase+1)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := mint(uidBase + 42); r.Token != want {
		t.Errorf("token %s, the load generator mints %s", r.Token, want)
	}
	if !strings.Contains(string(r.Body), `"bench-bare-41"`) || r.Path != apiclient.ReservePath {
		t.Errorf("request %s %s", r.Path, r.Body)
	}
	i := 0
	if n := testing.AllocsPerRun(100, func() { _, _ = req(i); i++ }); n > 8 {
		t.Errorf("a baseline request takes %.0f allocations to build, want at most 8", n)
	}
}
