package rpcserver_test

import (
	"errors"
	"testing"

	red "github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/devkit/rpctest"
	"github.com/seckill/seckill/devkit/stocktest"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/redisx"
)

// TestStopClosesTheFenceProbe: degrade mode's Redis probe, a client of its own around
// go-zero's breaker, is closed by Stop once nothing serves; it was never closed, its
// connections left open by every stopped service (each test's among them).
func TestStopClosesTheFenceProbe(t *testing.T) {
	env := stocktest.New(t)
	db := testenv.MySQL(t)
	c := rpctest.Config(t, env.Keys, db.DSN)
	c.Degrade = "mysql"
	_, srv := rpctest.Start(t, c)
	probe := srv.Svc.Degrade.Probe
	if probe == nil || !redisx.Answers(ctx, probe) {
		t.Fatalf("degrade mode's probe %v does not answer", probe)
	}
	if n := probe.PoolStats().TotalConns; n == 0 {
		t.Fatal("the probe answered with no connection open")
	}
	srv.Stop()
	if err := probe.Ping(ctx).Err(); !errors.Is(err, red.ErrClosed) {
		t.Fatalf("after Stop the probe's PING: %v, want %v (%d connections open)", err, red.ErrClosed,
			probe.PoolStats().TotalConns)
	}
}
