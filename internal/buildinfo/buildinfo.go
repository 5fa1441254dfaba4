// Package buildinfo is the version and commit of a binary: the -version flag of every entry
// point (api, rpc, mq, cmd/standalone) and the seckill_build_info gauge of every service.
package buildinfo

import (
	"flag"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Version and Commit override what the Go toolchain recorded, at link time:
//
//	go build -ldflags "-X github.com/seckill/seckill/internal/buildinfo.Version=v1.2.3 \
//	  -X github.com/seckill/seckill/internal/buildinfo.Commit=$(git rev-parse HEAD)" ./api
var (
	Version string
	Commit  string
)

// unknown stands for what neither the linker nor the toolchain recorded.
const unknown = "unknown"

// Info is a binary's version and commit.
type Info struct {
	Version string
	Commit  string
}

// Get returns the running binary's Info: the ldflags variables when set, else the main
// module's version and the vcs.revision (with "-dirty" for vcs.modified) Go recorded.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	return from(bi, ok, Version, Commit)
}

func from(bi *debug.BuildInfo, ok bool, version, commit string) Info {
	var info Info
	if ok && bi != nil {
		info.Version = bi.Main.Version
		var dirty bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && info.Commit != "" {
			info.Commit += "-dirty"
		}
	}
	if version != "" {
		info.Version = version
	}
	if commit != "" {
		info.Commit = commit
	}
	if info.Version == "" {
		info.Version = unknown
	}
	if info.Commit == "" {
		info.Commit = unknown
	}
	return info
}

// String is the line -version prints after the binary's name.
func (i Info) String() string {
	return fmt.Sprintf("version %s, commit %s", i.Version, i.Commit)
}

var (
	gauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "seckill", Name: "build_info",
		Help: "1, labelled with the version and commit of the running binary",
	}, []string{"version", "commit"})
	once sync.Once
)

// Register sets seckill_build_info{version,commit} to 1 on the default registry (the one
// go-zero's DevServer serves); every service calls it, more than once in one process is fine.
func Register() {
	once.Do(func() {
		i := Get()
		gauge.WithLabelValues(i.Version, i.Commit).Set(1)
	})
}

// Flag declares -version on the default flag set; after flag.Parse, PrintIf prints the
// version line and reports whether it was asked for (the caller then exits).
func Flag() *bool {
	return flag.Bool("version", false, "print the version and commit, then exit")
}

// PrintIf prints "name version V, commit C" when asked is set, and reports asked.
func PrintIf(asked *bool, name string) bool {
	if asked == nil || !*asked {
		return false
	}
	fmt.Println(name, Get())
	return true
}
