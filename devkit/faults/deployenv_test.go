package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// deployEnv sets every secret deploy/ reads to a value naming it and returns compose's
// environment per service.
func deployEnv(t *testing.T) map[string][]string {
	t.Helper()
	for _, k := range deploySecrets {
		t.Setenv("SECKILL_"+k, "value-of-"+k)
	}
	env, err := serviceEnv("../../deploy/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// The gateway's environment from compose is its own: its secrets, none of the writer's or
// the inventory service's.
func TestServiceEnvGatewayHoldsNoEventKey(t *testing.T) {
	env := deployEnv(t)
	var names []string
	for _, kv := range env["api"] {
		names = append(names, envName(kv))
	}
	for _, k := range []string{"SECKILL_EVENT_KEY", "SECKILL_RPC_OPS_TOKEN", "SECKILL_ORDER_KEY",
		"SECKILL_MYSQL_RPC_PASSWORD", "SECKILL_MYSQL_MQ_PASSWORD"} {
		if slices.Contains(names, k) {
			t.Errorf("the gateway's environment holds %s: %v", k, names)
		}
	}
	if !slices.Contains(env["api"], "SECKILL_PAYMENT_SECRET=value-of-PAYMENT_SECRET") {
		t.Errorf("the gateway's environment lacks its payment secret: %v", env["api"])
	}
	if !slices.Contains(env["mq"], "SECKILL_EVENT_KEY=value-of-EVENT_KEY") {
		t.Errorf("the writer's environment lacks the event key: %v", env["mq"])
	}
}

// A service process started by the suite holds exactly its service's environment, and the
// check of it fails for a process given the suite's whole environment (which holds the
// event-signing key).
func TestServiceProcessGetsOnlyItsOwnEnvironment(t *testing.T) {
	want := deployEnv(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "api") // named as the gateway's binary: envCheck reads the name
	b, err := os.ReadFile("/bin/sleep")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	start := func(name string, env []string) *child {
		c := &child{name: name, bin: bin, args: []string{"60"}, log: filepath.Join(dir, name+".log"), env: env}
		// Started means exec'd through: Start returns once the exec is past its point of no return,
		// before the kernel has set the new image's arguments and environment, and an environ
		// read in between is empty (CI read "api-2 holds 0 variables").
		c.ready = func(context.Context) error {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c.pid())); err != nil || len(b) == 0 {
				return fmt.Errorf("%s not exec'd yet (%v)", name, err)
			}
			return nil
		}
		if err := c.start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.kill)
		return c
	}
	own := start("api-1", want["api"])
	if c := envCheck([]*child{own}, want); c.Status != Pass {
		t.Fatalf("a gateway started with its own environment: %s %s", c.Status, c.Detail)
	}
	if gatewayHas([]*child{own}, "SECKILL_EVENT_KEY") {
		t.Fatal("the gateway's process holds SECKILL_EVENT_KEY")
	}
	all := start("api-2", nil) // the suite's environment
	c := envCheck([]*child{own, all}, want)
	if c.Status != Fail || !strings.Contains(c.Detail, "api-2") || !strings.Contains(c.Detail, "gateway has "+
		"SECKILL_EVENT_KEY: true") {
		t.Fatalf("a gateway given every secret passed the check: %s %s", c.Status, c.Detail)
	}
}
