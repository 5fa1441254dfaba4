package devenv

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Hosts are network namespaces on this machine, one per host, each with its own address
// on two networks: the service network (Net: the hosts and the root namespace's bridge
// address ServiceIP, where the shared servers listen) and the Redis network (RedisIP in the
// root namespace, where the Redis nodes listen). Each host reaches each network through a
// veth of its own (eth0, redis0) attached to that network's bridge: taking a host's Redis
// link down (CutRedis) cuts it off from Redis alone. Needs root and iproute2's ip.
type Hosts struct {
	ServiceIP, RedisIP string            // the root namespace's bridge addresses
	Addr               map[string]string // host name -> its service address
	ns                 map[string]string // host name -> its namespace
	redisLink          map[string]string // host name -> the root end of its Redis veth
	bridges            []string
	ip                 string // the ip binary
}

// hostNames: namespaces seckill-<pid>-<host>; links and bridges sk<pid>s..., sk<pid>r...
// (at most 15 characters: a pid has at most 7 digits).
var (
	nsName   = regexp.MustCompile(`^seckill-(\d+)-`)
	linkName = regexp.MustCompile(`^sk(\d+)[sr]\d*(@\S*)?$`)
)

// StartHosts makes one namespace per name (at most 40), numbered from 11 in order, after
// removing what an earlier run that is gone left behind. It fails, never skips, where the
// machine cannot (not root, no ip, no veth or bridge support). Close removes everything.
func StartHosts(names []string) (h *Hosts, err error) {
	ip, err := LookPath("ip")
	if err != nil {
		return nil, fmt.Errorf("network namespaces need iproute2's ip (apt-get install iproute2): %w", err)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("network namespaces need root (ip netns add, veth, bridges)")
	}
	if len(names) > 40 {
		return nil, fmt.Errorf("%d hosts: at most 40", len(names))
	}
	sweepHosts(ip)
	n, err := freeSubnet(ip)
	if err != nil {
		return nil, err
	}
	pid := strconv.Itoa(os.Getpid())
	h = &Hosts{ip: ip, Addr: map[string]string{}, ns: map[string]string{}, redisLink: map[string]string{},
		ServiceIP: fmt.Sprintf("10.77.%d.1", n), RedisIP: fmt.Sprintf("10.78.%d.1", n)}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	svc, rds := "sk"+pid+"s", "sk"+pid+"r"
	for _, b := range [][2]string{{svc, h.ServiceIP}, {rds, h.RedisIP}} {
		h.bridges = append(h.bridges, b[0])
		if err := h.run("link", "add", b[0], "type", "bridge"); err != nil {
			return h, err
		}
		if err := h.run("addr", "add", b[1]+"/24", "dev", b[0]); err != nil {
			return h, err
		}
		if err := h.run("link", "set", b[0], "up"); err != nil {
			return h, err
		}
	}
	for i, name := range names {
		k := strconv.Itoa(11 + i)
		ns := "seckill-" + pid + "-" + name
		if err := h.run("netns", "add", ns); err != nil {
			return h, err
		}
		h.ns[name] = ns
		h.Addr[name] = fmt.Sprintf("10.77.%d.%s", n, k)
		h.redisLink[name] = rds + k
		for _, l := range [][4]string{{svc + k, "eth0", svc, h.Addr[name]},
			{rds + k, "redis0", rds, fmt.Sprintf("10.78.%d.%s", n, k)}} {
			if err := h.veth(ns, l[0], l[1], l[2], l[3]); err != nil {
				return h, err
			}
		}
		if err := h.run("-n", ns, "link", "set", "lo", "up"); err != nil {
			return h, err
		}
	}
	return h, nil
}

// veth links namespace ns to bridge: root end outer, host end inner with address addr/24.
func (h *Hosts) veth(ns, outer, inner, bridge, addr string) error {
	for _, args := range [][]string{
		{"link", "add", outer, "type", "veth", "peer", "name", inner, "netns", ns},
		{"link", "set", outer, "master", bridge, "up"},
		{"-n", ns, "addr", "add", addr + "/24", "dev", inner},
		{"-n", ns, "link", "set", inner, "up"},
	} {
		if err := h.run(args...); err != nil {
			return err
		}
	}
	return nil
}

func (h *Hosts) run(args ...string) error {
	if out, err := exec.Command(h.ip, args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Command is the command line that runs bin with args on host name: ip netns exec.
func (h *Hosts) Command(name, bin string, args ...string) (string, []string) {
	return h.ip, append([]string{"netns", "exec", h.ns[name], bin}, args...)
}

// RedisLink is the root end of host name's Redis veth (the cable CutRedis pulls).
func (h *Hosts) RedisLink(name string) string { return h.redisLink[name] }

// CutRedis takes host name's Redis link down (cut true: the root end of its veth, so the
// host sees its carrier lost and its packets to Redis go nowhere) or up again.
func (h *Hosts) CutRedis(name string, cut bool) error {
	state := "up"
	if cut {
		state = "down"
	}
	return h.run("link", "set", h.redisLink[name], state)
}

// Close removes the namespaces (their veths go with them) and the bridges.
func (h *Hosts) Close() {
	for _, ns := range h.ns {
		_ = h.run("netns", "del", ns)
	}
	for _, b := range h.bridges {
		_ = h.run("link", "del", b)
	}
}

// sweepHosts removes the namespaces, links and bridges of runs whose process is gone (a
// run killed before its Close), and any named after this process (a pid reused).
func sweepHosts(ip string) {
	stale := func(re *regexp.Regexp, name string) bool {
		m := re.FindStringSubmatch(name)
		if m == nil {
			return false
		}
		pid, _ := strconv.Atoi(m[1])
		return pid == os.Getpid() || !processAlive(pid)
	}
	out, _ := exec.Command(ip, "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && stale(nsName, f[0]) {
			_ = exec.Command(ip, "netns", "del", f[0]).Run()
		}
	}
	out, _ = exec.Command(ip, "-o", "link", "show").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && stale(linkName, strings.TrimSuffix(f[1], ":")) {
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			_ = exec.Command(ip, "link", "del", name).Run()
		}
	}
}

// freeSubnet is an n such that neither 10.77.n.0/24 nor 10.78.n.0/24 holds an address here.
func freeSubnet(ip string) (int, error) {
	out, err := exec.Command(ip, "-o", "-4", "addr", "show").Output()
	if err != nil {
		return 0, fmt.Errorf("ip addr show: %w", err)
	}
	for n := 1; n < 255; n++ {
		if !strings.Contains(string(out), fmt.Sprintf(" 10.77.%d.", n)) &&
			!strings.Contains(string(out), fmt.Sprintf(" 10.78.%d.", n)) {
			return n, nil
		}
	}
	return 0, errors.New("no free 10.77.n.0/24 and 10.78.n.0/24 here")
}
