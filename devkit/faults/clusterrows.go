package faults

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/internal/relay"
	"github.com/seckill/seckill/internal/stock"
)

// replicaLag is how far behind its master the replica promoted in the kill -9 row is: the
// master acknowledges writes for this long that the replica never receives.
const replicaLag = time.Second

// clusterBound bounds each wait of a cluster row (a promotion, the lag, the relay's
// pending entries).
const clusterBound = 60 * time.Second

// ClusterRows are the cluster table, in order (DESIGN.md "Scale-out").
func ClusterRows() []Row {
	var pendingAtKill []string // row 4: what the killed inventory service's relay held
	var shard []string         // rows 1, 2: where the hot activity lived and what happened
	return []Row{
		// A replica that missed its master's last second of writes is promoted: the
		// relays' rollback check (relay.Acker) sees the acknowledged change count above
		// the stock hash's and has the activity rebuilt from MySQL.
		{Name: "Redis Cluster: kill -9 the hot master, a lagging replica promoted", Expect: "BUSY",
			Burst: outlastTheKill, Inject: recording(&shard, killMaster), Check: notes(&shard)},
		{Name: "Redis Cluster: CLUSTER FAILOVER of the hot master", Inject: recording(&shard, failover),
			Check: notes(&shard)},
		{Name: "writers: kill -9 one of the group, start another",
			Inject: func(ctx context.Context, s *System, _ Scale) error {
				s.Writers[0].kill()
				time.Sleep(time.Second)
				return s.Writers[0].start(ctx)
			}}, // the group's lag 0 afterwards: runRow waits for it in every row
		{Name: "inventory services (etcd): kill -9 one mid-burst", Statuses: []int{200, 409, 503},
			Inject: recording(&pendingAtKill, killInventory), Check: func(ctx context.Context, s *System, aid int64) ([]string,
				[]string) {
				v, n := relayDrained(ctx, s, aid)
				return v, append(pendingAtKill, n...)
			}},
		{Name: "gateways: a cancel on one clears the sold-out mark on all", Check: soldOutCleared},
	}
}

// outlastTheKill spreads the buyers over twice the default window, so that the stock is
// still on sale when killMaster's kill lands (FaultAt, then a freeze, a cut and a second of
// lag): at the default rate the short scale's 50 units could sell out first (150 buyers over
// 6.8 s sell them in about 2.3 s, the kill lands at about 1.9 s), every later buyer is
// answered SOLD_OUT by the gateways' mark and none meets the outage (seen once in CI: no
// BUSY, "the fault did not bite").
func outlastTheKill(b *Burst) { b.Arrive *= 2 }

// recording is an Inject running f and keeping what it says in into.
func recording(into *[]string, f func(context.Context, *System) ([]string, error)) func(context.Context, *System,
	Scale) error {
	return func(ctx context.Context, s *System, _ Scale) error {
		var err error
		*into, err = f(ctx, s)
		return err
	}
}

// notes is a Check reporting n.
func notes(n *[]string) func(context.Context, *System, int64) ([]string, []string) {
	return func(context.Context, *System, int64) ([]string, []string) { return nil, *n }
}

// shardOf returns the indexes in s.Cluster.Nodes of the master serving activity aid's
// slot and of one of its replicas.
func shardOf(ctx context.Context, s *System, aid int64) (master, replica int, err error) {
	idx := map[string]int{}
	var live string
	for i, n := range s.Cluster.Nodes {
		idx[n.Addr] = i
		select {
		case <-n.Exited():
		default:
			live = n.Addr
		}
	}
	c := redis.NewClient(s.nodeOptions(live))
	defer c.Close()
	slot, err := c.ClusterKeySlot(ctx, stock.Keys{Prefix: s.invCfg.KeyPrefix}.Stock(aid)).Result()
	if err != nil {
		return 0, 0, err
	}
	nodes, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return 0, 0, err
	}
	masterID := ""
	ids := map[string]int{}
	replicas := map[string]int{} // master id -> a replica
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || strings.Contains(f[2], "fail") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		i, ok := idx[addr]
		if !ok {
			continue
		}
		ids[f[0]] = i
		if strings.Contains(f[2], "slave") {
			replicas[f[3]] = i
		}
		for _, r := range f[8:] {
			lo, hi, found := strings.Cut(r, "-")
			if !found {
				hi = lo
			}
			a, errA := strconv.ParseInt(lo, 10, 64)
			b, errB := strconv.ParseInt(hi, 10, 64)
			if errA == nil && errB == nil && a <= slot && slot <= b {
				masterID = f[0]
			}
		}
	}
	r, ok := replicas[masterID]
	if masterID == "" || !ok {
		return 0, 0, fmt.Errorf("slot %d: no master with a live replica in\n%s", slot, nodes)
	}
	return ids[masterID], r, nil
}

