package domain_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/seckill/seckill/internal/domain"
)

// The draw's order is the contract's, computed here from the standard library alone: the
// entrants sorted by HMAC-SHA256(key = the seed's bytes, message = the uid in decimal ASCII),
// ascending as byte strings, whatever order the entries come in (the commitment to the seed:
// rpc/internal/draw's TestCommitmentIsTheSeedsSHA256).
func TestDrawOrderIsTheHMACOrder(t *testing.T) {
	for s := range 5 {
		seed := make([]byte, 32)
		r := rand.New(rand.NewPCG(uint64(s), 1))
		for i := range seed {
			seed[i] = byte(r.Uint32())
		}
		var entries []domain.DrawEntry
		for uid := int64(1); uid <= 2000; uid++ {
			entries = append(entries, domain.DrawEntry{UID: uid * 7919 % 100_003, Qty: 1 + uid%2})
		}
		r.Shuffle(len(entries), func(i, j int) { entries[i], entries[j] = entries[j], entries[i] })
		key := func(uid int64) []byte {
			m := hmac.New(sha256.New, seed)
			m.Write([]byte(strconv.FormatInt(uid, 10)))
			return m.Sum(nil)
		}
		want := slices.Clone(entries)
		slices.SortFunc(want, func(a, b domain.DrawEntry) int { return bytes.Compare(key(a.UID), key(b.UID)) })
		got := domain.DrawOrder(entries, seed)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: the order is not the HMAC order (first %v, want %v)", s, got[:3], want[:3])
		}
	}
}
