//go:build unix && !linux

package devenv

import (
	"os"
	"syscall"
)

// sysProcAttr puts a server in its own process group, so a Ctrl-C on the terminal reaches
// only the launcher, which stops the services before their databases.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

func processAlive(pid int) bool { return syscall.Kill(pid, 0) != syscall.ESRCH }

func freeze(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }

func thaw(p *os.Process) error { return p.Signal(syscall.SIGCONT) }
