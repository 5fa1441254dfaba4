package devenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// sbinDirs are searched after PATH: server binaries live in sbin, which a normal user's PATH
// often lacks.
var sbinDirs = []string{"/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/libexec", "/usr/local/bin",
	"/opt/homebrew/bin", "/opt/homebrew/sbin"}

// LookPath finds a program in PATH or the usual sbin directories.
func LookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range sbinDirs {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}

// LookFirst returns the path of the first of names that is installed.
func LookFirst(names ...string) (string, error) {
	for _, n := range names {
		if p, err := LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("none of %v: %w", names, exec.ErrNotFound)
}

// Package says how to install a server: the binaries that provide it (any one will do)
// and the package names per package manager.
type Package struct {
	Binaries []string
	Apt      string // Debian/Ubuntu package
	Brew     string // Homebrew formula
}

var (
	// RedisPackage provides redis-server.
	RedisPackage = Package{Binaries: []string{"redis-server"}, Apt: "redis-server", Brew: "redis"}
	// MariaDBPackage provides the MariaDB server and its data-directory initializer.
	MariaDBPackage = Package{Binaries: []string{"mariadbd", "mysqld"}, Apt: "mariadb-server", Brew: "mariadb"}
	// OpenSSLPackage provides openssl, which deploy/tls/gen-certs.sh runs.
	OpenSSLPackage = Package{Binaries: []string{"openssl"}, Apt: "openssl", Brew: "openssl"}
)

// ErrNotInstalled is returned (wrapped, with what to install) when a server binary is
// missing and cannot be installed automatically.
var ErrNotInstalled = errors.New("not installed")

// EnsureInstalled returns the path of the first of pkg.Binaries that is installed. When none
// is, and apt-get is available with root rights (as root, or through password-less sudo),
// it runs `apt-get update && apt-get install -y <pkg.Apt>`, writing apt's output to log;
// otherwise it returns an error that says exactly what to install.
func EnsureInstalled(ctx context.Context, pkg Package, log io.Writer) (string, error) {
	if p, err := LookFirst(pkg.Binaries...); err == nil {
		return p, nil
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil {
		return "", notInstalled(pkg, "apt-get is not available")
	}
	var prefix []string
	switch {
	case os.Geteuid() == 0:
	case exec.CommandContext(ctx, "sudo", "-n", "true").Run() == nil:
		prefix = []string{"sudo", "-n"}
	default:
		return "", notInstalled(pkg, "not root and no password-less sudo, so it cannot be installed automatically")
	}
	fmt.Fprintf(log, "%s is not installed: installing the %s package with apt-get\n", pkg.Binaries[0], pkg.Apt)
	run := func(args ...string) error {
		argv := append(append(append([]string{}, prefix...), apt), args...)
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = log, log
		return cmd.Run()
	}
	if err := run("update", "-q"); err != nil {
		return "", notInstalled(pkg, fmt.Sprintf("apt-get update failed: %v", err))
	}
	if err := run("install", "-y", "-q", "--no-install-recommends", pkg.Apt); err != nil {
		return "", notInstalled(pkg, fmt.Sprintf("apt-get install %s failed: %v", pkg.Apt, err))
	}
	p, err := LookFirst(pkg.Binaries...)
	if err != nil {
		return "", notInstalled(pkg, "apt-get install succeeded but the binary is still missing")
	}
	return p, nil
}

func notInstalled(pkg Package, why string) error {
	return fmt.Errorf("%s %w (%s). Install it, then run again:\n"+
		"  Debian/Ubuntu: sudo apt-get install %s\n"+
		"  macOS:         brew install %s\n"+
		"or point the launcher at a running server (see -h)",
		pkg.Binaries[0], ErrNotInstalled, why, pkg.Apt, pkg.Brew)
}

// Check returns nil when one of pkg.Binaries is installed, else an error that says exactly
// what to install (it installs nothing).
func Check(pkg Package) error {
	if _, err := LookFirst(pkg.Binaries...); err != nil {
		return notInstalled(pkg, "not found in PATH or sbin")
	}
	return nil
}

var (
	// PrometheusPackage is Debian's Prometheus server (it ships promtool too).
	PrometheusPackage = Package{Binaries: []string{"prometheus"}, Apt: "prometheus", Brew: "prometheus"}
	// ChromiumPackage is Debian's Chromium (headless browser tests).
	ChromiumPackage = Package{Binaries: []string{"chromium", "chromium-browser", "google-chrome"}, Apt: "chromium",
		Brew: "chromium"}
)
