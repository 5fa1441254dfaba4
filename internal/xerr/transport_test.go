package xerr_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/breaker"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/seckill/seckill/internal/xerr"
)

const method = "/inventory.Inventory/Reserve"

// notAStatus marks a case whose error is not a gRPC status.
const notAStatus = codes.Code(1 << 31)

// listen is a loopback listener closed with the test.
func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// grpcServer answers every method with handler's error (a real grpc-go server).
func grpcServer(t *testing.T, handler func(ctx context.Context) error) string {
	t.Helper()
	l := listen(t)
	s := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		var in emptypb.Empty
		if err := stream.RecvMsg(&in); err != nil {
			return err
		}
		if err := handler(stream.Context()); err != nil {
			return err
		}
		return stream.SendMsg(&emptypb.Empty{})
	}))
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return l.Addr().String()
}

// h2cServer is a bare HTTP/2 server (no gRPC) whose handler plays a broken server.
func h2cServer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	l := listen(t)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	s := &http.Server{Handler: h, Protocols: &p, ErrorLog: nil}
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close() })
	return l.Addr().String()
}

// resetProxy forwards to target until kill, which resets (RST, linger 0) every
// connection, as the kernel does for a process killed with kill -9 with unread data.
type resetProxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []*net.TCPConn
}

func startResetProxy(t *testing.T, target string) *resetProxy {
	t.Helper()
	p := &resetProxy{l: listen(t)}
	go func() {
		for {
			c, err := p.l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c.(*net.TCPConn), up.(*net.TCPConn))
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c) }()
			go func() { _, _ = io.Copy(c, up) }()
		}
	}()
	t.Cleanup(p.kill)
	return p
}

func (p *resetProxy) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.SetLinger(0)
		_ = c.Close()
	}
	p.conns = nil
}

func call(t *testing.T, addr string, timeout time.Duration) error {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return cc.Invoke(ctx, method, &emptypb.Empty{}, &emptypb.Empty{})
}

// grpcFrame is one length-prefixed gRPC message of n zero bytes, cut after keep bytes.
func grpcFrame(n, keep int) []byte {
	b := make([]byte, 5+n)
	binary.BigEndian.PutUint32(b[1:5], uint32(n))
	return b[:keep]
}

// TestTransportFailuresAreBusy: every way a zRPC call gets no answer from the inventory
// service's logic, provoked for real through grpc-go's client, is BUSY; every answer the
// server gave (a business outcome, INTERNAL with our detail, a foreign Internal with a
// message, a refused app) keeps its code. The grpc-go texts brokenStream matches are
// checked here: an upgrade that rewords them fails this test.
func TestTransportFailuresAreBusy(t *testing.T) {
	cases := append(answeredCases(), noAnswerCases()...)
	cases = append(cases, brokenStreamCases()...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err(t)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			st, isStatus := status.FromError(err)
			switch {
			case c.code == notAStatus && isStatus:
				t.Fatalf("got a status %v, want a plain error", err)
			case c.code != notAStatus && (!isStatus || st.Code() != c.code):
				t.Fatalf("got %v, want gRPC code %s (the case no longer provokes what it names)", err, c.code)
			}
			got := xerr.FromStatus(err)
			if got.Code != c.want || got.Msg == "" {
				t.Fatalf("%v: FromStatus says %s %q, want %s", err, got.Code, got.Msg, c.want)
			}
			t.Logf("%v -> %s", err, got.Code)
		})
	}
}

// transportCase is a way a call fails: err provokes it, code is the gRPC code it provokes
// (notAStatus: a plain error), want what FromStatus makes of it.
type transportCase struct {
	name string
	err  func(t *testing.T) error
	code codes.Code
	want xerr.Code
}

// answeredCases: the server answered.
func answeredCases() []transportCase {
	answered := func(e error) func(t *testing.T) error {
		return func(t *testing.T) error {
			return call(t, grpcServer(t, func(context.Context) error { return e }), 5*time.Second)
		}
	}
	return []transportCase{
		// The server answered.
		{"business outcome", answered(xerr.ToStatus(xerr.ErrSoldOut)), codes.FailedPrecondition, xerr.SoldOut},
		{"BUSY answered", answered(xerr.ToStatus(xerr.Unavailable(errors.New("redis: i/o timeout")))), codes.Aborted,
			xerr.Busy},
		{"server bug, our detail", answered(xerr.ToStatus(errors.New("duplicate entry for key PRIMARY"))), codes.Internal,
			xerr.Internal},
		// A server bug whose text is a transport text: the detail says the server answered.
		{"server bug reading unexpected EOF, our detail", answered(xerr.ToStatus(io.ErrUnexpectedEOF)), codes.Internal,
			xerr.Internal},
		{"foreign Internal with a message", answered(status.Error(codes.Internal, "nil pointer dereference")),
			codes.Internal, xerr.Internal},
		{"go-zero recovered panic", answered(status.Error(codes.Internal, "panic: runtime error")), codes.Internal,
			xerr.Internal},
		{"foreign Unknown", answered(errors.New("plain error")), codes.Unknown, xerr.Internal},
		{"app refused", answered(status.Error(codes.Unauthenticated, "missing metadata")), codes.Unauthenticated,
			xerr.Internal},
		{"server breaker (go-zero)", answered(status.Error(codes.Unavailable, breaker.ErrServiceUnavailable.Error())),
			codes.Unavailable, xerr.Busy},
		{"server shedding (go-zero)", answered(status.Error(codes.ResourceExhausted, "service overloaded")),
			codes.ResourceExhausted, xerr.Busy},
	}
}

