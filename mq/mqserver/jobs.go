package mqserver

import (
	"context"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/service"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/internal/telemetry"
	"github.com/seckill/seckill/mq/internal/jobs"
	"github.com/seckill/seckill/mq/internal/svc"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

// newJobs returns the scheduled jobs when Jobs is enabled and the inventory service is
// configured (Inventory.Endpoints, Target or Etcd); otherwise none, and says so.
func newJobs(c Config, ctx *svc.ServiceContext) []service.Service {
	if !c.Jobs.Enabled {
		return nil
	}
	if len(c.Inventory.Endpoints) == 0 && c.Inventory.Target == "" && len(c.Inventory.Etcd.Hosts) == 0 {
		logx.Info("mq: no Inventory configured, the jobs (expiry, reconcile, warm-up) do not run")
		return nil
	}
	opts, err := c.InventoryTLS.Options()
	logx.Must(err)
	cli := zrpc.MustNewClient(inventoryConf(c), opts...)
	progress, err := newProgress(c)
	if err != nil {
		logx.Errorf("mq: the jobs do not run: %v", err)
		return nil
	}
	caughtUp := func(ctx context.Context) (bool, error) {
		ends, err := progress.Ends(ctx)
		if err != nil {
			return false, err
		}
		return progress.Reached(ctx, ends)
	}
	return jobs.New(c.Jobs, inventoryclient.NewInventory(cli), ctx.DB, caughtUp)
}

// inventoryConf is the jobs' client of the inventory service: NonBlock, since the mq service
// may start before it; go-zero's trace interceptors only when mq's Telemetry exports spans
// (DESIGN "Traces").
func inventoryConf(c Config) zrpc.RpcClientConf {
	cc := c.Inventory
	cc.NonBlock = true
	telemetry.Client(&cc, c.Telemetry)
	return cc
}
