package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
)

// TestOrderNoTagIsTheHMAC: the reused states give each key's tag, HMAC-SHA256's first
// OrderNoTagLen hex digits, whatever other keys are in use at the same time.
func TestOrderNoTagIsTheHMAC(t *testing.T) {
	keys := [][]byte{nil, []byte("k1"), []byte("0123456789abcdef0123456789abcdef"), []byte("k1 but longer")}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				key, body := keys[(g+i)%len(keys)], fmt.Sprintf("12-%d%08x", 1700000000000+i, g)
				m := hmac.New(sha256.New, key)
				m.Write([]byte(body))
				if got, want := orderNoTag(key, body), hex.EncodeToString(m.Sum(nil))[:OrderNoTagLen]; got != want {
					t.Errorf("orderNoTag(%q, %q) = %q, want %q", key, body, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