// noAnswerCases: the connection or the call ends without an answer.
func noAnswerCases() []transportCase {
	return []transportCase{
		// No answer.
		{"connection refused", func(t *testing.T) error {
			l := listen(t)
			addr := l.Addr().String()
			_ = l.Close()
			return call(t, addr, 5*time.Second)
		}, codes.Unavailable, xerr.Busy},
		{"every connection reset at accept", func(t *testing.T) error {
			l := listen(t)
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					_ = c.(*net.TCPConn).SetLinger(0)
					_ = c.Close()
				}
			}()
			return call(t, l.Addr().String(), 5*time.Second)
		}, codes.Unavailable, xerr.Busy},
		{"connection reset during the call (kill -9)", func(t *testing.T) error {
			in := make(chan struct{})
			addr := grpcServer(t, func(ctx context.Context) error {
				close(in)
				<-ctx.Done()
				return ctx.Err()
			})
			p := startResetProxy(t, addr)
			go func() { <-in; p.kill() }()
			return call(t, p.l.Addr().String(), 5*time.Second)
		}, codes.Unavailable, xerr.Busy},
		{"server stopped during the call", func(t *testing.T) error {
			in := make(chan struct{})
			l := listen(t)
			s := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
				close(in)
				<-stream.Context().Done()
				return nil
			}))
			go func() { _ = s.Serve(l) }()
			go func() { <-in; s.Stop() }()
			return call(t, l.Addr().String(), 5*time.Second)
		}, codes.Unavailable, xerr.Busy},
		{"the call's deadline", func(t *testing.T) error {
			return call(t, grpcServer(t, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }),
				100*time.Millisecond)
		}, codes.DeadlineExceeded, xerr.Busy},
		{"the call's context cancelled", func(t *testing.T) error {
			addr := grpcServer(t, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
			cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return cc.Invoke(ctx, method, &emptypb.Empty{}, &emptypb.Empty{})
		}, codes.Canceled, xerr.Busy},
		{"the client connection closing", func(t *testing.T) error {
			addr := grpcServer(t, func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
			cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			_ = cc.Close()
			return cc.Invoke(context.Background(), method, &emptypb.Empty{}, &emptypb.Empty{})
		}, codes.Canceled, xerr.Busy},
	}
}

// brokenStreamCases: the HTTP/2 stream breaks, a proxy answers, or the client fails.
func brokenStreamCases() []transportCase {
	return []transportCase{
		{"stream ended mid-message", func(t *testing.T) error {
			return call(t, h2cServer(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/grpc")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(grpcFrame(100, 20))
			}), 5*time.Second)
		}, codes.Internal, xerr.Busy},
		{"stream ended without trailers", func(t *testing.T) error {
			return call(t, h2cServer(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/grpc")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(grpcFrame(0, 5))
			}), 5*time.Second)
		}, codes.Internal, xerr.Busy},
		{"stream reset (RST_STREAM)", func(t *testing.T) error {
			return call(t, h2cServer(t, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/grpc")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}), 5*time.Second)
		}, codes.Internal, xerr.Busy},
		{"a proxy's 502", func(t *testing.T) error {
			return call(t, h2cServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "bad gateway", http.StatusBadGateway)
			}), 5*time.Second)
		}, codes.Unavailable, xerr.Busy},
		{"client breaker open (go-zero, not a status)", func(*testing.T) error { return breaker.ErrServiceUnavailable },
			notAStatus, xerr.Busy},
		{"a client-side error that is no dependency failure", func(*testing.T) error { return errors.New("bug") },
			notAStatus, xerr.Internal},
	}
}

// The BUSY of a call without an answer carries the cause for the logs, and says what the
// API promises.
func TestNoAnswerBusyMessage(t *testing.T) {
	err := status.Error(codes.Unavailable,
		`connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`)
	e := xerr.FromStatus(err)
	if e.Code != xerr.Busy || e.Msg != "a dependency is unavailable, retry with the same request_id" || e.Cause == nil {
		t.Fatalf("got %+v", e)
	}
	if fmt.Sprint(e) == e.Msg {
		t.Fatal("the cause is not in the error's text")
	}
}
