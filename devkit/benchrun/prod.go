package benchrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/service"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/faults"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// The production profile's rows (Config.SkipProd): the same sales as the dev profile's
// "reservations" and "sold-out rejections", in the same round right after them, on deploy/'s
// own files run as make deploy-test runs them (devkit/faults StartCluster with Deploy: the
// overlay of devkit/faults/overlay.go), each row the production profile ÷ the dev profile.
const (
	labelProdReservations = "prod reservations"
	labelProdSoldOut      = "prod sold-out"
)

// The production profile's topologies (Config.ProdTopology).
const (
	// ProdOne is deploy/'s files on one process of each service (api, rpc, mq) and the
	// smallest Redis Cluster redis-cli creates, 3 masters without replicas: the same
	// processes as the dev profile's one, so that prod ÷ dev is the cost of the settings.
	// The default.
	ProdOne = "one"
	// ProdDeploy is deploy/multinode/topology.yaml's counts (2 rpc, 3 mq, 2 api, 3 masters x
	// 1 replica): on the bench's one machine it adds the topology's cost to the settings'.
	ProdDeploy = "deploy"
)

// oneInstance is t with one instance of each service and a Redis Cluster of 3 masters
// without replicas; the Kafka partitions stay t's.
func oneInstance(t faults.Topology) faults.Topology {
	t.Instances.Inventory, t.Instances.Writer, t.Instances.Gateway = 1, 1, 1
	t.Redis.Masters, t.Redis.ReplicasPerMaster = 3, 0
	return t
}

// prodTopology is the topology Config.ProdTopology names (nil: deploy/'s file as it is).
func prodTopology(c *Config) (*faults.Topology, error) {
	if c.ProdTopology != ProdOne {
		return nil, nil
	}
	t, err := faults.LoadTopology(filepath.Join(c.Dir, "deploy", "multinode", "topology.yaml"))
	if err != nil {
		return nil, err
	}
	t = oneInstance(t)
	return &t, nil
}

// prodAddrQuota is api's AddrLimit.ReserveQuota in the production profile: every buyer of the
// bench comes from 127.0.0.1, which deploy/'s 50 per second would refuse.
const prodAddrQuota = 1_000_000

// prodPrice is the unit price of the production profile's activities: the provider's
// notification carries the amount, and an amount of 0 is refused.
const prodPrice = 1999

// overlayChanges are what the overlay (devkit/faults/overlay.go) changes in deploy/'s files.
var overlayChanges = []string{
	"addresses: deploy/'s host names (redis-N, etcd-N, kafka-N, mysql-primary) become private servers on " +
		"loopback, and every instance listens (zRPC, HTTP, DevServer) on a free loopback port instead of 0.0.0.0",
	"data: the certificates deploy/tls/gen-certs.sh makes, Redis's, MariaDB's, etcd's and the broker's data in the " +
		"run's directory; database seckill becomes seckill_<suffix>, each MySQL user seckill_<name> " +
		"seckill_<name>_<suffix>",
	"Telemetry.Endpoint jaeger:4317 becomes the bench's in-process OTLP/gRPC receiver (devkit/faults " +
		"deploytrace.go: it decodes every export and keeps up to 500,000 spans; its CPU is the bench process's, on " +
		"the same two cores); Batcher and Sampler as deploy/ sets them",
	"secrets: fresh values in the environment (SECKILL_*), as compose passes them, SECKILL_PAYMENT_SECRET among " +
		"them so that the load generator pays through the provider's signed notification (Pay.BuyerConfirms false " +
		"as deploy/ has it)",
	"Kafka: the kfake broker in its own process with deploy/kafka's SCRAM users and ACLs, not a Kafka cluster",
	"logs: each process's stdout (deploy/'s console JSON lines) goes to a file of the run's directory",
}

// prodSystem is the production profile's system and what it runs with.
type prodSystem struct {
	sys      *faults.System
	sale     loadgen.Config // the load generator's sales on it (BaseURL: the first gateway)
	topology string         // Config.ProdTopology
	inv      rpcserver.Config
	w        mqserver.Config
	g        apiserver.Config
	changed  []string // the bench's own changes (benchChanges)
	detail   string   // the rows' text: the profile and every change to deploy/'s files
	profiled bool     // the CPU profiles of Config.ProdPprof are taken
}

// profiling reports whether this round's sales are profiled (Config.ProdPprof): the
// first round's, dev's and then prod's.
func (r *round) profiling() bool {
	return r.prod != nil && r.c.ProdPprof != "" && !r.prod.profiled
}

