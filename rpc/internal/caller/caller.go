// Package caller authenticates the inventory service's zRPC callers and holds each call's
// app: its token (compared in constant time) and the methods it may call, from the config
// (docs/DESIGN.md, "Security").
package caller

import (
	"context"
	"crypto/subtle"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/seckill/seckill/rpc/internal/config"
)

// The metadata keys zRPC clients send App and Token under (go-zero's zrpc/internal/auth).
const (
	appKey   = "app"
	tokenKey = "token"
)

// An App is an authenticated caller.
type App struct {
	Name string
	// AllActivities: the app may call the merchant RPCs of its methods for no merchant.
	AllActivities bool
	token         []byte
	methods       map[string]bool // full method names
}

// An Authenticator admits a call whose App and Token match one of its apps and whose
// method is in that app's list.
type Authenticator struct {
	apps map[string]*App
}

type ctxKey struct{}

// NewAuthenticator returns an Authenticator of the apps (validated by config.Validate).
func NewAuthenticator(apps []config.AppToken) *Authenticator {
	a := &Authenticator{apps: make(map[string]*App, len(apps))}
	for _, at := range apps {
		app := &App{Name: at.App, AllActivities: at.AllActivities, token: []byte(at.Token),
			methods: make(map[string]bool, len(at.Methods))}
		for _, m := range at.Methods {
			app.methods[config.FullMethod(m)] = true
		}
		a.apps[at.App] = app
	}
	return a
}

// From returns the authenticated app of ctx; false when the service runs without Auth.
func From(ctx context.Context) (*App, bool) {
	app, ok := ctx.Value(ctxKey{}).(*App)
	return app, ok
}

// Unary is the unary server interceptor: it runs handler only for an admitted call.
func (a *Authenticator) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler) (any, error) {
	app, err := a.admit(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	return handler(context.WithValue(ctx, ctxKey{}, app), req)
}

// Stream is the stream server interceptor: it runs handler only for an admitted call.
func (a *Authenticator) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo,
	handler grpc.StreamHandler) error {
	if _, err := a.admit(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}

// admit returns the caller's app if its credentials match and method is in its list.
func (a *Authenticator) admit(ctx context.Context, method string) (*App, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	name, token := first(md, appKey), first(md, tokenKey)
	app, ok := a.apps[name]
	if !ok || token == "" || subtle.ConstantTimeCompare([]byte(token), app.token) != 1 {
		return nil, status.Error(codes.Unauthenticated, "unknown app or wrong token")
	}
	if !app.methods[method] {
		return nil, status.Errorf(codes.PermissionDenied, "app %q may not call %s", name, method)
	}
	return app, nil
}

func first(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}
