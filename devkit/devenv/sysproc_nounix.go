//go:build !unix

package devenv

import "syscall"

func sysProcAttr() *syscall.SysProcAttr { return nil }
