package devenv

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

// reach reports whether host name connects to addr over TCP within 2 s.
func reach(t *testing.T, h *Hosts, name, addr string) bool {
	t.Helper()
	ip, port, _ := net.SplitHostPort(addr)
	bin, args := h.Command(name, "timeout", "2", "bash", "-c", "exec 3<>/dev/tcp/"+ip+"/"+port)
	return exec.Command(bin, args...).Run() == nil
}

func listen(t *testing.T, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	return l.Addr().String()
}

// Each host reaches both networks; CutRedis takes one host off the Redis network only
// (the other host still reaches Redis, the cut one still the service network); Close
// removes every namespace and link.
func TestHostsCutRedisCutsOneHostFromRedisOnly(t *testing.T) {
	h, err := StartHosts([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			h.Close()
		}
	}()
	svc, rds := listen(t, h.ServiceIP), listen(t, h.RedisIP)
	for _, n := range []string{"a", "b"} {
		if !reach(t, h, n, svc) || !reach(t, h, n, rds) {
			t.Fatalf("host %s (%s) does not reach the service network %s and the Redis network %s", n, h.Addr[n], svc, rds)
		}
	}
	if err := h.CutRedis("a", true); err != nil {
		t.Fatal(err)
	}
	if reach(t, h, "a", rds) {
		t.Fatal("host a reaches Redis with its Redis link down")
	}
	if !reach(t, h, "a", svc) || !reach(t, h, "b", rds) {
		t.Fatal("the cut took more than host a's Redis link")
	}
	if err := h.CutRedis("a", false); err != nil {
		t.Fatal(err)
	}
	// Its first dial may still find the neighbour entry the cut failed (no route to host).
	healed := false
	for range 5 {
		if healed = reach(t, h, "a", rds); healed {
			break
		}
	}
	if !healed {
		t.Fatal("host a does not reach Redis once its link is up again")
	}
	ns := h.ns["a"]
	h.Close()
	closed = true
	out, _ := exec.Command("ip", "netns", "list").Output()
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	if strings.Contains(string(out), ns) || strings.Contains(string(links), h.bridges[0]) {
		t.Fatalf("left behind after Close: namespaces %q, links %q", out, links)
	}
}

// What a killed run left behind (its pid gone) is removed by the next StartHosts.
func TestStartHostsSweepsAKilledRunsLeftovers(t *testing.T) {
	const gone = "4194303" // above any pid this machine hands out by default
	for _, args := range [][]string{{"netns", "add", "seckill-" + gone + "-rpc-1"},
		{"link", "add", "sk" + gone + "s", "type", "bridge"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	h, err := StartHosts([]string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	out, _ := exec.Command("ip", "netns", "list").Output()
	links, _ := exec.Command("ip", "-o", "link", "show").Output()
	if strings.Contains(string(out), "seckill-"+gone+"-") || strings.Contains(string(links), "sk"+gone+"s") {
		_ = exec.Command("ip", "netns", "del", "seckill-"+gone+"-rpc-1").Run()
		_ = exec.Command("ip", "link", "del", "sk"+gone+"s").Run()
		t.Fatalf("a gone run's namespace or bridge is still here: %q %q", out, links)
	}
}