// benchChanges makes the bench's own changes to deploy/'s configs (after the overlay) and
// returns each in words: a change not returned here would be a silent override
// (TestBenchChangesAreListed). pprof: Config.ProdPprof is set.
func benchChanges(inv *rpcserver.Config, w *mqserver.Config, g *apiserver.Config, pprof bool) []string {
	var out []string
	for _, d := range []struct {
		svc string
		dev *service.DevServerConfig
	}{{"api", &g.DevServer}, {"rpc", &inv.DevServer}, {"mq", &w.DevServer}} {
		if pprof && !d.dev.EnablePprof {
			out = append(out, d.svc+" DevServer.EnablePprof false -> true: -prod-pprof takes CPU profiles of the "+
				"first round's sales from it (pprof costs nothing until a profile is asked for)")
			d.dev.EnablePprof = true
		}
	}
	if a := &g.AddrLimit; a.Enabled && a.ReserveQuota < prodAddrQuota {
		out = append(out, fmt.Sprintf("api AddrLimit.ReserveQuota %d -> %d per %d s: every buyer of the bench comes "+
			"from 127.0.0.1; the per-address count still runs (in memory, and in Redis: ReserveShared %v)",
			a.ReserveQuota, prodAddrQuota, a.Period, a.ReserveShared))
		a.ReserveQuota = prodAddrQuota
	}
	return out
}

// startProd starts deploy/'s system (devkit/faults StartCluster, Deploy) with the bench's
// changes, and readies the load generator's sales on its first gateway.
func startProd(ctx context.Context, c *Config, logf func(string, ...any)) (*prodSystem, error) {
	if os.Getenv(envPaymentSecret) == "" {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		if err := os.Setenv(envPaymentSecret, hex.EncodeToString(b[:])); err != nil {
			return nil, err
		}
	}
	topo, err := prodTopology(c)
	if err != nil {
		return nil, err
	}
	p := &prodSystem{topology: c.ProdTopology}
	o := faults.Options{Root: c.Dir, Log: c.Log, Install: c.Standalone.Install, Deploy: true, Topology: topo,
		Configure: func(inv *rpcserver.Config, w *mqserver.Config, g *apiserver.Config) {
			p.changed = benchChanges(inv, w, g, c.ProdPprof != "")
			p.inv, p.w, p.g = *inv, *w, *g
		}}
	logf("production profile: deploy/'s files through the deploy test's overlay, topology %s (building the mains)",
		c.ProdTopology)
	s, err := faults.StartCluster(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("the production profile's system: %w", err)
	}
	p.sys = s
	p.sale = loadgen.Config{BaseURL: s.APIURL, BuyerSecret: s.BuyerSecret, MerchantSecret: s.MerchantSecret,
		PaymentSecret: os.Getenv(envPaymentSecret), Price: prodPrice, Concurrency: c.Concurrency, MaxDuration: c.MaxDuration,
		Timeout: requestTimeout, PayFraction: 1, ExpiryGrace: 10 * time.Second, ReconcileWait: time.Minute,
		Progress: c.Log}
	p.detail = prodDetail(p.describe(), p.changed, p.topology, len(s.APIURLs))
	logf("production profile: gateways %s", strings.Join(s.APIURLs, ", "))
	return p, nil
}

// envPaymentSecret is the gateway's payment provider secret (api's config.EnvPaymentSecret).
const envPaymentSecret = "SECKILL_PAYMENT_SECRET"

func (p *prodSystem) close() { p.sys.Close() }

// describe is the production profile in words, from the configs as they run.
func (p *prodSystem) describe() string {
	t, inv, w, g := p.sys.Topology, p.inv, p.w, p.g
	tls := "zRPC in clear"
	if inv.TLS.CertFile != "" {
		tls = fmt.Sprintf("zRPC over TLS (deploy/tls/gen-certs.sh's certificate, checked by api and mq against its CA "+
			"as %s)", g.InventoryTLS.ServerName)
	}
	shed := "go-zero's load shedding on above them"
	if g.CpuThreshold == 0 && inv.CpuThreshold == 0 {
		shed = "no load shedder"
	}
	return fmt.Sprintf("deploy/multinode's files; topology: Redis Cluster %d masters x %d replicas "+
		"(deploy/redis/redis-cluster.conf), etcd discovery with auth, MariaDB with grants.sql's users, the events "+
		"topic in %d partitions, %d rpc, %d mq and %d api processes; go-zero Mode api %s, rpc %s, mq %s, "+
		"CpuThreshold api %d, rpc %d (%s); Telemetry on: Batcher %s, Sampler api %g, rpc %g, mq %g; "+
		"%s, app tokens (Auth %v); Redis ACL users %s, %s, %s; Kafka SASL %s as users %s, %s; RateLimit %d per %d s "+
		"per buyer (Shared %v), AddrLimit on (ReserveShared %v), Coalesce InFlight %d MaxBatch %d; Log %s %s at "+
		"level %s",
		t.Redis.Masters, t.Redis.ReplicasPerMaster, t.Kafka.Partitions, t.Instances.Inventory, t.Instances.Writer,
		t.Instances.Gateway, g.Mode, inv.Mode, w.Mode, g.CpuThreshold, inv.CpuThreshold, shed, g.Telemetry.Batcher,
		g.Telemetry.Sampler, inv.Telemetry.Sampler, w.Telemetry.Sampler, tls, inv.Auth, g.Redis.User,
		inv.StockRedis.User, w.Outbox.Redis.User, inv.Relay.Kafka.Mechanism, inv.Relay.Kafka.User, w.Kafka.User,
		g.RateLimit.Quota, g.RateLimit.Period, g.RateLimit.Shared, g.AddrLimit.ReserveShared, g.Coalesce.InFlight,
		g.Coalesce.MaxBatch, g.Log.Mode, g.Log.Encoding, g.Log.Level)
}

