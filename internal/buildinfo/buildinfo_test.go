package buildinfo

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestFrom(t *testing.T) {
	bi := func(version string, settings ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return b
	}
	for _, c := range []struct {
		name            string
		bi              *debug.BuildInfo
		ok              bool
		version, commit string
		want            Info
	}{
		{"toolchain's", bi("v1.2.0", "vcs.revision", "abc", "vcs.modified", "false"), true, "", "",
			Info{"v1.2.0", "abc"}},
		{"modified tree", bi("(devel)", "vcs.revision", "abc", "vcs.modified", "true"), true, "", "",
			Info{"(devel)", "abc-dirty"}},
		{"ldflags win", bi("(devel)", "vcs.revision", "abc"), true, "v2.0.0", "def", Info{"v2.0.0", "def"}},
		{"nothing recorded", nil, false, "", "", Info{unknown, unknown}},
		{"no vcs", bi(""), true, "", "", Info{unknown, unknown}},
	} {
		if got := from(c.bi, c.ok, c.version, c.commit); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestRegisterExportsOneSeries: Register, however often called, leaves one
// seckill_build_info series on the default registry, at 1, labelled with Get().
func TestRegisterExportsOneSeries(t *testing.T) {
	Register()
	Register()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := Get()
	for _, mf := range mfs {
		if mf.GetName() != "seckill_build_info" {
			continue
		}
		if len(mf.Metric) != 1 {
			t.Fatalf("%d series of seckill_build_info, want 1", len(mf.Metric))
		}
		m := mf.Metric[0]
		labels := map[string]string{}
		for _, lp := range m.Label {
			labels[lp.GetName()] = lp.GetValue()
		}
		if m.GetGauge().GetValue() != 1 || labels["version"] != want.Version || labels["commit"] != want.Commit {
			t.Fatalf("seckill_build_info %v = %v, want {version=%s, commit=%s} = 1",
				labels, m.GetGauge().GetValue(), want.Version, want.Commit)
		}
		return
	}
	t.Fatal("no seckill_build_info on the default registry")
}

// TestEveryBinaryPrintsItsVersion builds each entry point with the ldflags override and
// runs it with -version; one more build without it prints the commit Go recorded.
func TestEveryBinaryPrintsItsVersion(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := func(pkg, out string, ldflags string) string {
		bin := filepath.Join(dir, out)
		cmd := exec.Command(gobin, "build", "-buildvcs=auto", "-tags", "no_k8s", "-ldflags", ldflags, "-o", bin, pkg)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		return bin
	}
	run := func(bin string) string {
		cmd := exec.Command(bin, "-version")
		cmd.Dir = dir // no etc/ here: -version must not read a config
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s -version: %v\n%s", bin, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	const pkgVar = "github.com/seckill/seckill/internal/buildinfo"
	flags := "-X " + pkgVar + ".Version=v9.8.7-test -X " + pkgVar + ".Commit=0123abcd"
	for pkg, name := range map[string]string{"./api": "seckill-api", "./rpc": "seckill-rpc", "./mq": "seckill-mq",
		"./cmd/standalone": "seckill-standalone"} {
		want := name + " version v9.8.7-test, commit 0123abcd"
		if got := run(build(pkg, name, flags)); got != want {
			t.Errorf("%s -version: %q, want %q", pkg, got, want)
		}
	}
	// Without ldflags: the commit Go recorded (none in a git worktree: Go looks for a .git
	// directory; none with -buildvcs=false), as `go version -m` reads it.
	plain := build("./mq", "mq-plain", "")
	meta, err := exec.Command(gobin, "version", "-m", plain).Output()
	if err != nil {
		t.Fatal(err)
	}
	commit, dirty, version := unknown, false, "(devel)"
	for _, line := range strings.Split(string(meta), "\n") {
		f := strings.Fields(line)
		// The main module's version: (devel), or a pseudo-version stamped from a git clone's .git.
		if len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/seckill/seckill" {
			version = f[2]
		}
		if len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision=") {
			commit = strings.TrimPrefix(f[1], "vcs.revision=")
		}
		dirty = dirty || (len(f) == 2 && f[1] == "vcs.modified=true")
	}
	if dirty {
		commit += "-dirty"
	}
	if got, want := run(plain), "seckill-mq version "+version+", commit "+commit; got != want {
		t.Errorf("./mq without ldflags -version: %q, want %q", got, want)
	}
}
