package reserve

import (
	"fmt"

	"github.com/zeromicro/go-zero/rest"
)

// Mount registers srv's routes with register (the generated handler.RegisterHandlers) and
// takes the reservation route's method and path from what it registered: the one route
// Route was mounted on. go-zero applies a route's middlewares as its group is given to
// srv.AddRoutes, and srv.Routes lists the groups in that order, so the route is the one at
// the count of routes registered when Route was applied. An error: Route was mounted on no
// route or on several. Call it once, before the server starts.
func (p *Pipeline) Mount(srv *rest.Server, register func(*rest.Server)) error {
	p.mounts = nil
	p.routes = func() int { return len(srv.Routes()) }
	register(srv)
	p.routes = nil
	if len(p.mounts) != 1 {
		return fmt.Errorf("reserve: the pipeline's Route is mounted on %d routes, not 1", len(p.mounts))
	}
	all := srv.Routes()
	if p.mounts[0] >= len(all) {
		return fmt.Errorf("reserve: the route Route was mounted on was not registered")
	}
	p.method, p.path = all[p.mounts[0]].Method, all[p.mounts[0]].Path
	return nil
}

// mounted records that go-zero applied Route to a route: the one it registers next.
func (p *Pipeline) mounted() {
	if p.routes != nil {
		p.mounts = append(p.mounts, p.routes())
	}
}

// Path is the reservation route's method and path, once mounted.
func (p *Pipeline) Path() (method, path string) { return p.method, p.path }
