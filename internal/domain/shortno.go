package domain

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"
)

// An order number's short form names the order inside its activity's Redis keys (the orders
// hash's field, its request id's value in the buyers hash, a word of a pending member): the
// number without the activity id in front (the keys name the activity) and without the tag
// (OrderNoOf computes it again from the order key). Its body, "<unix ms><8 hex random>", is
// packed in 12 characters of base64url: the ms since shortEpochMs in 40 bits (until 2054),
// then the 32 random bits. A body that does not pack so exactly (another time, another
// shape) is kept whole after a '.', which base64url never holds.

// shortEpochMs is 2020-01-01 00:00 UTC in unix ms, where a packed short number's clock starts.
const shortEpochMs = 1_577_836_800_000

// shortLen is a packed short number's length: 9 bytes of base64url.
const shortLen = 12

// wholeMark starts a short number that holds its body whole.
const wholeMark = "."

var shortCoding = base64.RawURLEncoding

// ShortOrderNo is an order number's short form (above). orderNo must have an order number's
// shape and a tag (VerifyOrderNo); ok is false when it has not.
func ShortOrderNo(orderNo string) (short string, ok bool) {
	i := strings.IndexByte(orderNo, '-')
	if i < 1 || len(orderNo)-i-1 <= OrderNoTagLen {
		return "", false
	}
	body := orderNo[i+1 : len(orderNo)-OrderNoTagLen]
	if packed, ok := packBody(body); ok {
		return packed, true
	}
	return wholeMark + body, true
}

// OrderNoOf is the order number of activity aid whose short form (ShortOrderNo) is short,
// tagged under key (nil: the unkeyed checksum).
func OrderNoOf(aid int64, short string, key []byte) string {
	return orderNoOfBody(aid, bodyOf(short), key)
}

// orderNoOfBody is the order number of activity aid with body "<unix ms><8 hex random>", tagged
// under key: the one place an order number is put together.
func orderNoOfBody(aid int64, body string, key []byte) string {
	b := make([]byte, 0, 20+1+len(body)+OrderNoTagLen)
	b = strconv.AppendInt(b, aid, 10)
	b = append(b, '-')
	b = append(b, body...)
	head := string(b)
	return head + orderNoTag(key, head)
}

// packBody packs body, "<unix ms><8 hex random>", in shortLen characters; false when unpacking
// would not give body back exactly.
func packBody(body string) (string, bool) {
	if len(body) <= 8 {
		return "", false
	}
	msPart, rndPart := body[:len(body)-8], body[len(body)-8:]
	ms, err := strconv.ParseInt(msPart, 10, 64)
	if err != nil || strconv.FormatInt(ms, 10) != msPart || ms < shortEpochMs || ms-shortEpochMs >= 1<<40 {
		return "", false
	}
	var b [9]byte
	if n, err := hex.Decode(b[5:], []byte(rndPart)); err != nil || n != 4 || hex.EncodeToString(b[5:]) != rndPart {
		return "", false
	}
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(ms-shortEpochMs))
	copy(b[:5], t[3:])
	return shortCoding.EncodeToString(b[:]), true
}

// bodyOf is the body of the short number short.
func bodyOf(short string) string {
	if len(short) != shortLen {
		return strings.TrimPrefix(short, wholeMark)
	}
	var b [9]byte
	if n, err := shortCoding.Decode(b[:], []byte(short)); err != nil || n != len(b) {
		return strings.TrimPrefix(short, wholeMark)
	}
	var t [8]byte
	copy(t[3:], b[:5])
	out := strconv.AppendInt(make([]byte, 0, 13+8), int64(binary.BigEndian.Uint64(t[:]))+shortEpochMs, 10)
	return string(hex.AppendEncode(out, b[5:]))
}
