// Package xerr is the one place where business outcomes are named and mapped:
// API code word <-> typed error <-> gRPC status <-> HTTP status.
//
// Business outcomes cross zRPC as InvalidArgument / NotFound / FailedPrecondition /
// AlreadyExists / Aborted with the API code word in an ErrorInfo detail. They never
// travel as ResourceExhausted, Unavailable or Internal, which go-zero's client breaker
// counts as failures: a sold-out burst must not open the breaker.
package xerr

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/zeromicro/go-zero/core/breaker"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Code is the upper-case word clients switch on (docs/API.md).
type Code string

const (
	InvalidArgument   Code = "INVALID_ARGUMENT"
	Unauthorized      Code = "UNAUTHORIZED"
	ActivityNotFound  Code = "ACTIVITY_NOT_FOUND"
	OrderNotFound     Code = "ORDER_NOT_FOUND"
	EntryNotFound     Code = "ENTRY_NOT_FOUND"
	NotFound          Code = "NOT_FOUND" // unknown route
	MethodNotAllowed  Code = "METHOD_NOT_ALLOWED"
	NotStarted        Code = "NOT_STARTED"
	Started           Code = "STARTED" // editing an activity that has started
	Ended             Code = "ENDED"
	DrawPending       Code = "DRAW_PENDING" // ending a sale whose opening draw is not done
	SoldOut           Code = "SOLD_OUT"
	LimitExceeded     Code = "LIMIT_EXCEEDED"
	OrderClosed       Code = "ORDER_CLOSED"
	OrderPaid         Code = "ORDER_PAID"
	AmountMismatch    Code = "AMOUNT_MISMATCH" // a payment notification's amount is not the order's
	TradeNoReused     Code = "TRADE_NO_REUSED" // a payment's trade_no already paid another order
	Forbidden         Code = "FORBIDDEN"       // a route this deployment turned off (Pay.BuyerConfirms)
	InsufficientStock Code = "INSUFFICIENT_STOCK"
	NotDue            Code = "NOT_DUE"
	// IdempotencyConflict: an Idempotency-Key used again with another route or body.
	IdempotencyConflict Code = "IDEMPOTENCY_CONFLICT"
	RateLimited         Code = "RATE_LIMITED"
	Busy                Code = "BUSY"
	TooLarge            Code = "PAYLOAD_TOO_LARGE"
	UnsupportedMedia    Code = "UNSUPPORTED_MEDIA_TYPE"
	Internal            Code = "INTERNAL"
)

// errorDomain tags the ErrorInfo detail so foreign statuses are not misread.
const errorDomain = "seckill"

type mapping struct {
	grpc codes.Code
	http int
}

// table is the single mapping from code word to gRPC and HTTP status.
var table = map[Code]mapping{
	InvalidArgument:     {codes.InvalidArgument, http.StatusBadRequest},
	Unauthorized:        {codes.Unauthenticated, http.StatusUnauthorized},
	ActivityNotFound:    {codes.NotFound, http.StatusNotFound},
	OrderNotFound:       {codes.NotFound, http.StatusNotFound},
	EntryNotFound:       {codes.NotFound, http.StatusNotFound},
	NotFound:            {codes.NotFound, http.StatusNotFound},
	MethodNotAllowed:    {codes.Unimplemented, http.StatusMethodNotAllowed},
	NotStarted:          {codes.FailedPrecondition, http.StatusConflict},
	Started:             {codes.FailedPrecondition, http.StatusConflict},
	Ended:               {codes.FailedPrecondition, http.StatusConflict},
	DrawPending:         {codes.FailedPrecondition, http.StatusConflict},
	SoldOut:             {codes.FailedPrecondition, http.StatusConflict},
	LimitExceeded:       {codes.FailedPrecondition, http.StatusConflict},
	OrderClosed:         {codes.FailedPrecondition, http.StatusConflict},
	OrderPaid:           {codes.FailedPrecondition, http.StatusConflict},
	AmountMismatch:      {codes.FailedPrecondition, http.StatusConflict},
	TradeNoReused:       {codes.FailedPrecondition, http.StatusConflict},
	Forbidden:           {codes.PermissionDenied, http.StatusForbidden},
	InsufficientStock:   {codes.FailedPrecondition, http.StatusConflict},
	NotDue:              {codes.FailedPrecondition, http.StatusConflict},
	RateLimited:         {codes.Aborted, http.StatusTooManyRequests},
	IdempotencyConflict: {codes.FailedPrecondition, http.StatusConflict},
	// Aborted, not Unavailable: a cache backfill in progress is a business answer
	// ("retry"), not a sick server, and must not trip the client breaker.
	Busy:     {codes.Aborted, http.StatusServiceUnavailable},
	TooLarge: {codes.InvalidArgument, http.StatusRequestEntityTooLarge},
	Internal: {codes.Internal, http.StatusInternalServerError},

	UnsupportedMedia: {codes.InvalidArgument, http.StatusUnsupportedMediaType},
}

