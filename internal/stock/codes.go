package stock

import (
	"errors"
	"fmt"

	"github.com/seckill/seckill/internal/xerr"
)

// Result codes returned by the Lua scripts (first element of the reply).
const (
	codeOK            = 0
	codeReplay        = 1
	codeNotWarm       = -1
	codeNotStarted    = -2
	codeEnded         = -3
	codeLimitExceeded = -4
	codeSoldOut       = -5
	codeOrderNotFound = -6
	codeOrderClosed   = -7
	codeOrderPaid     = -8
	codeInsufficient  = -9
	codeNotDue        = -10
	codeBadArgument   = -11
	codeOrderNoTaken  = -12
	codeCorrupt       = -13
	codeAlreadyWarm   = -14
	codeLeaseLapsed   = -15
	codeEpochClaimed  = -16
	codeDrawPending   = -17
	codeDrawBusy      = -18
	codeDrawMoved     = -19
	codeDrawDone      = -20
	codeEntryAddr     = -21
	codeAmount        = -22
	codeIdemConflict  = -23
	codeStarted       = -24
)

var (
	// ErrNotWarm: the activity's stock is not in Redis. Callers backfill and retry,
	// or answer BUSY; it is never a client's fault.
	// It is a BUSY outcome (xerr.CodeOf(ErrNotWarm) == xerr.Busy) when it reaches a client.
	ErrNotWarm = fmt.Errorf("%w: activity is not warm", xerr.ErrBusy)
	// errUnknownCode: a script replied with a code this build does not know.
	errUnknownCode = errors.New("stock: unknown script result code")
	// errCorrupt: the stock hash holds a value a script refuses to apply (nothing was
	// written). Not the client's fault, and not a dependency failure: INTERNAL.
	errCorrupt = errors.New("stock: the stock hash holds a value the script cannot apply")
	// ErrAlreadyWarm: a restore batch found the stock hash present (another rebuild
	// finished and selling resumed); nothing was written.
	ErrAlreadyWarm = errors.New("stock: the activity is warm again")
	// ErrLeaseLapsed: a reservation reached Redis after its sell-by (degrade mode's lease
	// on the activity's mode lapsed on the way): nothing was written. BUSY without a cause
	// (not Redis down): the buyer retries with the same request id, and the next call
	// re-reads the mode.
	ErrLeaseLapsed = xerr.Sentinel(xerr.Busy,
		"the lease on the activity's mode lapsed before the reservation reached Redis, retry with the same request_id")
	// errEpochClaimed: a warm-up or rebuild would write a stock hash of an epoch below the one a
	// later loss rebuild claimed (Recovery.ClaimEpoch): nothing written. BUSY: that rebuild
	// writes the book.
	errEpochClaimed = xerr.Sentinel(xerr.Busy, "a later rebuild owns the activity's book, retry with the same request_id")
	// errDrawBusy: the draw is being decided and the buyer has no entry: BUSY for the
	// second or so the draw takes, then reservations are served in arrival order.
	errDrawBusy = xerr.Sentinel(xerr.Busy, "the opening draw is being decided, retry with the same request_id")
	// errEntriesPerAddress: the buyer's client address has as many entrants in the draw as
	// one address may (Draw.EntriesPerAddress); nothing was written.
	errEntriesPerAddress = xerr.Sentinel(xerr.RateLimited, "too many entries of the opening draw from this client address")
	// errDrawPending: the activity's draw is not done; the batch goes to enter.lua.
	errDrawPending = errors.New("stock: the draw is not done")
	// errDrawDone: the draw finished between reserve.lua and enter.lua: reserve again.
	errDrawDone = errors.New("stock: the draw is done")
	// errDrawMoved: another drawer moved the draw's cursor first (nothing written).
	errDrawMoved = errors.New("stock: the draw's cursor moved")
	// errOrderNoTaken: a fresh order number collided; the caller draws another.
	errOrderNoTaken = errors.New("stock: order number taken")
)

// codeError maps a script result code to its typed error: the one place that does.
func codeError(code int64) error {
	switch code {
	case codeNotWarm:
		return ErrNotWarm
	case codeEpochClaimed:
		return errEpochClaimed
	case codeNotStarted:
		return xerr.ErrNotStarted
	case codeEnded:
		return xerr.ErrEnded
	case codeLimitExceeded:
		return xerr.ErrLimitExceeded
	case codeSoldOut:
		return xerr.ErrSoldOut
	case codeOrderNotFound:
		return xerr.ErrOrderNotFound
	case codeOrderClosed:
		return xerr.ErrOrderClosed
	case codeOrderPaid:
		return xerr.ErrOrderPaid
	case codeIdemConflict:
		return xerr.ErrIdempotencyConflict
	case codeInsufficient:
		return xerr.ErrInsufficientStock
	case codeNotDue:
		return xerr.ErrNotDue
	case codeBadArgument:
		return xerr.New(xerr.InvalidArgument, "invalid argument")
	case codeOrderNoTaken:
		return errOrderNoTaken
	case codeCorrupt:
		return errCorrupt
	case codeAlreadyWarm:
		return ErrAlreadyWarm
	case codeLeaseLapsed:
		return ErrLeaseLapsed
	case codeDrawPending:
		return errDrawPending
	case codeDrawBusy:
		return errDrawBusy
	case codeDrawMoved:
		return errDrawMoved
	case codeDrawDone:
		return errDrawDone
	case codeEntryAddr:
		return errEntriesPerAddress
	case codeAmount:
		return xerr.ErrAmountMismatch
	case codeStarted:
		return xerr.ErrStarted
	default:
		return fmt.Errorf("%w: %d", errUnknownCode, code)
	}
}
