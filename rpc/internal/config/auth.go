package config

import (
	"errors"
	"fmt"

	"github.com/zeromicro/go-zero/core/service"

	"github.com/seckill/seckill/internal/secrets"
	"github.com/seckill/seckill/rpc/inventory"
)

// AppToken is one caller allowed on the inventory service when Auth is on: zRPC clients
// send App and Token (RpcClientConf.App, .Token) with every call.
type AppToken struct {
	App   string
	Token string // from the environment (${VAR} in the file), at least 32 random bytes
	// Methods are the RPCs the app may call (names as in rpc/inventory.proto); any other
	// call is PermissionDenied.
	Methods []string
	// AllActivities: the app calls the merchant RPCs of its Methods for no merchant
	// (merchant_id 0) on every activity (the jobs, the operators); without it each such
	// call names its merchant and reaches only that merchant's activities.
	AllActivities bool `json:",optional"`
}

// Validate replaces zrpc.RpcServerConf's (which go-zero's loader calls): the service
// authenticates its callers itself (rpcserver), from Apps, so the file names no Redis for
// go-zero's authenticator. Auth is required in pro mode; with Auth on, Apps lists every
// caller with its token and methods.
func (c Config) Validate() error {
	if c.OrderKey != "" || c.Mode == service.ProMode {
		if err := secrets.Check("OrderKey", c.OrderKey); err != nil {
			return fmt.Errorf("%w (SECKILL_ORDER_KEY)", err)
		}
	}
	if err := c.TLS.Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if !c.Auth {
		if c.Mode == service.ProMode {
			return errors.New("config: Auth must be on in pro mode")
		}
		return nil
	}
	if len(c.Apps) == 0 {
		return errors.New("config: Auth is on but Apps lists no caller")
	}
	seen := map[string]bool{}
	for i, a := range c.Apps {
		if a.App == "" {
			return fmt.Errorf("config: Apps[%d] has no App", i)
		}
		if seen[a.App] {
			return fmt.Errorf("config: Apps: %q twice", a.App)
		}
		seen[a.App] = true
		if err := secrets.Check(fmt.Sprintf("Apps[%s].Token", a.App), a.Token); err != nil {
			return err
		}
		if err := checkMethods(a); err != nil {
			return err
		}
	}
	return nil
}

// checkMethods refuses an app without methods or with a name the service does not have.
func checkMethods(a AppToken) error {
	if len(a.Methods) == 0 {
		return fmt.Errorf("config: Apps[%s] lists no Methods", a.App)
	}
	for _, m := range a.Methods {
		if FullMethod(m) == "" {
			return fmt.Errorf("config: Apps[%s].Methods: no RPC %q", a.App, m)
		}
	}
	return nil
}

// FullMethod is the gRPC full method name of the inventory RPC name, or "" if there is none.
func FullMethod(name string) string {
	d := inventory.Inventory_ServiceDesc
	for _, m := range d.Methods {
		if m.MethodName == name {
			return "/" + d.ServiceName + "/" + name
		}
	}
	for _, s := range d.Streams { // ExportOrders
		if s.StreamName == name {
			return "/" + d.ServiceName + "/" + name
		}
	}
	return ""
}