// killMaster takes the hot activity's master's replica a second behind (frozen, its
// replication link cut, while the master acknowledges writes), kills the master with -9,
// lets the replica be promoted and restarts the old master (it rejoins as a replica).
func killMaster(ctx context.Context, s *System) ([]string, error) {
	m, r, err := shardOf(ctx, s, s.Hot)
	if err != nil {
		return nil, err
	}
	master, replica := s.Cluster.Nodes[m], s.Cluster.Nodes[r]
	if err := replica.Freeze(); err != nil {
		return nil, err
	}
	thawed := false
	defer func() {
		if !thawed {
			_ = replica.Thaw()
		}
	}()
	// The replica holds what was sent before the cut; the master goes on acknowledging.
	if err := s.nodeDo(ctx, master.Addr, "CLIENT", "KILL", "TYPE", "replica"); err != nil {
		return nil, fmt.Errorf("cut the replication link: %w", err)
	}
	time.Sleep(replicaLag)
	master.Kill()
	killed := time.Now()
	thawed = true
	if err := replica.Thaw(); err != nil {
		return nil, err
	}
	how := "elected"
	if err := s.waitRoleFor(ctx, replica.Addr, "master", electionBound); err != nil {
		// No election came (seen in some runs): the operator's way, a takeover without votes.
		how = fmt.Sprintf("not elected within %s, then CLUSTER FAILOVER TAKEOVER", electionBound)
		if err := s.nodeDo(ctx, replica.Addr, "CLUSTER", "FAILOVER", "TAKEOVER"); err != nil {
			return nil, fmt.Errorf("takeover: %w", err)
		}
		if err := s.waitRoleFor(ctx, replica.Addr, "master", clusterBound); err != nil {
			log, _ := os.ReadFile(replica.Log)
			return nil, fmt.Errorf("%w; its log ends:\n%s", err, log[max(0, len(log)-3000):])
		}
	}
	promoted := time.Since(killed)
	if err := s.Cluster.Restart(ctx, m); err != nil {
		return nil, fmt.Errorf("restart the old master: %w", err)
	}
	if err := s.Cluster.WaitOK(ctx, clusterBound); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("activity %d on master %s; replica %s (%s behind) promoted %s after the kill -9 (%s)",
		s.Hot, master.Addr, replica.Addr, replicaLag, promoted.Round(100*time.Millisecond), how)}, nil
}

// failover runs CLUSTER FAILOVER on a replica of the hot activity's master and waits for
// it to be master.
func failover(ctx context.Context, s *System) ([]string, error) {
	m, r, err := shardOf(ctx, s, s.Hot)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := s.nodeDo(ctx, s.Cluster.Nodes[r].Addr, "CLUSTER", "FAILOVER"); err != nil {
		return nil, err
	}
	if err := s.waitRoleFor(ctx, s.Cluster.Nodes[r].Addr, "master", clusterBound); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("activity %d: replica %s took over from %s in %s", s.Hot, s.Cluster.Nodes[r].Addr,
		s.Cluster.Nodes[m].Addr, time.Since(start).Round(10*time.Millisecond))}, s.Cluster.WaitOK(ctx, clusterBound)
}

// electionBound is how long row 1 waits for the replica's own election before a takeover.
const electionBound = 20 * time.Second

