// Package secrets judges secrets (JWT signing keys, zRPC app tokens, the order-number key)
// before a service uses them: long enough, random enough, and not one of the strings this
// repository has published in its example configs.
package secrets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
)

// Bounds on a secret. A secret shorter than MinBytes, or whose estimated
// entropy (length × the Shannon entropy of its characters) is below MinBits, is
// refused: "aaaa…", "abab…" and dictionary phrases padded to length do not pass.
const (
	MinBytes = 32
	MinBits  = 128
)

// publishedSecrets are SHA-256 digests of every secret string this repository has shipped
// in etc/ and deploy/ (the demo and placeholder secrets): anyone who read the repository
// knows them, so the gateway refuses them whatever their length. TestShippedSecretsRefused
// (etc/) reads the shipped files and fails when one of their secrets is not refused.
var publishedSecrets = map[string]bool{
	// etc/seckill-api.yaml, BuyerAuth (until issue 14)
	"8b0966484d3d944faa5a7ec35c1119b6eb706032dcb4b71bbd6c1d7768f4edbe": true,
	// etc/seckill-api.yaml, MerchantAuth (until issue 14)
	"68c85d5dca70cd3053d3ff15835793cbbd844eaf48d826bb9900361d894a5689": true,
	// deploy/multinode/api.yaml, BuyerAuth (until issue 14)
	"c1dc1660ea718243bd4ca230c8ef3be6d7fd0dfdd841593cad808c63bbac56c3": true,
	// deploy/multinode/api.yaml, MerchantAuth (until issue 14)
	"0ee2e0f18543f824c8630134630f1087c7145667a5e2c27e1520e3404b5b6d1e": true,
}

// digest is the hex SHA-256 of s.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Published reports whether s is a secret the repository ships or shipped.
func Published(s string) bool { return publishedSecrets[digest(strings.TrimSpace(s))] }

// entropyBits estimates the information in s: its length times the Shannon entropy of its bytes.
func entropyBits(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	return shannonBits(counts[:], len(s))
}

// stepBits estimates the information in s's steps (the differences of consecutive bytes):
// a sequence such as abc…xyz012 has nearly none.
func stepBits(s string) float64 {
	if len(s) < 2 {
		return 0
	}
	var counts [256]int
	for i := 1; i < len(s); i++ {
		counts[s[i]-s[i-1]]++
	}
	return shannonBits(counts[:], len(s)-1)
}

// shannonBits is n times the Shannon entropy of the distribution counts (of n samples).
func shannonBits(counts []int, n int) float64 {
	var h float64
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(n)
			h -= p * math.Log2(p)
		}
	}
	return h * float64(n)
}

// Check says why secret is not fit to sign or authenticate anything (nil when it is):
// empty, published in the repository, shorter than MinBytes, or of too little entropy in its bytes or steps.
// name is the config field, for the message.
func Check(name, secret string) error {
	switch {
	case secret == "":
		return fmt.Errorf("config: %s is missing", name)
	case Published(secret):
		return fmt.Errorf("config: %s is a secret published in the repository's example configs: "+
			"anyone can sign tokens with it", name)
	case len(secret) < MinBytes:
		return fmt.Errorf("config: %s is too short (%d bytes, at least %d)", name, len(secret), MinBytes)
	case entropyBits(secret) < MinBits:
		return fmt.Errorf("config: %s has too little entropy (about %.0f bits, at least %d): "+
			"use random bytes, e.g. `openssl rand -hex 32`",
			name, entropyBits(secret), MinBits)
	case stepBits(secret) < MinBits:
		return fmt.Errorf("config: %s has too little entropy in its steps (about %.0f bits, at least %d; a "+
			"sequence such as abc…xyz012): use random bytes, e.g. `openssl rand -hex 32`",
			name, stepBits(secret), MinBits)
	}
	return nil
}
