// Package paysign is the payment provider's signature scheme (docs/API.md, "Payment"), the one
// copy: the gateway checks notifications with it, the load generator and the tests sign them.
package paysign

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// The notification's headers, the signature's version prefix and the timestamp window.
const (
	HeaderTimestamp = "Seckill-Timestamp"
	HeaderSignature = "Seckill-Signature"
	Version         = "v1="
	Window          = 300 * time.Second
)

// Sign is the Seckill-Signature value of body sent at ts (unix seconds in decimal) with secret:
// "v1=" and the lowercase hex HMAC-SHA256 of "<ts>." + body.
func Sign(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return Version + hex.EncodeToString(m.Sum(nil))
}

// Valid reports, in constant time, whether sig is body's signature at ts with secret.
func Valid(secret []byte, ts string, body []byte, sig string) bool {
	return hmac.Equal([]byte(sig), []byte(Sign(secret, ts, body)))
}

// Fresh reports whether a notification sent at sent is within Window of now.
func Fresh(sent, now time.Time) bool {
	d := now.Sub(sent)
	return d <= Window && d >= -Window
}
