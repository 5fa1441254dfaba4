package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/seckill/seckill/devkit/devenv"
)

// child is one service process: its binary, its arguments, its log; restartable.
type child struct {
	name string
	bin  string
	args []string
	log  string
	// ready is what "started" means (a port listens, /healthz answers); nil: none.
	ready func(ctx context.Context) error
	// hosts, when set, has the process run on its host (the network namespace named
	// name: ip netns exec, deployhosts.go).
	hosts *devenv.Hosts
	// env, when not nil, is the process's whole environment (the deploy test: its
	// service's, deployenv.go); nil: the suite's.
	env []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	killed bool // by the suite: its exit is no finding
}

func (c *child) start(ctx context.Context) error {
	out, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n=== %s start %s\n", c.name, time.Now().Format(time.RFC3339Nano))
	bin, args := c.bin, c.args
	if c.hosts != nil {
		bin, args = c.hosts.Command(c.name, bin, args...)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = c.env
	cmd.SysProcAttr = devenv.ChildProcAttr()
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return fmt.Errorf("start %s: %w", c.name, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = out.Close()
		close(exited)
	}()
	c.mu.Lock()
	c.cmd, c.exited, c.killed = cmd, exited, false
	c.mu.Unlock()
	if c.ready == nil {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		err := c.ready(wctx)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited during start-up; log %s", c.name, c.log)
		case <-wctx.Done():
			return fmt.Errorf("%s not ready: %v; log %s", c.name, err, c.log)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// wasKilled reports whether the suite stopped the process (its exit is no finding).
func (c *child) wasKilled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.killed
}

// pid is the running process's id (0: none started).
func (c *child) pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return 0
	}
	return c.cmd.Process.Pid
}

// alive reports whether the process is running.
func (c *child) alive() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return false
	}
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// stopping records the process as stopped by the suite (its exit is no finding) and returns
// it and its exit channel.
func (c *child) stopping() (*exec.Cmd, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.killed = true
	return c.cmd, c.exited
}

// kill is kill -9 (os.Process.Kill), then waits for the exit.
func (c *child) kill() {
	cmd, exited := c.stopping()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// stop is SIGTERM (a graceful stop), then kill -9 after 10 s.
func (c *child) stop() {
	cmd, exited := c.stopping()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}
