//go:build !unix

package devenv

import (
	"errors"
	"os"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func processAlive(int) bool { return true } // never sweep where it cannot be told

func freeze(*os.Process) error { return errors.New("freezing a process needs a unix system") }

func thaw(*os.Process) error { return errors.New("freezing a process needs a unix system") }
