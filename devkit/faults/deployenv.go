package faults

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Each service process of the deploy test gets exactly the environment deploy/ gives that
// service: the `environment:` of its compose services (x-rpc-env, x-api-env, x-mq-env; the
// same lists as systemd's per-service files, which etc/TestSystemdEnvironmentFilePerService
// holds to the configs), each ${VAR} expanded from the suite's environment, and nothing
// else: no variable of the suite's, no other service's secret.

// serviceEnv reads compose's services that run /opt/seckill/bin/<bin> -f <config> and
// returns, per bin (rpc, api, mq), their environment as KEY=VALUE, sorted. Every instance of
// a bin must have the same environment.
func serviceEnv(compose string) (map[string][]string, error) {
	b, err := os.ReadFile(compose)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Services map[string]struct {
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", compose, err)
	}
	out := map[string][]string{}
	var missing []string
	for name, sv := range doc.Services {
		if len(sv.Command) < 2 || sv.Command[1] != "-f" || !strings.HasPrefix(sv.Command[0], "/opt/seckill/bin/") {
			continue // no service of ours, or bin/migrate (a one-shot step, run by the suite itself)
		}
		bin := path.Base(sv.Command[0])
		env := make([]string, 0, len(sv.Environment))
		for k, v := range sv.Environment {
			env = append(env, k+"="+expandCompose(v, &missing))
		}
		slices.Sort(env)
		if prev, ok := out[bin]; ok && !slices.Equal(prev, env) {
			return nil, fmt.Errorf("%s: %s's environment differs from another %s instance's", compose, name, bin)
		}
		out[bin] = env
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("%s: the services need %s", compose, strings.Join(slices.Compact(missing), ", "))
	}
	for _, bin := range []string{"rpc", "api", "mq"} {
		if len(out[bin]) == 0 {
			return nil, fmt.Errorf("%s: no service runs /opt/seckill/bin/%s with an environment", compose, bin)
		}
	}
	return out, nil
}

// procEnv is the environment process pid started with (/proc/<pid>/environ), sorted.
func procEnv(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range bytes.Split(b, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	slices.Sort(env)
	return env, nil
}

// envCheck: each running service process holds exactly its service's environment (want,
// per bin); it names the variables a process holds beyond its own (names only: no value).
func envCheck(children []*child, want map[string][]string) Check {
	const name = "each process holds only its own service's environment"
	var bad []string
	n := 0
	for _, c := range children {
		pid := c.pid()
		if pid == 0 || !c.alive() {
			continue
		}
		have, err := procEnv(pid)
		if err != nil {
			bad = append(bad, c.name+": "+err.Error())
			continue
		}
		n++
		w := want[filepath.Base(c.bin)]
		if slices.Equal(have, w) {
			continue
		}
		var extra, lacking []string
		for _, kv := range have {
			if !slices.Contains(w, kv) {
				extra = append(extra, envName(kv))
			}
		}
		for _, kv := range w {
			if !slices.Contains(have, kv) {
				lacking = append(lacking, envName(kv))
			}
		}
		bad = append(bad, fmt.Sprintf("%s (%s) holds %d variables beyond its own (%s), lacks %s", c.name,
			filepath.Base(c.bin), len(extra), strings.Join(firstNList(extra, 4), ", "), orNone(lacking)))
	}
	return check(name, n > 0 && n == len(children) && len(bad) == 0,
		"%d processes' /proc/<pid>/environ against compose's environment per service (rpc %d, api %d, mq %d "+
			"variables); gateway has SECKILL_EVENT_KEY: %v%s", n, len(want["rpc"]), len(want["api"]),
		len(want["mq"]), gatewayHas(children, "SECKILL_EVENT_KEY"), reasons(bad))
}

// gatewayHas reports whether a running gateway's environment holds variable name.
func gatewayHas(children []*child, name string) bool {
	for _, c := range children {
		if filepath.Base(c.bin) != "api" || !c.alive() {
			continue
		}
		env, _ := procEnv(c.pid())
		for _, kv := range env {
			if envName(kv) == name {
				return true
			}
		}
	}
	return false
}

func envName(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	return k
}
