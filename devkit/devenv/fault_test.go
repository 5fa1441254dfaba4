package devenv

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// redisCmd sends one inline command on c and returns the first reply line.
func redisCmd(t *testing.T, c net.Conn, cmd string) (string, error) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "$") && line != "$-1" { // a bulk string: its value on the next line
		v, err := r.ReadString('\n')
		return strings.TrimSpace(v), err
	}
	return line, nil
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestRestartRedisKeepsData: SHUTDOWN NOSAVE, then RestartRedis on the same port and
// directory; what was written before is there again (the AOF), and the new Close removes
// the directory.
func TestRestartRedisKeepsData(t *testing.T) {
	need(t, RedisPackage)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := dial(t, p.Addr)
	if got, err := redisCmd(t, c, "SET k v1"); err != nil || got != "+OK" {
		t.Fatalf("SET: %q %v", got, err)
	}
	_, _ = redisCmd(t, c, "SHUTDOWN NOSAVE") // the connection closes
	q, err := RestartRedis(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if q.Addr != p.Addr || q.Dir != p.Dir {
		t.Fatalf("restarted on %s in %s, want %s in %s", q.Addr, q.Dir, p.Addr, p.Dir)
	}
	if got, err := redisCmd(t, dial(t, q.Addr), "GET k"); err != nil || got != "v1" {
		t.Fatalf("GET after restart: %q %v, want v1", got, err)
	}
	_ = p.Close() // a no-op now: must not remove q's directory
	if got, err := redisCmd(t, dial(t, q.Addr), "PING"); err != nil || got != "+PONG" {
		t.Fatalf("after the old Proc's Close: %q %v", got, err)
	}
	_ = q.Close()
	assertStopped(t, q)
}

// TestProxyCutAndRestore: through the proxy a client reaches Redis; Cut breaks an open
// connection and refuses a new one; Restore lets new connections through again.
func TestProxyCutAndRestore(t *testing.T) {
	need(t, RedisPackage)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	px, err := StartProxy(r.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()

	open := dial(t, px.Addr)
	if got, err := redisCmd(t, open, "PING"); err != nil || got != "+PONG" {
		t.Fatalf("through the proxy: %q %v", got, err)
	}
	px.Cut()
	if got, err := redisCmd(t, open, "PING"); err == nil {
		t.Fatalf("an open connection still answered %q after Cut", got)
	}
	if got, err := redisCmd(t, dial(t, px.Addr), "PING"); err == nil {
		t.Fatalf("a new connection answered %q while cut", got)
	}
	px.Restore()
	if got, err := redisCmd(t, dial(t, px.Addr), "PING"); err != nil || got != "+PONG" {
		t.Fatalf("after Restore: %q %v", got, err)
	}
}