// waitRoleFor waits, at most bound, until the node at addr reports role (ROLE's first
// element).
func (s *System) waitRoleFor(ctx context.Context, addr, role string, bound time.Duration) error {
	c := redis.NewClient(s.nodeOptions(addr))
	defer c.Close()
	deadline := time.Now().Add(bound)
	for {
		v, err := c.Do(ctx, "ROLE").Slice()
		if err == nil && len(v) > 0 && v[0] == role {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s not %s after %s (%v %v)", addr, role, bound, v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// killInventory kills the first inventory service with -9 and says what its relay held
// of the hot activity's outbox.
func killInventory(ctx context.Context, s *System) ([]string, error) {
	c := s.clusterClient()
	defer c.Close()
	pid := s.Inventories[0].pid()
	held := int64(0)
	stream := stock.Keys{Prefix: s.invCfg.KeyPrefix}.Events(s.Hot)
	s.Inventories[0].kill()
	// After the kill: nothing it read is acknowledged any more.
	ps, err := c.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: relay.Group, Start: "-", End: "+",
		Count: 100000}).Result()
	if err != nil && err != redis.Nil && !strings.Contains(err.Error(), "NOGROUP") {
		return nil, err
	}
	for _, p := range ps {
		if strings.Contains(p.Consumer, "-"+strconv.Itoa(pid)+"-") {
			held++
		}
	}
	return []string{fmt.Sprintf("%s killed holding %d of the hot activity's outbox entries",
		s.Inventories[0].name, held)}, nil
}

// relayDrained waits until no relay holds an entry of activity aid's outbox.
func relayDrained(ctx context.Context, s *System, aid int64) ([]string, []string) {
	c := s.clusterClient()
	defer c.Close()
	stream := stock.Keys{Prefix: s.invCfg.KeyPrefix}.Events(aid)
	start := time.Now()
	for {
		p, err := c.XPending(ctx, stream, relay.Group).Result()
		if err == nil && p.Count == 0 {
			return nil, []string{"relays' pending entries 0 after " + time.Since(start).Round(100*time.Millisecond).String() +
				" more"}
		}
		if time.Since(start) > clusterBound || ctx.Err() != nil {
			return []string{fmt.Sprintf("the relays still hold entries of activity %d after %s: %+v %v",
				aid, clusterBound, p, err)}, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *System) clusterClient() *redis.ClusterClient {
	o := s.nodeOptions("")
	return redis.NewClusterClient(&redis.ClusterOptions{Addrs: s.Cluster.Addrs(), DisableIdentity: true,
		Username: o.Username, Password: o.Password})
}

// nodeOptions are a client's of the Redis node at addr: logged in as deploy/'s admin on
// the deploy test's system (its default user is off), as nobody on the cluster table's.
func (s *System) nodeOptions(addr string) *redis.Options {
	o := &redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1}
	if s.Deploy != nil {
		o.Username, o.Password = "admin", adminPass()
	}
	return o
}

// nodeDo sends one command to the Redis node at addr (redisDo, logged in as nodeOptions).
func (s *System) nodeDo(ctx context.Context, addr string, args ...any) error {
	c := redis.NewClient(s.nodeOptions(addr))
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.Do(ctx, args...).Err()
}

// kafkaAdmin is how the suite's own Kafka clients log in: deploy/kafka's admin (the
// superuser) on the deploy test's broker, as nobody on the cluster table's.
func (s *System) kafkaAdmin() kafkax.Auth {
	if s.Deploy == nil {
		return kafkax.Auth{}
	}
	return kafkax.Auth{Mechanism: "SCRAM-SHA-512", User: "admin", Pass: os.Getenv("SECKILL_KAFKA_ADMIN_PASSWORD")}
}

// markCleared is how soon, after a cancel on one gateway, the returned unit must sell on
// another: well inside the sold-out mark's TTL (edge.Conf.SoldOutTTL, 1 s), so that it
// was the stock-back message that cleared the mark, not its expiry.
const markCleared = 500 * time.Millisecond

// soldOutCleared sells a one-unit activity out through the first gateway, has both mark it
// sold out, cancels through one and buys again through the other, both ways round: each
// time the unit must sell within markCleared of the cancel.
func soldOutCleared(ctx context.Context, s *System, _ int64) (violations, notes []string) {
	ga, gb := newClient(s.APIURLs[0]), newClient(s.APIURLs[1])
	mt, err := authtoken.Merchant(s.MerchantSecret, 1, time.Hour)
	if err != nil {
		return []string{err.Error()}, nil
	}
	probe := Burst{Stock: 1, Limit: 1, PayTimeout: 600}
	aid, err := (&merchant{c: ga, token: mt}).create(ctx, "fault: sold-out marks", probe)
	if err != nil {
		return []string{"create the probe activity: " + err.Error()}, nil
	}
	t := newTally()
	try := 0
	reserve := func(c *client, uid int64) (string, string) {
		token, _ := authtoken.Buyer(s.BuyerSecret, uid, time.Hour)
		try++
		var r apiclient.Reservation
		ok, code := retry(ctx, t, c.reserve(ctx, token, aid, fmt.Sprintf("probe-%04d", try), &r))
		if ok {
			return r.OrderNo, ""
		}
		return "", code
	}
	cancel := func(c *client, uid int64, no string) bool {
		token, _ := authtoken.Buyer(s.BuyerSecret, uid, time.Hour)
		ok, _ := retry(ctx, t, func() (string, error) {
			_, m, err := c.Cancel(ctx, token, no)
			return m.Code, err
		})
		return ok
	}
	uid := aid * 1_000_000
	holder, from := uid+1, ga
	no, code := reserve(ga, holder)
	if no == "" {
		return []string{"probe: the only unit did not sell: " + code}, nil
	}
	for round, to := range []*client{gb, ga} {
		waiter := uid + 10 + int64(round)
		// Both gateways mark the activity sold out.
		for _, c := range []*client{ga, gb} {
			if _, code := reserve(c, uid+20+int64(round)); code != apiclient.CodeSoldOut {
				return []string{fmt.Sprintf("probe: %s answered %q, not SOLD_OUT", c.Base(), code)}, nil
			}
		}
		if !cancel(from, holder, no) {
			return []string{"probe: the cancel was not answered"}, nil
		}
		cancelled := time.Now()
		for no = ""; no == "" && time.Since(cancelled) < 3*time.Second; time.Sleep(20 * time.Millisecond) {
			no, _ = reserve(to, waiter)
		}
		took := time.Since(cancelled)
		notes = append(notes, fmt.Sprintf("cancelled on %s, sold again on %s %s later", from.Base(), to.Base(),
			took.Round(time.Millisecond)))
		if no == "" || took > markCleared {
			violations = append(violations, fmt.Sprintf("the unit cancelled on %s sold on %s only after %s (bound %s)",
				from.Base(), to.Base(), took.Round(time.Millisecond), markCleared))
		}
		holder, from = waiter, to
	}
	return violations, notes
}
