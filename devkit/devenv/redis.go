package devenv

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// StartRedis runs the installed redis-server on a free loopback port with its data in a
// temporary directory, and returns once it answers PING. The server keeps an append-only
// file (appendfsync everysec, as DESIGN.md asks of Redis) inside that directory; Close stops
// the server and deletes the directory.
func StartRedis(ctx context.Context) (*Proc, error) {
	return StartRedisPersist(ctx, PersistEverysec)
}

// Persistence is how a private Redis keeps its data: its appendfsync setting, or
// PersistNone for no append-only file (and no snapshots) at all.
type Persistence string

const (
	PersistNone     Persistence = "none"
	PersistNo       Persistence = "no" // AOF written, fsync left to the kernel
	PersistEverysec Persistence = "everysec"
	PersistAlways   Persistence = "always"
)

func (p Persistence) args() []string {
	if p == PersistNone {
		return []string{"--appendonly", "no"}
	}
	return []string{"--appendonly", "yes", "--appendfsync", string(p)}
}

// StartRedisPersist is StartRedis with the given persistence.
func StartRedisPersist(ctx context.Context, p Persistence) (*Proc, error) {
	return startRedis(ctx, "redis", "", "", func(string) []string { return p.args() })
}

// StartRedisACL is StartRedis without persistence, its default user off and one ACL user,
// user with password pass, allowed every key, channel and command.
func StartRedisACL(ctx context.Context, user, pass string) (*Proc, error) {
	return startRedis(ctx, "redis", "", "", func(string) []string {
		return append(PersistNone.args(), "--user", "default", "off",
			"--user", user, "on", ">"+pass, "~*", "&*", "+@all")
	})
}

// StartRedisOn starts a redis-server on the directory and address of a server that was
// stopped (Proc.Kill), so that it loads what that one persisted, as a restarted Redis
// does. Close removes the directory.
func StartRedisOn(ctx context.Context, old *Proc, p Persistence) (*Proc, error) {
	bin, err := LookPath("redis-server")
	if err != nil {
		return nil, notInstalled(RedisPackage, "not found in PATH or sbin")
	}
	_, portStr, err := net.SplitHostPort(old.Addr)
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(portStr)
	host, _, _ := net.SplitHostPort(old.Addr)
	return runRedis(ctx, bin, old.Name, "", host, old.Dir, port, p.args())
}

// startRedis runs redis-server on a free port of host ("": loopback) in a fresh temporary
// directory with the arguments of every private server plus extra(dir), and waits for PING.
func startRedis(ctx context.Context, name, conf, host string, extra func(dir string) []string) (*Proc, error) {
	bin, err := LookPath("redis-server")
	if err != nil {
		return nil, notInstalled(RedisPackage, "not found in PATH or sbin")
	}
	return startOnFreePort(ctx, func(ctx context.Context, port int) (*Proc, error) {
		dir, err := privateDir(name)
		if err != nil {
			return nil, err
		}
		p, err := runRedis(ctx, bin, name, conf, host, dir, port, extra(dir))
		if err != nil {
			_ = os.RemoveAll(dir)
		}
		return p, err
	})
}

// runRedis runs redis-server on host:port ("": loopback) with its data in dir and waits
// for PING.
func runRedis(ctx context.Context, bin, name, conf, host, dir string, port int, extra []string) (*Proc, error) {
	if host == "" {
		host = "127.0.0.1"
	}
	{
		var args []string
		if conf != "" {
			args = []string{conf} // redis-server takes the file first; the options below override it
		}
		args = append(args, []string{
			"--port", strconv.Itoa(port),
			"--bind", host,
			"--protected-mode", "yes",
			"--dir", dir,
			"--pidfile", filepath.Join(dir, "pid"), // for SweepStale
			"--save", "",
			"--daemonize", "no",
			"--logfile", "",
		}...)
		args = append(args, extra...)
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		p, err := startProc(name, addr, dir, filepath.Join(dir, "redis.log"), exec.Command(bin, args...))
		if err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := p.waitReady(wctx, func(ctx context.Context) error { return PingRedis(ctx, p.Addr) }); err != nil {
			p.Kill()
			return nil, err
		}
		return p, nil
	}
}

// PingRedis sends an inline PING to the Redis at addr and expects +PONG.
func PingRedis(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	// -NOAUTH: a server whose default user is off (StartRedisACL) is up all the same.
	if l := strings.TrimSpace(line); l != "+PONG" && !strings.HasPrefix(l, "-NOAUTH") {
		return fmt.Errorf("redis at %s answered %q", addr, strings.TrimSpace(line))
	}
	return nil
}

// RestartRedis starts redis-server again after p has exited (SHUTDOWN, a crash): same
// binary, arguments, port and directory, so it comes back with what its append-only file
// holds (SHUTDOWN, even NOSAVE, flushes the AOF first). It waits for p's exit, then for
// PING. p is finished with: its Close no longer stops anything or removes the directory,
// which now belongs to the returned Proc.
func RestartRedis(ctx context.Context, p *Proc) (*Proc, error) {
	if p.Name != "redis" && p.Name != "redis-cluster" {
		return nil, fmt.Errorf("RestartRedis: %s is not a private redis-server", p.Name)
	}
	select {
	case <-p.exited:
	case <-ctx.Done():
		return nil, fmt.Errorf("redis on %s has not exited: %w", p.Addr, ctx.Err())
	}
	p.once.Do(func() {}) // the directory now belongs to the new process
	cmd := exec.Command(p.cmd.Path, p.cmd.Args[1:]...)
	q, err := startProc(p.Name, p.Addr, p.Dir, p.Log, cmd)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := q.waitReady(wctx, func(ctx context.Context) error { return PingRedis(ctx, q.Addr) }); err != nil {
		_ = q.Close()
		return nil, err
	}
	return q, nil
}
