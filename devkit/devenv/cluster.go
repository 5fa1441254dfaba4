package devenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// RedisCluster is a private Redis Cluster: masters, optionally with replicas, for tests and
// the fault suite's cluster table (every key of an activity in one hash slot).
type RedisCluster struct {
	Nodes []*Proc
	auth  string // the admin's password for redis-cli (ClusterSpec.AdminPass)
	user  string
}

// cli is redis-cli with args, logged in as the cluster's admin when it has one (the
// password in the environment, REDISCLI_AUTH, not on the command line).
func (c *RedisCluster) cli(ctx context.Context, bin string, args ...string) *exec.Cmd {
	if c.user != "" {
		args = append([]string{"--user", c.user, "--no-auth-warning"}, args...)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	if c.auth != "" {
		cmd.Env = append(os.Environ(), "REDISCLI_AUTH="+c.auth)
	}
	return cmd
}

// Addrs returns the nodes' addresses.
func (c *RedisCluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// Close stops every node and removes their directories.
func (c *RedisCluster) Close() error {
	var errs []error
	for _, n := range c.Nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}

// StartRedisCluster runs n cluster-enabled redis-servers on free loopback ports, joins
// them with `redis-cli --cluster create` (slots split evenly) and waits until the cluster
// reports ok.
func StartRedisCluster(ctx context.Context, n int) (*RedisCluster, error) {
	return StartRedisClusterOf(ctx, ClusterSpec{Masters: n})
}

// ClusterSpec is the shape of a private Redis Cluster.
type ClusterSpec struct {
	Masters  int
	Replicas int // per master
	// Conf is a redis.conf every node starts from (e.g. deploy/redis/redis-cluster.conf);
	// port, bind, directory and the cluster config file are replaced. "": no AOF, 5 s
	// node timeout.
	Conf string
	// Args are appended to every node's command line (deploy's ACL users: --user ...).
	Args []string
	// AdminUser and AdminPass log redis-cli in (create, CLUSTER INFO) where Args turn the
	// default user off.
	AdminUser, AdminPass string
	// Host is the address every node binds and announces to clients and to the other nodes
	// (cluster-announce-ip); "": loopback.
	Host string
}

// StartRedisClusterOf runs Masters x (1 + Replicas) cluster-enabled redis-servers on free
// ports of Host, joins them with `redis-cli --cluster create --cluster-replicas` and waits
// until every node reports the cluster ok.
func StartRedisClusterOf(ctx context.Context, spec ClusterSpec) (*RedisCluster, error) {
	n := spec.Masters * (1 + spec.Replicas)
	if spec.Masters < 3 {
		return nil, fmt.Errorf("a redis cluster needs at least 3 masters, got %d", spec.Masters)
	}
	cli, err := LookPath("redis-cli")
	if err != nil {
		return nil, notInstalled(RedisPackage, "redis-cli not found")
	}
	c := &RedisCluster{user: spec.AdminUser, auth: spec.AdminPass}
	for i := 0; i < n; i++ {
		p, err := startRedis(ctx, "redis-cluster", spec.Conf, spec.Host, func(dir string) []string {
			args := []string{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf")}
			if spec.Host != "" {
				args = append(args, "--cluster-announce-ip", spec.Host)
			}
			if spec.Conf == "" {
				args = append(args, "--appendonly", "no", "--cluster-node-timeout", "5000")
			}
			return append(args, spec.Args...)
		})
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, p)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(spec.Replicas), "--cluster-yes")
	if out, err := c.cli(ctx, cli, args...).CombinedOutput(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	if err := c.WaitOK(ctx, 20*time.Second); err != nil {
		_ = c.Close()
		return nil, err
	}
	if err := c.attachReplicas(ctx, cli, spec.Replicas, 20*time.Second); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// attachReplicas waits until every master that holds slots has replicas replicas. redis-cli
// --cluster create ignores a CLUSTER REPLICATE that fails because the replica has not yet
// heard of its master (a slow join on a loaded box): the node stays a master without slots
// and the cluster still reports ok. Such a node is made a replica of a master short of
// replicas here, as redis-cli would have.
func (c *RedisCluster) attachReplicas(ctx context.Context, cli string, replicas int, bound time.Duration) error {
	if replicas == 0 {
		return nil
	}
	host, port, _ := strings.Cut(c.Nodes[0].Addr, ":")
	deadline := time.Now().Add(bound)
	for {
		out, err := c.cli(ctx, cli, "-h", host, "-p", port, "cluster", "nodes").Output()
		if err == nil {
			short, spare := clusterShortOfReplicas(string(out), replicas)
			if len(short) == 0 {
				return nil
			}
			for i, addr := range spare {
				if i >= len(short) {
					break
				}
				h, p, _ := strings.Cut(addr, ":")
				_ = c.cli(ctx, cli, "-h", h, "-p", p, "cluster", "replicate", short[i]).Run()
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("redis cluster: masters without %d replicas after %s:\n%s", replicas, bound, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// clusterShortOfReplicas reads CLUSTER NODES: the ids of the masters holding slots with fewer
// than want replicas (one entry per replica missing), and the addresses of the masters
// holding none (nodes a failed CLUSTER REPLICATE left behind).
func clusterShortOfReplicas(nodes string, want int) (short, spare []string) {
	type node struct {
		id, addr string
		slots    bool
	}
	var masters []node
	count := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(nodes), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || strings.Contains(f[2], "fail") {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		switch {
		case strings.Contains(f[2], "slave"):
			count[f[3]]++
		case strings.Contains(f[2], "master"):
			masters = append(masters, node{id: f[0], addr: addr, slots: len(f) > 8})
		}
	}
	for _, m := range masters {
		if !m.slots {
			spare = append(spare, m.addr)
			continue
		}
		for range want - count[m.id] {
			short = append(short, m.id)
		}
	}
	return short, spare
}

// WaitOK waits until every running node reports cluster_state:ok, for at most bound.
func (c *RedisCluster) WaitOK(ctx context.Context, bound time.Duration) error {
	cli, err := LookPath("redis-cli")
	if err != nil {
		return notInstalled(RedisPackage, "redis-cli not found")
	}
	deadline := time.Now().Add(bound)
	for _, n := range c.Nodes {
		select {
		case <-n.Exited():
			continue
		default:
		}
		host, port, _ := strings.Cut(n.Addr, ":")
		for {
			out, _ := c.cli(ctx, cli, "-h", host, "-p", port, "cluster", "info").Output()
			if strings.Contains(string(out), "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("redis cluster node %s not ok after %s:\n%s", n.Addr, bound, out)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}

// Restart starts node i again after it exited (kill -9), on its port and directory: it
// rejoins the cluster with its nodes.conf (a failed-over master comes back as a replica).
func (c *RedisCluster) Restart(ctx context.Context, i int) error {
	p, err := RestartRedis(ctx, c.Nodes[i])
	if err != nil {
		return err
	}
	c.Nodes[i] = p
	return nil
}
