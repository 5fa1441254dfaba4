package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/seckill/seckill/devkit/apiclient"
)

// The fault rows of make deploy-test: the fault suite's rows (runRow: a fresh activity, a
// burst of buyers through both gateways retrying BUSY and transport errors with the same
// request id, the fault in it, the drain, the audit) on deploy/'s topology, each counting
// oversold, lost, duplicated and told no (all must be 0). The cluster table's faults
// (clusterrows.go) are reused where they exist.

// gatewayDown is how long the killed gateway stays down before its restart.
const gatewayDown = 2 * time.Second

// cutInventory is the index in s.Inventories of the instance the partition row cuts off
// from Redis (rpc-2; killInventory kills rpc-1).
const cutInventory = 1

// deployRows are the fault rows, in order; p is the run's Prometheus (the writer's row
// waits for its alert).
func deployRows(p *prometheus, brk string) []Row {
	// A wrong answer is none of these: 429 is deploy's AddrLimit (every buyer here comes from
	// one address, the suite's), 503 BUSY, 409 SOLD_OUT or LIMIT_EXCEEDED.
	answers := []int{200, 409, 429, 503}
	moved := new(atomic.Int64)
	var held, shard, cut []string
	var cutFailed float64 // the cut instance's zRPC answers other than OK during the cut
	var alert alertTimes
	return []Row{
		{Name: "fault: kill -9 a gateway mid-sale, restarted (its buyers dial the other)",
			Burst: func(b *Burst) {
				providerPays(b)
				b.Arrive = 2 * time.Second // denser: more requests in flight at the kill
				if brk != "failover" {
					b.Failover = moved
				}
			},
			Inject: func(ctx context.Context, s *System, _ Scale) error {
				g := s.Gateways[len(s.Gateways)-1]
				g.kill()
				time.Sleep(gatewayDown)
				return g.start(ctx)
			},
			Check: func(context.Context, *System, int64) ([]string, []string) {
				n := moved.Swap(0)
				if n == 0 {
					return []string{"no buyer's connection moved to the other gateway: the kill did not bite"}, nil
				}
				return nil, []string{fmt.Sprintf("%d connections the killed gateway refused dialled the other "+
					"(TRANSPORT answers: requests in flight at the kill, retried)", n)}
			}},
		{Name: "fault: kill -9 an inventory service mid-sale, restarted", Burst: providerPays, Statuses: answers,
			Inject: func(ctx context.Context, s *System, _ Scale) error {
				var err error
				if held, err = killInventory(ctx, s); err != nil {
					return err
				}
				time.Sleep(time.Second)
				return s.Inventories[0].start(ctx)
			},
			Check: func(ctx context.Context, s *System, aid int64) ([]string, []string) {
				v, n := relayDrained(ctx, s, aid)
				return v, append(held, n...)
			}},
		{Name: "fault: kill -9 a writer mid-sale, restarted; SeckillTargetDown fires and clears", Burst: providerPays,
			Inject: func(ctx context.Context, s *System, _ Scale) error { return alert.killWriter(ctx, s, p) },
			Check: func(ctx context.Context, s *System, aid int64) ([]string, []string) {
				// The writers' lag 0 before this check: runRow waits for it in every row.
				return alert.cleared(ctx, p), []string{alert.String()}
			}},
		{Name: "fault: the sale's Redis master killed -9, its replica (1 s behind) promoted", Expect: apiclient.CodeBusy,
			Burst: func(b *Burst) { providerPays(b); outlastTheKill(b) }, Inject: recording(&shard, killMaster),
			Check: notes(&shard)},
		{Name: "fault: rpc-2 cut off from Redis (its host's Redis link taken down), healed",
			Expect: apiclient.CodeBusy, Burst: providerPays, Statuses: answers,
			Inject: func(ctx context.Context, s *System, sc Scale) error {
				var err error
				cut, cutFailed, err = s.partition(ctx, sc.RedisDown, brk == "partition")
				return err
			},
			Check: func(ctx context.Context, s *System, aid int64) ([]string, []string) {
				v, n := relayDrained(ctx, s, aid)
				if cutFailed == 0 {
					v = append(v, "the cut instance answered no call with an error code during the cut: "+
						"none was routed to it, or the cut did not bite")
				}
				return v, append(cut, n...)
			}},
	}
}

// faultRows runs the fault rows (those cfg.Only selects) and returns a check per row.
func (s *System) faultRows(ctx context.Context, p *prometheus, cfg Config, log io.Writer) []Check {
	var out []Check
	for _, row := range deployRows(p, s.Deploy.Break) {
		if !selected(row.Name, cfg.Only) {
			continue
		}
		fmt.Fprintf(log, "row: %s\n", row.Name)
		r := runRow(ctx, s, row, cfg.Scale)
		var codes []string
		for c, n := range r.Codes {
			codes = append(codes, fmt.Sprintf("%s %d", c, n))
		}
		sort.Strings(codes)
		out = append(out, check(row.Name, r.Status == Pass,
			"acknowledged %d, oversold %d, lost %d, duplicated %d, told no %d; BUSY for %s, consistent %v in %s; "+
				"answers besides 200: %s%s", r.Acknowledged, r.Oversold, r.Lost, r.Duplicated, r.ToldNo,
			r.Busy.Round(100*time.Millisecond), r.Consistent, r.TimeToConsistent.Round(100*time.Millisecond),
			orNone(codes), reasons(r.Reasons)))
		fmt.Fprintf(log, "  %s\n", r.Status)
		if ctx.Err() != nil {
			break
		}
	}
	return out
}

