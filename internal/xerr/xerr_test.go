package xerr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zeromicro/go-zero/core/breaker"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestFromStatus: what a zRPC client call can return, mapped to the API's code. go-zero's
// client breaker answers with breaker.ErrServiceUnavailable, no status: it is BUSY (seen
// in `make bench`'s degrade-mode burst as a 500 INTERNAL before).
func TestFromStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want Code
	}{
		{"our status", ToStatus(ErrSoldOut), SoldOut},
		{"an *Error", ErrLimitExceeded, LimitExceeded},
		{"deadline status", status.Error(codes.DeadlineExceeded, "x"), Busy},
		{"aborted status", status.Error(codes.Aborted, "x"), Busy},
		{"unknown status", status.Error(codes.Unknown, "x"), Internal},
		{"client breaker open", breaker.ErrServiceUnavailable, Busy},
		{"client breaker open, wrapped", fmt.Errorf("call: %w", breaker.ErrServiceUnavailable), Busy},
		{"context deadline", context.DeadlineExceeded, Busy},
		{"anything else", errors.New("boom"), Internal},
	} {
		if got := FromStatus(tc.err); got == nil || got.Code != tc.want {
			t.Errorf("%s: FromStatus(%v) = %v, want %s", tc.name, tc.err, got, tc.want)
		}
	}
	if FromStatus(nil) != nil {
		t.Error("FromStatus(nil) is not nil")
	}
}
