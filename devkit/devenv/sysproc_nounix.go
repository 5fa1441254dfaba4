//go:build !unix

package devenv

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }

func processAlive(int) bool { return true } // never sweep where it cannot be told
