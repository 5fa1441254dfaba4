package config

import (
	"errors"
	"fmt"

	"github.com/zeromicro/go-zero/core/service"

	"github.com/seckill/seckill/internal/secrets"
)

// AppToken is one caller allowed on the inventory service when Auth is on: zRPC clients
// send App and Token (RpcClientConf.App, .Token) with every call.
type AppToken struct {
	App   string
	Token string // from the environment (${VAR} in the file), at least 32 random bytes
}

// Validate replaces zrpc.RpcServerConf's: the authenticator's Redis and key are filled in by
// rpcserver.New, and with Auth on, Apps lists every caller.
func (c Config) Validate() error {
	if c.OrderKey != "" || c.Mode == service.ProMode {
		if err := secrets.Check("OrderKey", c.OrderKey); err != nil {
			return fmt.Errorf("%w (SECKILL_ORDER_KEY)", err)
		}
	}
	if !c.Auth {
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
	}
	return nil
}
