package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/limit"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/api/gatekeys"
	"github.com/seckill/seckill/devkit/testenv"
	"github.com/seckill/seckill/internal/stock"
)

// aclRules are the rules deploy/docker-compose.yml's x-redis gives user name (after
// "--user", name).
func aclRules(t *testing.T, name string) []string {
	t.Helper()
	for _, k := range deploySecrets {
		t.Setenv("SECKILL_"+k, "pw-"+strings.ToLower(k))
	}
	args, err := redisACLArgs("../../deploy/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(args); i++ {
		if args[i] != "--user" || args[i+1] != name {
			continue
		}
		var rules []string
		for _, a := range args[i+2:] {
			if strings.HasPrefix(a, "--") {
				break
			}
			rules = append(rules, a)
		}
		return rules
	}
	t.Fatalf("x-redis has no user %s", name)
	return nil
}

// TestGatewayACLCoversItsKeys: the gateway, logged in to Redis as deploy's api user, can do
// every call it makes: the per-user and per-address counts (pipelined INCR, EXPIRE NX), the
// per-merchant limit and the failed authentications (go-zero's PeriodLimit), the
// Idempotency-Key record, the read of a request id's holder before a mark
// answers. A call refused (NOPERM) fails open in the gateway, so
// nothing else would show the rule missing (the merchant limit's key was outside it).
func TestGatewayACLCoversItsKeys(t *testing.T) {
	addr := testenv.RedisAddr()
	ctx := context.Background()
	admin := goredis.NewClient(&goredis.Options{Addr: addr})
	defer admin.Close()
	user := fmt.Sprintf("seckill-acl-test-%d", time.Now().UnixNano())
	rules := aclRules(t, "api")
	setuser := append([]any{"ACL", "SETUSER", user, "reset"}, toAny(rules)...)
	setuser = append(setuser, "resetpass", ">pw")
	if err := admin.Do(ctx, setuser...).Err(); err != nil {
		t.Fatalf("ACL SETUSER %v: %v", rules, err)
	}
	defer admin.Do(ctx, "ACL", "DELUSER", user)
	rds := redis.MustNewRedis(redis.RedisConf{Host: addr, Type: "node", User: user, Pass: "pw",
		DisableIdentity: true})
	keys, gate := stock.Keys{}, gatekeys.Keys{} // deploy/ runs without a key prefix
	aid, id := 900_000_000+time.Now().Unix()%1000, time.Now().UnixNano()
	defer admin.Del(ctx, gate.RateLimit(id), gate.RateLimitAddr("reserve", "198.51.100.9"),
		gate.RateLimitAddr("authfail", "198.51.100.9"),
		gate.RateLimitMerchant(id), gate.Idempotency(id, "acl-test-key"))
	pl := limit.NewPeriodLimit(1, 10, rds, "")
	for name, key := range map[string]string{"merchant limit": gate.RateLimitMerchant(id),
		"failed authentications": gate.RateLimitAddr("authfail", "198.51.100.9")} {
		if _, err := pl.TakeCtx(ctx, key); err != nil {
			t.Errorf("%s (%s): %v", name, key, err)
		}
	}
	// The shared buyer and address counts (api/internal/svc SharedCounts): INCR and EXPIRE NX
	// in a pipeline.
	for name, key := range map[string]string{"buyer limit": gate.RateLimit(id),
		"address limit": gate.RateLimitAddr("reserve", "198.51.100.9")} {
		err := rds.PipelinedCtx(ctx, func(p redis.Pipeliner) error {
			p.Incr(ctx, key)
			p.ExpireNX(ctx, key, time.Second)
			return nil
		})
		if err != nil {
			t.Errorf("%s (%s): %v", name, key, err)
		}
	}
	if _, err := rds.SetnxExCtx(ctx, gate.Idempotency(id, "acl-test-key"), "x", 60); err != nil {
		t.Errorf("idempotency record: %v", err)
	}
	if _, err := rds.HmgetCtx(ctx, keys.Buyers(aid), "r:1:req"); err != nil {
		t.Errorf("holder read (%s): %v", keys.Buyers(aid), err)
	}
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestExporterACLReadsNoKey: deploy's exporter user (redis-exporter) can read what the
// exporter reads (INFO, CONFIG GET, SLOWLOG, LATENCY) and nothing of the data: no key, no
// write, no admin command.
func TestExporterACLReadsNoKey(t *testing.T) {
	ctx := context.Background()
	admin := goredis.NewClient(&goredis.Options{Addr: testenv.RedisAddr()})
	defer admin.Close()
	user := fmt.Sprintf("seckill-acl-exporter-%d", time.Now().UnixNano())
	rules := aclRules(t, "exporter")
	setuser := append([]any{"ACL", "SETUSER", user, "reset"}, toAny(rules)...)
	setuser = append(setuser, "resetpass", ">pw")
	if err := admin.Do(ctx, setuser...).Err(); err != nil {
		t.Fatalf("ACL SETUSER %v: %v", rules, err)
	}
	defer admin.Do(ctx, "ACL", "DELUSER", user)
	key := user + ":k"
	if err := admin.Set(ctx, key, "secret", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.Del(ctx, key)
	c := goredis.NewClient(&goredis.Options{Addr: testenv.RedisAddr(), Username: user, Password: "pw",
		DisableIdentity: true})
	defer c.Close()
	for _, cmd := range [][]any{{"PING"}, {"INFO", "all"}, {"CONFIG", "GET", "maxmemory"}, {"SLOWLOG", "GET", "10"},
		{"SLOWLOG", "LEN"}, {"LATENCY", "LATEST"}} {
		if err := c.Do(ctx, cmd...).Err(); err != nil {
			t.Errorf("exporter cannot %v: %v", cmd, err)
		}
	}
	for _, cmd := range [][]any{{"GET", key}, {"SCAN", "0"}, {"KEYS", "*"}, {"SET", key, "x"},
		{"CONFIG", "SET", "maxmemory", "1"}, {"CLIENT", "KILL", "ID", "1"}, {"FLUSHALL"}, {"EVAL", "return 1", "0"}} {
		if err := c.Do(ctx, cmd...).Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
			t.Errorf("exporter %v: %v, want NOPERM", cmd, err)
		}
	}
}
