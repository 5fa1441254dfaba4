package devenv

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// RedisCluster is a private Redis Cluster of masters without replicas, for tests and
// demos of the multi-node key layout (every key of an activity in one hash slot).
type RedisCluster struct {
	Nodes []*Proc
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
	if n < 3 {
		return nil, fmt.Errorf("a redis cluster needs at least 3 masters, got %d", n)
	}
	cli, err := LookPath("redis-cli")
	if err != nil {
		return nil, notInstalled(RedisPackage, "redis-cli not found")
	}
	c := &RedisCluster{}
	for i := 0; i < n; i++ {
		p, err := startRedis(ctx, "redis-cluster", func(dir string) []string {
			return []string{"--appendonly", "no", "--cluster-enabled", "yes",
				"--cluster-config-file", filepath.Join(dir, "nodes.conf"), "--cluster-node-timeout", "5000"}
		})
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, p)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis-cli --cluster create: %v\n%s", err, out)
	}
	host, port, _ := strings.Cut(c.Nodes[0].Addr, ":")
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _ := exec.CommandContext(ctx, cli, "-h", host, "-p", port, "cluster", "info").Output()
		if strings.Contains(string(out), "cluster_state:ok") {
			return c, nil
		}
		if time.Now().After(deadline) {
			_ = c.Close()
			return nil, fmt.Errorf("redis cluster not ok after 20s:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