// prodDetail is the prod rows' text: the profile, then every setting changed from deploy/'s
// files (the overlay's, then the bench's own).
func prodDetail(profile string, changed []string, topology string, gateways int) string {
	all := append(append([]string{}, overlayChanges...), changed...)
	all = append(all, fmt.Sprintf("load: the load generator (in the bench's process) drives the first of the %d "+
		"gateways only, without a balancer", gateways))
	return "production profile: " + profile + ". " + topologyWhy[topology] + " Changed from deploy/'s files: " +
		strings.Join(all, "; ")
}

// topologyWhy says, in the rows' text, what the topology compares.
var topologyWhy = map[string]string{
	ProdOne: "Topology " + ProdOne + " (the default): topology.yaml's counts changed to 1 rpc, 1 mq and 1 api on a " +
		"Redis Cluster of 3 masters without replicas (the fewest redis-cli creates; every node on deploy/'s " +
		"redis-cluster.conf and ACL users), so that prod / dev compares deploy/'s settings on as many service " +
		"processes as the dev profile's one, not 7 processes and 6 Redis nodes against one on the same cores; " +
		"-prod-topology " + ProdDeploy + " runs topology.yaml's counts.",
	ProdDeploy: "Topology " + ProdDeploy + ": topology.yaml's counts as they are, every process on the bench's " +
		"machine, so that prod / dev is the settings' cost and the topology's together.",
}

// prodRow is the production profile's measurement beside the dev profile's of the same
// round (dev's Subject): ratio prod ÷ dev.
func prodRow(label, detail string, prod Measurement, prodErr string, dev Row) Row {
	row := Row{Label: label, Subject: prod, Baseline: dev.Subject, Detail: detail, Error: prodErr}
	if row.Error == "" && dev.Subject.Rate == 0 {
		row.Error = "no dev-profile measurement: " + dev.Error
	}
	row.compute()
	return row
}

// prodReservations is the dev profile's sale (dev, this round's "reservations") again, on
// the production profile's system.
func (r *round) prodReservations(ctx context.Context, dev Row) Row {
	m := Measurement{Name: "reservations via the gateway, production profile", Unit: "/s"}
	cfg := cpuCost(r.prod.sale)
	cfg.Buyers, cfg.Stock, cfg.UIDBase = r.c.Requests, r.n, r.uidBase
	r.logf("production profile: a sale of %d units to %d buyers, %d clients", r.n, r.n, r.c.Concurrency)
	var prof *profiling
	if r.profiling() {
		t := r.prod.sys.Deploy.Targets
		prof = profileRemote(ctx, r.c.ProdPprof, "prod", map[string]string{"api": t["api-1"], "rpc": t["rpc-1"],
			"mq": t["mq-1"]}, r.c.ProdPprofFor)
		r.prod.profiled = true
	}
	rep, err := loadgen.Run(ctx, cfg)
	if prof != nil {
		r.noteProfiles("the production profile's sale (api-1, rpc-1, mq-1)", prof)
	}
	if err != nil {
		return prodRow(labelProdReservations, r.prod.detail, m, "load generator: "+err.Error(), dev)
	}
	if v := saleVerdict(rep); !v.OK {
		*r.notes = append(*r.notes, fmt.Sprintf("the production profile's sale failed its checks: %s (pay outcomes %s)",
			strings.Join(v.Failed, "; "), loadgen.FormatCounts(rep.Pay.Codes)))
	}
	return prodRow(labelProdReservations, r.prod.detail, fromLoadgen(m, rep, loadgen.CodeOK), "", dev)
}

// prodRejections is the dev profile's sold-out rejections (dev, this round's row) again, on
// the production profile's system.
func (r *round) prodRejections(ctx context.Context, dev Row) Row {
	m := Measurement{Name: "sold-out rejections via the gateway, production profile", Unit: "/s"}
	r.logf("production profile: %d buyers for a sold-out activity, %d clients", r.n, r.c.Concurrency)
	aid, err := soldOutActivity(ctx, r.prod.sale, r.uidBase+2*r.n)
	if err != nil {
		return prodRow(labelProdSoldOut, r.prod.detail, m, err.Error(), dev)
	}
	cfg := cpuCost(r.prod.sale)
	cfg.ActivityID, cfg.Buyers, cfg.UIDBase = aid, r.c.Requests, r.uidBase+r.n
	rep, err := loadgen.Run(ctx, cfg)
	if err != nil {
		return prodRow(labelProdSoldOut, r.prod.detail, m, "load generator: "+err.Error(), dev)
	}
	return prodRow(labelProdSoldOut, r.prod.detail, fromLoadgen(m, rep, loadgen.CodeSoldOut), "", dev)
}