// failoverDial is the dial of the client of gateway i of urls behind a load balancer: to
// gateway i, and when it refuses the connection (killed) to the next that accepts one,
// counting each move in moved.
func failoverDial(urls []string, i int, moved *atomic.Int64) func(ctx context.Context, network, addr string) (
	net.Conn, error) {
	hosts := make([]string, 0, len(urls))
	for k := range urls {
		u, err := url.Parse(urls[(i+k)%len(urls)])
		if err == nil {
			hosts = append(hosts, u.Host)
		}
	}
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		var errs []error
		for k, h := range hosts {
			c, err := d.DialContext(ctx, network, h)
			if err == nil {
				if k > 0 {
					moved.Add(1)
				}
				return c, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
}

// alertTimes is what the writer's row saw of SeckillTargetDown.
type alertTimes struct {
	inst          string
	fired, clears time.Duration
	restarted     time.Time
}

// killWriter kills the first writer with -9, waits for SeckillTargetDown to fire for its
// instance (deploy's rule: for 1m) and starts it again.
func (a *alertTimes) killWriter(ctx context.Context, s *System, p *prometheus) error {
	c := s.Writers[0]
	a.inst = s.Deploy.Targets[c.name]
	c.kill()
	killed := time.Now()
	fireErr := p.waitAlert(ctx, "SeckillTargetDown", a.inst, true)
	a.fired = time.Since(killed)
	if err := c.start(ctx); err != nil {
		return errors.Join(fireErr, err)
	}
	a.restarted = time.Now()
	return fireErr
}

// cleared waits for SeckillTargetDown to clear after the restart; a violation if not.
func (a *alertTimes) cleared(ctx context.Context, p *prometheus) []string {
	err := p.waitAlert(ctx, "SeckillTargetDown", a.inst, false)
	a.clears = time.Since(a.restarted)
	if err != nil {
		return []string{err.Error()}
	}
	return nil
}

func (a *alertTimes) String() string {
	return fmt.Sprintf("SeckillTargetDown for %s (mq-1) fired %s after the kill, cleared %s after the restart",
		a.inst, a.fired.Round(time.Second), a.clears.Round(time.Second))
}

// partition takes the cut instance's link to the Redis network down for d (the root end
// of its host's second veth, devenv.Hosts.CutRedis: its host sees the carrier lost, its
// packets to Redis go nowhere, so its connections to Redis get no answer and new ones no
// SYN-ACK), then up again. Its service link stays up: its zRPC server, etcd lease and Kafka
// producer go on, and the gateways keep routing to it. noop (-break partition) takes no link
// down. It returns notes: the link, and how the cut instance answered its callers meanwhile
// (its zRPC codes other than OK), and how many such answers it gave.
func (s *System) partition(ctx context.Context, d time.Duration, noop bool) ([]string, float64, error) {
	c := s.Inventories[cutInventory]
	if s.hosts == nil {
		return nil, 0, errors.New("the partition row needs the hosts (Options.NetNS): a link to take down")
	}
	link := s.hosts.RedisLink(c.name)
	metrics := s.Deploy.Targets[c.name]
	before, err := rpcCodes(ctx, metrics)
	if err != nil {
		return nil, 0, err
	}
	how := "taken down"
	if noop {
		how = "left up (-break partition)"
	} else if err := s.hosts.CutRedis(c.name, true); err != nil {
		return nil, 0, err
	}
	var once sync.Once
	heal := func() error {
		var err error
		once.Do(func() { err = s.hosts.CutRedis(c.name, false) })
		return err
	}
	s.closers = append(s.closers, func() { _ = heal() }) // should the run stop during the cut
	time.Sleep(d)
	if err := heal(); err != nil {
		return nil, 0, err
	}
	after, err := rpcCodes(ctx, metrics)
	if err != nil {
		return nil, 0, err
	}
	var failed []string
	total := 0.0
	for code, n := range after {
		if code != "OK" && n > before[code] {
			failed = append(failed, fmt.Sprintf("%s %g", code, n-before[code]))
			total += n - before[code]
		}
	}
	sort.Strings(failed)
	if len(failed) == 0 {
		failed = []string{"none"}
	}
	return []string{fmt.Sprintf("%s (host %s) cut from Redis for %s: its Redis link %s %s, its service link up; "+
		"its zRPC answers other than OK meanwhile: %s", c.name, s.hostIP(c.name), d, link, how,
		strings.Join(failed, ", "))}, total, nil
}

// rpcCodes reads an inventory service's zRPC answers by code, summed over its methods
// (go-zero's rpc_server_requests_code_total) from its metrics endpoint at addr.
func rpcCodes(ctx context.Context, addr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rpc_server_requests_code_total{") {
			continue
		}
		_, rest, _ := strings.Cut(line, `code="`)
		code, _, _ := strings.Cut(rest, `"`)
		if n, err := strconv.ParseUint(code, 10, 32); err == nil { // go-zero labels the number
			code = codes.Code(n).String()
		}
		f := strings.Fields(line)
		if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil {
			out[code] += v
		}
	}
	return out, sc.Err()
}

// breakAck (-break ack) has the inventory services answer a change once Redis holds it
// (Relay.Acknowledge redis), not once its event is in Kafka: the Redis master's row loses
// what the killed master acknowledged and its replica never received.
const breakAck = "ack"

// providerPays makes a burst's orders paid by the payment provider's signed notification
// (deploy/'s Pay.BuyerConfirms is false: the buyer's own pay is 403 FORBIDDEN), signed with
// the gateways' SECKILL_PAYMENT_SECRET.
func providerPays(b *Burst) { b.PaymentSecret = []byte(os.Getenv("SECKILL_PAYMENT_SECRET")) }
