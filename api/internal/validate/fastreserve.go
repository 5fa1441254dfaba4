package validate

import (
	"github.com/seckill/seckill/api/internal/types"
	"github.com/seckill/seckill/internal/domain"
)

// MaxFastReserveBody bounds the bodies ReserveBody reads: a reservation is well under it
// (a 64-character request_id and two numbers).
const MaxFastReserveBody = 512

// ReserveBody decodes a reservation in a plain subset of JSON without reflection; ok means
// httpx.Parse decodes the same body to exactly req (FuzzReserveBody), else it must decode it.
func ReserveBody(b []byte) (req types.ReserveReq, ok bool) {
	p := scanner{b: b}
	var seenA, seenQ, seenR bool
	req.Quantity = 1
	p.space()
	if !p.byte('{') {
		return req, false
	}
	for first := true; ; first = false {
		p.space()
		if !first {
			if p.byte('}') {
				break
			}
			if !p.byte(',') {
				return req, false
			}
			p.space()
		}
		key, ok := p.wordBytes()
		if !ok {
			return req, false
		}
		p.space()
		if !p.byte(':') {
			return req, false
		}
		p.space()
		switch string(key) { // compared without a copy
		case "activity_id":
			if seenA {
				return req, false
			}
			seenA = true
			if req.ActivityId, ok = p.number(); !ok {
				return req, false
			}
		case "quantity":
			if seenQ {
				return req, false
			}
			seenQ = true
			if req.Quantity, ok = p.number(); !ok {
				return req, false
			}
		case "request_id":
			if seenR {
				return req, false
			}
			seenR = true
			if req.RequestId, ok = p.word(); !ok {
				return req, false
			}
		default:
			return req, false
		}
	}
	p.space()
	// A number outside ReserveReq's range= tags (api/seckill.api) is left to httpx.Parse, which
	// refuses it: the answer it gave before this decoder.
	inRange := req.ActivityId >= 1 && req.Quantity >= 1 && req.Quantity <= domain.MaxQuantity
	return req, seenA && seenR && p.i == len(p.b) && inRange
}

type scanner struct {
	b []byte
	i int
}

func (p *scanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *scanner) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// word is a JSON string of [A-Za-z0-9_-] (no escapes), possibly empty.
func (p *scanner) word() (string, bool) {
	b, ok := p.wordBytes()
	return string(b), ok
}

// wordBytes is word's bytes, in p.b.
func (p *scanner) wordBytes() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			b := p.b[start:p.i]
			p.i++
			return b, true
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
			p.i++
		default:
			return nil, false
		}
	}
	return nil, false
}

// number is an unsigned JSON integer of 1..18 digits without a leading zero (or "0"),
// followed by a delimiter.
func (p *scanner) number() (int64, bool) {
	start := p.i
	var n int64
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
		if p.i-start > 18 {
			return 0, false
		}
	}
	digits := p.i - start
	if digits == 0 || (digits > 1 && p.b[start] == '0') {
		return 0, false
	}
	if p.i < len(p.b) {
		switch p.b[p.i] {
		case ',', '}', ' ', '\t', '\n', '\r':
		default:
			return 0, false // a fraction, an exponent, anything else
		}
	}
	return n, true
}
