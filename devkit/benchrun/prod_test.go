package benchrun

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/devkit/faults"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// deployConfigs loads deploy/multinode's three files as the services do, each ${SECKILL_…}
// they name set to a fresh secret.
func deployConfigs(t *testing.T) (rpcserver.Config, mqserver.Config, apiserver.Config) {
	t.Helper()
	dir := filepath.Join("..", "..", "deploy", "multinode")
	vars := map[string]bool{}
	for _, f := range []string{"rpc.yaml", "mq.yaml", "api.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\$\{(SECKILL_\w+)\}`).FindAllStringSubmatch(string(b), -1) {
			vars[m[1]] = true
		}
	}
	for _, k := range []string{"SECKILL_BUYER_SECRET", "SECKILL_MERCHANT_SECRET", envPaymentSecret} {
		vars[k] = true // the gateway's, from the environment only
	}
	for k := range vars {
		var b [32]byte
		_, _ = rand.Read(b[:])
		t.Setenv(k, hex.EncodeToString(b[:]))
	}
	inv, err := rpcserver.LoadConfig(filepath.Join(dir, "rpc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := mqserver.LoadConfig(filepath.Join(dir, "mq.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := apiserver.LoadConfig(filepath.Join(dir, "api.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return inv, w, g
}

// flatten is v's JSON as path -> value ("AddrLimit.ReserveQuota" -> "50").
func flatten(t *testing.T, prefix string, v any, into map[string]string) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, x any)
	walk = func(path string, x any) {
		if m, ok := x.(map[string]any); ok {
			for k, v := range m {
				walk(path+"."+k, v)
			}
			return
		}
		into[path] = fmt.Sprint(x)
	}
	walk(prefix, doc)
}

// diff is the paths whose values differ between two flattenings.
func diff(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if b[k] != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// TestBenchChangesAreListed: every field of deploy/'s configs that benchChanges changes is
// named in a line it returns, and every line names a changed field: the production profile
// never overrides a deploy setting silently, nor claims a change it did not make. And the
// change is what the bench's buyers, all from 127.0.0.1, need.
func TestBenchChangesAreListed(t *testing.T) {
	for _, pprof := range []bool{false, true} {
		t.Run(fmt.Sprintf("pprof %v", pprof), func(t *testing.T) { benchChangesAreListed(t, pprof) })
	}
}

func benchChangesAreListed(t *testing.T, pprof bool) {
	inv, w, g := deployConfigs(t)
	before := map[string]string{}
	flatten(t, "rpc", inv, before)
	flatten(t, "mq", w, before)
	flatten(t, "api", g, before)
	lines := benchChanges(&inv, &w, &g, pprof)
	after := map[string]string{}
	flatten(t, "rpc", inv, after)
	flatten(t, "mq", w, after)
	flatten(t, "api", g, after)
	changed := diff(before, after)
	if len(changed) == 0 || len(lines) == 0 {
		t.Fatalf("changed %q, listed %q: deploy/'s AddrLimit refuses the bench's buyers", changed, lines)
	}
	named := func(path string) bool { // "api.AddrLimit.ReserveQuota" is named as "api AddrLimit.ReserveQuota"
		svc, field, _ := strings.Cut(path, ".")
		return slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, svc+" "+field+" ") })
	}
	for _, p := range changed {
		if !named(p) {
			t.Errorf("%s changed (%s -> %s) but not listed in %q", p, before[p], after[p], lines)
		}
	}
	for _, l := range lines {
		if !slices.ContainsFunc(changed, func(p string) bool {
			svc, field, _ := strings.Cut(p, ".")
			return strings.HasPrefix(l, svc+" "+field+" ")
		}) {
			t.Errorf("listed %q, but no such field changed (changed: %q)", l, changed)
		}
	}
	if g.AddrLimit.Enabled && g.AddrLimit.ReserveQuota < prodAddrQuota {
		t.Errorf("AddrLimit.ReserveQuota %d: the bench's buyers would be refused", g.AddrLimit.ReserveQuota)
	}
	if pprof != (inv.DevServer.EnablePprof && w.DevServer.EnablePprof && g.DevServer.EnablePprof) {
		t.Errorf("pprof %v: DevServer.EnablePprof rpc %v, mq %v, api %v", pprof, inv.DevServer.EnablePprof,
			w.DevServer.EnablePprof, g.DevServer.EnablePprof)
	}
	if again := benchChanges(&inv, &w, &g, pprof); len(again) != 0 {
		t.Errorf("a second pass changed %q: the list must describe the file's values, not the bench's", again)
	}
}

