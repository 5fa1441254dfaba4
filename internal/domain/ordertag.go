package domain

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"sync"
)

// tagMACs holds, per key, HMAC-SHA256 states keyed with it, reused (Reset): hmac.New hashes
// the key into both pads and allocates two digests, and a tag is made for every order
// numbered and every order number checked. The keys are the services' configured ones.
var tagMACs sync.Map // string(key) -> *sync.Pool of hash.Hash

// orderNoTag is the check tag of an order number's body under key: the first OrderNoTagLen
// hex digits of its HMAC-SHA256.
func orderNoTag(key []byte, body string) string {
	pool, ok := tagMACs.Load(string(key))
	if !ok {
		k := bytes.Clone(key)
		pool, _ = tagMACs.LoadOrStore(string(k), &sync.Pool{New: func() any { return hmac.New(sha256.New, k) }})
	}
	p := pool.(*sync.Pool)
	m := p.Get().(hash.Hash)
	m.Reset()
	_, _ = io.WriteString(m, body)
	var sum [sha256.Size]byte
	m.Sum(sum[:0])
	p.Put(m)
	var tag [OrderNoTagLen]byte
	hex.Encode(tag[:], sum[:OrderNoTagLen/2])
	return string(tag[:])
}
