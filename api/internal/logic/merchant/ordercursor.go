package merchant

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/seckill/seckill/internal/xerr"
)

// An orders list's cursor is opaque to clients: the last row id of the page before, as
// base64url("o:<id>"). Row ids only grow, so a cursor never skips a row stored after it.
const orderCursorPrefix = "o:"

var errBadCursor = xerr.New(xerr.InvalidArgument, "cursor is not a next_cursor this API gave")

func encodeOrderCursor(id uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(orderCursorPrefix + strconv.FormatUint(id, 10)))
}

// decodeOrderCursor is the row id a cursor names (0 for "": from the start); anything this
// API did not give is INVALID_ARGUMENT.
func decodeOrderCursor(c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, errBadCursor
	}
	digits, ok := strings.CutPrefix(string(raw), orderCursorPrefix)
	if !ok {
		return 0, errBadCursor
	}
	id, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || id == 0 || encodeOrderCursor(id) != c {
		return 0, errBadCursor
	}
	return id, nil
}