// Error is a business outcome with its code word. An Error made by Unavailable also
// carries the infrastructure failure behind it (Cause), for the logs, never for clients.
type Error struct {
	Code  Code
	Msg   string
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return string(e.Code) + ": " + e.Msg + ": " + e.Cause.Error()
	}
	return string(e.Code) + ": " + e.Msg
}

// Unwrap exposes the cause of a dependency failure.
func (e *Error) Unwrap() error { return e.Cause }

// Unavailable types err as a dependency failure, BUSY (retry with the same request_id); an
// *Error is returned as it is, nil stays nil.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: Busy, Msg: "a dependency is unavailable, retry with the same request_id", Cause: err}
}

// IsDependencyFailure reports whether err, not a business outcome, is an infrastructure
// failure: a network error, a closed or refused connection, a timeout, go-zero's open
// breaker, database/sql's bad connection. The interceptor maps these to BUSY even where a
// call site forgot Unavailable. (Not io.EOF: a truncated request body is the client's.)
func IsDependencyFailure(err error) bool {
	var ne net.Error
	switch {
	case err == nil:
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.Is(err, breaker.ErrServiceUnavailable),
		errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.As(err, &ne):
		return true
	}
	return false
}

// IsOutcome reports whether err is a business outcome (a code word other than BUSY and INTERNAL),
// which says nothing about a dependency's health: breakers must not count it.
func IsOutcome(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code != Busy && e.Code != Internal
}

// New returns an error with the code word and message. errors.Is compares identity (a
// sentinel is itself and nothing else); a code check is CodeOf(err) == code.
func New(code Code, msg string) *Error { return &Error{Code: code, Msg: msg} }

// sentinel is a (code word, message) pair: a sentinel's identity on the wire.
type sentinel struct {
	code Code
	msg  string
}

var sentinels = map[sentinel]*Error{}

// Sentinel declares a package-level error that keeps its identity across zRPC: Known maps its
// code word and message back to it, so errors.Is(err, ErrDrawLost) holds on the far side of a
// call too. Call it from a var declaration only (it registers, unlocked, at init).
func Sentinel(code Code, msg string) *Error {
	k := sentinel{code, msg}
	if _, dup := sentinels[k]; dup {
		panic("xerr: sentinel declared twice: " + string(code) + ": " + msg)
	}
	e := New(code, msg)
	sentinels[k] = e
	return e
}

// Known is the error a peer answered with its code word and message: the sentinel declared
// with that pair, or a new *Error.
func Known(code Code, msg string) *Error {
	if e, ok := sentinels[sentinel{code, msg}]; ok {
		return e
	}
	return New(code, msg)
}

