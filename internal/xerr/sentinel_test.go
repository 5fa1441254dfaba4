package xerr_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/xerr"
)

// TestSentinelsCrossZRPC: errors.Is compares identity, and a declared sentinel is itself on
// the far side of a real gRPC call; another error of the same code word is not (the draw's
// verdict is SOLD_OUT too, and the gateway must tell the two apart without comparing text).
func TestSentinelsCrossZRPC(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sent     error
		is, isnt error
	}{
		{"the draw's verdict", xerr.ErrDrawLost, xerr.ErrDrawLost, xerr.ErrSoldOut},
		{"sold out", xerr.ErrSoldOut, xerr.ErrSoldOut, xerr.ErrDrawLost},
		{"a BUSY of its own", xerr.New(xerr.Busy, "a Redis call failed"), nil, xerr.ErrBusy},
	} {
		addr := grpcServer(t, func(context.Context) error { return xerr.ToStatus(tc.sent) })
		got := xerr.FromStatus(call(t, addr, 5*time.Second))
		if tc.is != nil && !errors.Is(got, tc.is) {
			t.Errorf("%s: %v is not %v after the call", tc.name, got, tc.is)
		}
		if errors.Is(got, tc.isnt) {
			t.Errorf("%s: %v is %v after the call", tc.name, got, tc.isnt)
		}
		if xerr.CodeOf(got) != xerr.CodeOf(tc.sent) {
			t.Errorf("%s: code %s after the call, sent %s", tc.name, xerr.CodeOf(got), xerr.CodeOf(tc.sent))
		}
	}
	// The coalesced batch's per-item answers go through Known too.
	if !errors.Is(xerr.Known(xerr.SoldOut, xerr.ErrDrawLost.Msg), xerr.ErrDrawLost) ||
		errors.Is(xerr.Known(xerr.SoldOut, "sold out: another text"), xerr.ErrSoldOut) {
		t.Error("Known does not map a sentinel's code and message back to it, and only that")
	}
}