// TestProdRows: a production-profile row is prod ÷ the dev profile's measurement of the same
// round, labelled for the table, with the profile's text; a failure on either side
// is the row's error; over rounds the row is the median round, every round's ratio kept.
func TestProdRows(t *testing.T) {
	dev := Row{Label: "reservations", Subject: Measurement{Name: "dev", Rate: 1000, Count: 10000}}
	row := prodRow(labelProdReservations, "the profile", Measurement{Name: "prod", Rate: 900, Count: 9000}, "", dev)
	if row.Label != "prod reservations" || row.Ratio != 0.9 || row.Baseline.Name != "dev" || row.Subject.Name != "prod" ||
		row.Detail != "the profile" || row.Error != "" {
		t.Fatalf("row %+v", row)
	}
	noDev := Row{Error: "load generator: refused"}
	if r := prodRow(labelProdSoldOut, "", Measurement{Rate: 5}, "", noDev); r.Error == "" ||
		!strings.Contains(r.Error, "refused") || r.Ratio != 0 || r.Label != "prod sold-out" {
		t.Errorf("without the dev measurement: %+v", r)
	}
	if r := prodRow(labelProdSoldOut, "", Measurement{}, "sell out an activity: no", dev); r.Error !=
		"sell out an activity: no" {
		t.Errorf("the production side failed: %+v", r)
	}
	// The echo failed but the dev sale was measured: the prod row stands.
	dev.Error = "echo: refused"
	if r := prodRow(labelProdReservations, "", Measurement{Rate: 500}, "", dev); r.Error != "" || r.Ratio != 0.5 {
		t.Errorf("beside a measured dev sale whose row has another error: %+v", r)
	}
	var rounds []Row
	for _, prod := range []float64{800, 400, 600} {
		rounds = append(rounds, prodRow(labelProdReservations, "", Measurement{Rate: prod}, "",
			Row{Subject: Measurement{Rate: 1000}}))
	}
	m := medianRow(rounds)
	if m.Ratio != 0.6 || !slices.Equal(m.Rounds, []float64{0.8, 0.4, 0.6}) || m.Subject.Rate != 600 {
		t.Errorf("median of rounds: %+v", m)
	}
}

// TestProdDetail: the rows' text says what the profile is, from the configs as they run
// (mode, shedding, Telemetry and its sampler, TLS, the Redis and Kafka users), and lists
// every change: the overlay's, the bench's own, and the load on one gateway.
func TestProdDetail(t *testing.T) {
	inv, w, g := deployConfigs(t)
	changed := benchChanges(&inv, &w, &g, false)
	g.Telemetry.Sampler, inv.Telemetry.Sampler, w.Telemetry.Sampler = 0.25, 0.5, 0.75
	sys := &faults.System{}
	sys.Topology.Redis.Masters, sys.Topology.Redis.ReplicasPerMaster = 3, 1
	sys.Topology.Instances.Inventory, sys.Topology.Instances.Writer, sys.Topology.Instances.Gateway = 2, 3, 2
	p := &prodSystem{sys: sys, inv: inv, w: w, g: g, changed: changed}
	text := prodDetail(p.describe(), changed, ProdDeploy, 2)
	shed := map[bool]string{true: "(no load shedder)", false: "(go-zero's load shedding on above them)"}
	p.g.CpuThreshold, p.inv.CpuThreshold = 900, 900
	if pro := p.describe(); !strings.Contains(pro, "CpuThreshold api 900, rpc 900 "+shed[false]) {
		t.Errorf("CpuThreshold 900 described as %q", pro)
	}
	for _, want := range []string{
		fmt.Sprintf("CpuThreshold api %d, rpc %d %s", g.CpuThreshold, inv.CpuThreshold,
			shed[g.CpuThreshold == 0 && inv.CpuThreshold == 0]),
		"Redis Cluster 3 masters x 1 replicas", "2 rpc, 3 mq and 2 api processes",
		"go-zero Mode api pro, rpc pro, mq pro", "Telemetry on: Batcher otlpgrpc, Sampler api 0.25, rpc 0.5, mq 0.75",
		"zRPC over TLS", "as inventory.rpc", "Redis ACL users api, rpc, mq", "Kafka SASL SCRAM-SHA-512 as users rpc, mq",
		"Log console json at level info", "the first of the 2 gateways only", "Topology deploy: topology.yaml's counts",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	for _, c := range append(slices.Clone(overlayChanges), changed...) {
		if !strings.Contains(text, c) {
			t.Errorf("the text lacks the change %q", c)
		}
	}
}

// TestProdTopology: the default production profile runs one process of each service on a
// Redis Cluster of 3 masters without replicas, from deploy/'s topology file otherwise; the
// deploy topology is the file's; the rows say which and why.
func TestProdTopology(t *testing.T) {
	c := Config{Dir: filepath.Join("..", "..")}
	c.defaults()
	if c.ProdTopology != ProdOne {
		t.Fatalf("default topology %q, want %q", c.ProdTopology, ProdOne)
	}
	file, err := faults.LoadTopology(filepath.Join(c.Dir, "deploy", "multinode", "topology.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	one, err := prodTopology(&c)
	if err != nil || one == nil {
		t.Fatalf("one: %v, %v", one, err)
	}
	want := file
	want.Instances.Inventory, want.Instances.Writer, want.Instances.Gateway = 1, 1, 1
	want.Redis.Masters, want.Redis.ReplicasPerMaster = 3, 0
	if *one != want {
		t.Errorf("one: %+v, want %+v", *one, want)
	}
	c.ProdTopology = ProdDeploy
	if d, err := prodTopology(&c); err != nil || d != nil {
		t.Errorf("deploy: %+v, %v; want nil (the file as it is)", d, err)
	}
	c.ProdTopology = "two"
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "two") {
		t.Errorf("topology two: %v", err)
	}
	for _, topo := range []string{ProdOne, ProdDeploy} {
		if text := prodDetail("p", nil, topo, 1); !strings.Contains(text, "Topology "+topo) {
			t.Errorf("%s: %s", topo, text)
		}
	}
}
