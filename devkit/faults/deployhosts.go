package faults

import (
	"fmt"
	"net"
	"strconv"

	"github.com/seckill/seckill/devkit/devenv"
)

// The deploy test's hosts (Options.NetNS, make deploy-test): each service instance runs on
// a host of its own, a network namespace named after the instance (rpc-1, api-2, ...) with
// its own address on the service network, and a second link to the Redis network
// (devenv.Hosts). The shared servers run in this machine's namespace: the Redis nodes on
// the Redis network's bridge address, MariaDB, etcd, the broker and the trace receiver on
// the service network's; the suite itself (buyers, Prometheus, the checks) reaches every
// host through the bridges. Without NetNS every process shares the loopback.

// startHosts makes a host per instance of the topology.
func (s *System) startHosts(o Options) error {
	t := s.Topology.Instances
	var names []string
	for _, k := range []struct {
		kind string
		n    int
	}{{"rpc", t.Inventory}, {"mq", t.Writer}, {"api", t.Gateway}} {
		for i := range k.n {
			names = append(names, fmt.Sprintf("%s-%d", k.kind, i+1))
		}
	}
	h, err := devenv.StartHosts(names)
	if err != nil {
		return fmt.Errorf("the deploy test's hosts (network namespaces): %w", err)
	}
	s.hosts = h
	s.closers = append(s.closers, h.Close)
	fmt.Fprintf(o.Log, "hosts: %d network namespaces on %s/24 (bridge %s), Redis network %s/24\n", len(names),
		h.ServiceIP, h.ServiceIP, h.RedisIP)
	return nil
}

// at is instance name's address on port: its host's, or loopback without hosts.
func (s *System) at(name string, port int) string {
	if s.hosts == nil {
		return devenv.Loopback(port)
	}
	return net.JoinHostPort(s.hosts.Addr[name], strconv.Itoa(port))
}

// hostIP is instance name's host address (loopback without hosts).
func (s *System) hostIP(name string) string {
	if s.hosts == nil {
		return "127.0.0.1"
	}
	return s.hosts.Addr[name]
}

// sharedIP is where the shared servers other than Redis listen for the services: the
// service network's bridge address, or "" (loopback) without hosts.
func (s *System) sharedIP() string {
	if s.hosts == nil {
		return ""
	}
	return s.hosts.ServiceIP
}

// shared is addr (a shared server's, on loopback) as the services reach it.
func (s *System) shared(addr string) string {
	if s.hosts == nil {
		return addr
	}
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort(s.hosts.ServiceIP, port)
}
