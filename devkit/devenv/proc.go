// Package devenv starts private servers for a local run from the binaries installed on the
// machine: a redis-server and a MariaDB (or MySQL) server, each on a free loopback port with
// its data in a temporary directory that is removed when it stops, and the in-process
// Kafka-protocol broker (kfake). The standalone launcher uses it when no address is
// configured; nothing here ever touches a server it did not start.
package devenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a server process this package started.
type Proc struct {
	Name string // "redis" or "mariadb"
	Addr string // host:port on the loopback interface
	Dir  string // temporary directory holding its data and log, removed by Close
	Log  string // the server's log file

	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	err    error         // the process's exit status, valid after exited is closed
	once   sync.Once
}

// startProc runs cmd (already configured) and watches it.
func startProc(name, addr, dir, logFile string, cmd *exec.Cmd) (*Proc, error) {
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{Name: name, Addr: addr, Dir: dir, Log: logFile, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = out.Close()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed when the server process has exited.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Close stops the server (SIGTERM, then SIGKILL after 30 s) and removes its directory.
// It is safe to call more than once.
func (p *Proc) Close() error {
	p.once.Do(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.exited:
			case <-time.After(30 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.exited
			}
		}
		_ = os.RemoveAll(p.Dir)
	})
	return nil
}

// Kill stops the server with SIGKILL, as a crash would, and keeps its directory (its data
// files), so that a new server can be started on it (StartRedisOn). Close is a no-op
// afterwards: the directory belongs to whoever starts on it next.
func (p *Proc) Kill() {
	p.once.Do(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
}

// waitReady polls ready until it succeeds, the process exits, or ctx ends.
func (p *Proc) waitReady(ctx context.Context, ready func(context.Context) error) error {
	var last error
	for {
		if last = ready(ctx); last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited during start-up (%v); log %s:\n%s", p.Name, p.err, p.Log, tail(p.Log, 2048))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last error: %v); log %s:\n%s", p.Name, ctx.Err(), last, p.Log,
				tail(p.Log, 2048))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tail returns the last n bytes of a file, for error messages.
func tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago. Another process may
// take it before the server binds it; the Start functions retry with a new port then.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startOnFreePort calls start with fresh ports until one comes up (the port may be taken
// between FreePort and the server's bind).
func startOnFreePort(ctx context.Context, start func(ctx context.Context, port int) (*Proc, error)) (*Proc, error) {
	var errs []error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		p, err := start(ctx, port)
		if err == nil {
			return p, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// Loopback is the address host:port of port on 127.0.0.1.
func Loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// stalePrefix names the temporary directories of every private server started here.
const stalePrefix = "seckill-"

// privateDir makes a private server's data directory, recording this process as its
// owner: SweepStale judges a directory by its owner, so a server a test stopped on
// purpose (to restart it on the same directory) is not swept by another test binary.
func privateDir(kind string) (string, error) {
	dir, err := os.MkdirTemp("", stalePrefix+kind+"-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "owner"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// SweepStale removes the directories of private servers whose owner is gone: a test
// binary or launcher that was killed leaves its servers' data behind (the kernel stops the
// servers themselves, see sysProcAttr). A directory is stale when its owner file names a
// process that no longer exists (or, without one, its server's pid file does); one with
// neither is left alone.
func SweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), stalePrefix+"*"))
	for _, dir := range dirs {
		pid, ok := readPid(filepath.Join(dir, "owner"))
		if !ok {
			if pid, ok = readPid(filepath.Join(dir, "pid")); !ok {
				continue
			}
		}
		if !processAlive(pid) {
			_ = os.RemoveAll(dir)
		}
	}
}

func readPid(file string) (int, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// ChildProcAttr is what every private server gets (its own process group; on Linux, a
// SIGTERM when the launcher dies): for tools that run other children the same way.
func ChildProcAttr() *syscall.SysProcAttr { return sysProcAttr() }

// Pid is the server's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Freeze stops the process (SIGSTOP): it holds its sockets but reads nothing, as a stalled
// server would. Thaw resumes it.
func (p *Proc) Freeze() error { return freeze(p.cmd.Process) }

// Thaw resumes a frozen process (SIGCONT).
func (p *Proc) Thaw() error { return thaw(p.cmd.Process) }
