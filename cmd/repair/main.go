// Command repair re-emits the events MySQL is missing for one activity (after, e.g., a
// crash between Redis and the relay), through the inventory service's Repair RPC, and
// prints the reconciliation before and after. The writer is idempotent, so a repeat is
// harmless; the service refuses when re-emitting would not make the books agree (MySQL
// changed behind the pipeline, or Redis broken): that needs a person, not this command.
//
//	go run -tags no_k8s ./cmd/repair -rpc 127.0.0.1:8080 -activity 42 [-dry-run]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/zrpc"

	"github.com/seckill/seckill/internal/rpctls"
	"github.com/seckill/seckill/rpc/inventoryclient"
)

func main() {
	endpoints := flag.String("rpc", "127.0.0.1:8080", "inventory service endpoints, comma-separated")
	aid := flag.Int64("activity", 0, "activity id (required)")
	dry := flag.Bool("dry-run", false, "only reconcile and print the report")
	timeout := flag.Duration("timeout", 30*time.Second, "deadline of each call")
	app := flag.String("app", "ops", "zRPC app name when the service authenticates (token from SECKILL_RPC_TOKEN)")
	ca := flag.String("ca", "", "CA certificate (PEM) of the service's TLS; empty: plaintext")
	flag.Parse()
	if *aid <= 0 {
		fmt.Fprintln(os.Stderr, "repair: -activity is required")
		flag.Usage()
		os.Exit(2)
	}
	logx.Disable()
	cc := zrpc.RpcClientConf{Endpoints: strings.Split(*endpoints, ","), Timeout: timeout.Milliseconds()}
	if tok := os.Getenv("SECKILL_RPC_TOKEN"); tok != "" {
		cc.App, cc.Token = *app, tok
	}
	if err := run(cc, rpctls.ClientConf{CAFile: *ca}, *aid, *dry, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "repair:", err)
		os.Exit(1)
	}
}

func run(cc zrpc.RpcClientConf, tc rpctls.ClientConf, aid int64, dry bool, timeout time.Duration) error {
	opts, err := tc.Options()
	if err != nil {
		return err
	}
	cli, err := zrpc.NewClient(cc, opts...)
	if err != nil {
		return err
	}
	inv := inventoryclient.NewInventory(cli)
	call := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), timeout)
	}

	ctx, cancel := call()
	before, err := inv.Reconcile(ctx, &inventoryclient.ReconcileReq{ActivityId: aid})
	cancel()
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	show("before", before)
	if dry {
		return nil
	}
	ctx, cancel = call()
	rep, err := inv.Repair(ctx, &inventoryclient.ReconcileReq{ActivityId: aid})
	cancel()
	if err != nil {
		return fmt.Errorf("repair refused or failed: %w", err)
	}
	fmt.Printf("re-emitted %d events for activity %d; the relay and the writer carry them to MySQL\n",
		rep.Reemitted, aid)
	return nil
}

func show(label string, r *inventoryclient.ReconcileResp) {
	b, _ := json.MarshalIndent(map[string]any{"activity_id": r.ActivityId, "status": r.Status, "redis": r.Redis,
		"db": r.Db, "in_flight": r.InFlight, "diffs": r.Diffs}, "", "  ")
	fmt.Printf("%s: %s\n", label, b)
}
