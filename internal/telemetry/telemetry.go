// Package telemetry decides, from a service's Telemetry, whether go-zero's trace middleware
// and interceptors run (docs/DESIGN.md "Traces"). Each service asks here once, where it
// builds its servers and clients, so no YAML has to say it by hand.
package telemetry

import (
	"github.com/zeromicro/go-zero/core/trace"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/zrpc"
)

// Exports reports whether c makes go-zero export spans: Telemetry not disabled and an
// Endpoint (go-zero's agent creates an exporter only for one). Without one a request's span
// goes nowhere, yet go-zero's rest TraceHandler and zRPC interceptors would still build it,
// with its attribute lists, on every request.
func Exports(c trace.Config) bool { return !c.Disabled && c.Endpoint != "" }

// Rest turns the rest server's trace middleware (Middlewares.Trace) off unless its own
// Telemetry exports; it never turns it on.
func Rest(c *rest.RestConf) {
	c.Middlewares.Trace = c.Middlewares.Trace && Exports(c.Telemetry)
}

// Server turns the zRPC server's trace interceptors off unless its own Telemetry exports.
func Server(c *zrpc.RpcServerConf) {
	c.Middlewares.Trace = c.Middlewares.Trace && Exports(c.Telemetry)
}

// Client turns a zRPC client's trace interceptors off unless t, the Telemetry of the
// service that owns the client, exports.
func Client(c *zrpc.RpcClientConf, t trace.Config) {
	c.Middlewares.Trace = c.Middlewares.Trace && Exports(t)
}