// Newf is New with a format.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Sentinels, for errors.Is (identity, across zRPC too: Known).
var (
	ErrActivityNotFound = Sentinel(ActivityNotFound, "activity not found")
	ErrOrderNotFound    = Sentinel(OrderNotFound, "order not found")
	ErrEntryNotFound    = Sentinel(EntryNotFound, "no entry of this buyer in the activity's draw")
	// ErrDrawLost is the SOLD_OUT of an entrant the opening draw left without stock: the
	// draw's verdict, not news about stock now (the gateway sets no sold-out mark on it).
	ErrDrawLost          = Sentinel(SoldOut, "sold out: the opening draw did not pick this entry")
	ErrNotStarted        = Sentinel(NotStarted, "the activity has not started")
	ErrStarted           = Sentinel(Started, "the activity has started: it can no longer be edited")
	ErrEnded             = Sentinel(Ended, "the activity has ended")
	ErrDrawPending       = Sentinel(DrawPending, "the activity's opening draw is not done")
	ErrSoldOut           = Sentinel(SoldOut, "sold out")
	ErrLimitExceeded     = Sentinel(LimitExceeded, "per-user limit exceeded")
	ErrOrderClosed       = Sentinel(OrderClosed, "the order is cancelled or expired")
	ErrOrderPaid         = Sentinel(OrderPaid, "the order is paid")
	ErrAmountMismatch    = Sentinel(AmountMismatch, "the amount is not the order's amount (quantity x price)")
	ErrTradeNoReused     = Sentinel(TradeNoReused, "the trade_no already paid another order")
	ErrInsufficientStock = Sentinel(InsufficientStock, "not enough remaining stock to withdraw")
	ErrNotDue            = Sentinel(NotDue, "the order is not due for expiry")
	ErrBusy              = Sentinel(Busy, "busy, retry with the same request_id")
	// ErrIdempotencyConflict: a merchant's Idempotency-Key used again with another request
	// (the stock script's record, or MySQL's).
	ErrIdempotencyConflict = Sentinel(IdempotencyConflict,
		"this Idempotency-Key was used with another route or body")
)

// CodeOf returns the code word of err (Internal for anything that is not an *Error).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// HTTPStatus is the HTTP status for a code word.
func HTTPStatus(c Code) int {
	if m, ok := table[c]; ok {
		return m.http
	}
	return http.StatusInternalServerError
}

// GRPCCode is the gRPC code for a code word.
func GRPCCode(c Code) codes.Code {
	if m, ok := table[c]; ok {
		return m.grpc
	}
	return codes.Internal
}

// ToStatus turns err into a gRPC status error carrying the code word in an ErrorInfo detail:
// dependency failures become BUSY, anything else that is not a business outcome Internal.
func ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var e *Error
	if !errors.As(err, &e) {
		if IsDependencyFailure(err) {
			e = Unavailable(err).(*Error)
		} else {
			e = &Error{Code: Internal, Msg: err.Error()}
		}
	}
	st := status.New(GRPCCode(e.Code), e.Msg)
	if d, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: string(e.Code), Domain: errorDomain}); derr == nil {
		return d.Err()
	}
	return st.Err()
}

// FromStatus turns what a zRPC call returned into an *Error, the one mapping every caller uses:
// the service's code word when it answered, BUSY when the call got no answer (docs/DESIGN.md).
func FromStatus(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	st, ok := status.FromError(err)
	if !ok {
		if IsDependencyFailure(err) {
			return Unavailable(err).(*Error)
		}
		return New(Internal, err.Error())
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.Domain == errorDomain {
			return Known(Code(info.Reason), st.Message())
		}
	}
	switch {
	case noAnswer(st):
		return Unavailable(err).(*Error)
	case st.Code() == codes.InvalidArgument:
		return New(InvalidArgument, st.Message())
	default:
		return New(Internal, st.Message())
	}
}

// noAnswer reports whether a status without our detail says the call got no answer from the
// service's logic (a broken connection, a deadline, go-zero's breaker, shedder or timeout).
func noAnswer(st *status.Status) bool {
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.ResourceExhausted, codes.Aborted:
		return true
	case codes.Internal, codes.Unknown:
		return brokenStream(st.Message())
	}
	return false
}

// brokenStream reports whether msg is one of the texts grpc-go's client writes when a stream
// ends without the server's status (TestTransportFailuresAreBusy pins them).
func brokenStream(msg string) bool {
	return msg == io.ErrUnexpectedEOF.Error() ||
		msg == "server closed the stream without sending trailers" ||
		strings.HasPrefix(msg, "stream terminated by RST_STREAM with error code: ")
}
