package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/seckill/seckill/devkit/devenv"
)

// server is a private redis-server running under callgrind, counting nothing until on.
type server struct {
	addr string
	dir  string // its data, its log and callgrind's output files
	cmd  *exec.Cmd
	done chan struct{}
}

// startServer runs redis-server (no persistence, a free loopback port, a fresh directory)
// under `valgrind --tool=callgrind --instr-atstart=no` and waits until it answers PING. It
// counts nothing until `callgrind_control -i on` (instrumentation on; --collect-atstart=no
// would leave collection off, which callgrind_control cannot turn on).
func startServer(ctx context.Context, valgrind, redisServer string) (*server, error) {
	dir, err := os.MkdirTemp("", "seckill-callgrind-")
	if err != nil {
		return nil, err
	}
	port, err := devenv.FreePort()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	defer log.Close()
	s := &server{addr: devenv.Loopback(port), dir: dir, done: make(chan struct{})}
	s.cmd = exec.Command(valgrind, "--tool=callgrind", "--instr-atstart=no",
		"--callgrind-out-file="+filepath.Join(dir, "callgrind.out"),
		redisServer, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
		"--appendonly", "no", "--daemonize", "no", "--logfile", "")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", valgrind, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(2 * time.Minute) // valgrind takes seconds to start a process
	for {
		err := devenv.PingRedis(ctx, s.addr)
		if err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			err = fmt.Errorf("redis-server under callgrind exited (its log: %s)", log.Name())
		case <-time.After(200 * time.Millisecond):
			if time.Now().Before(deadline) && ctx.Err() == nil {
				continue
			}
		}
		s.stop(true)
		return nil, fmt.Errorf("redis-server under callgrind on %s: %w", s.addr, err)
	}
}

// control runs callgrind_control with args on the server's process.
func (s *server) control(ctl string, args ...string) error {
	out, err := exec.Command(ctl, append(args, strconv.Itoa(s.cmd.Process.Pid))...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", ctl, strings.Join(args, " "), err, out)
	}
	return nil
}

// dump has callgrind write what it counted since the last dump to a new file, and returns
// the file's path.
func (s *server) dump(ctl string) (string, error) {
	before, err := s.outputs()
	if err != nil {
		return "", err
	}
	if err := s.control(ctl, "-d"); err != nil {
		return "", err
	}
	after, err := s.outputs()
	if err != nil {
		return "", err
	}
	for _, f := range after {
		if !slices.Contains(before, f) {
			return f, nil
		}
	}
	return "", errors.New("callgrind_control -d wrote no new file")
}

// outputs are the callgrind output files in the server's directory.
func (s *server) outputs() ([]string, error) {
	return filepath.Glob(filepath.Join(s.dir, "callgrind.out*"))
}

// stop ends the server (SIGTERM; SIGKILL after a minute) and, when remove, removes its
// directory (callgrind's dumps with it).
func (s *server) stop(remove bool) {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	if remove {
		_ = os.RemoveAll(s.dir)
	}
}
