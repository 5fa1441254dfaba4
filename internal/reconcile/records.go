package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zeromicro/go-zero/core/stores/redis"
)

// records keeps reconciliation's own state in Redis, under the deployment's key prefix: each
// activity's unexplained differences, which the next run (from any instance) reads, and its last
// report, which callers waiting on another instance's run share. Neither is the inventory's
// (stock.Keys does not name them); both keep the names an earlier version's instances use (a
// rolling upgrade shares them), among the activity's keys: sk:{a<ID>}:recon and :reconrep.
type records struct {
	rds    *redis.Redis
	prefix string
}

// key is the record name of activity aid.
func (k records) key(aid int64, name string) string {
	return k.prefix + "sk:{a" + strconv.FormatInt(aid, 10) + "}:" + name
}

// historyKey is the hash fingerprint -> first seen of activity aid's unexplained differences.
func (k records) historyKey(aid int64) string { return k.key(aid, "recon") }

// reportKey is activity aid's last comparison report, "<unix ns its reads began> <JSON>".
func (k records) reportKey(aid int64) string { return k.key(aid, "reconrep") }

// history is the record saveHistory last made of activity aid (empty when none).
func (k records) history(ctx context.Context, aid int64) (map[string]string, error) {
	return k.rds.HgetallCtx(ctx, k.historyKey(aid))
}

// saveHistory replaces activity aid's record of unexplained differences (fingerprint -> first
// seen) with seen, kept for ttl.
func (k records) saveHistory(ctx context.Context, aid int64, seen map[string]string, ttl time.Duration) error {
	key := k.historyKey(aid)
	pipe, err := k.rds.TxPipeline()
	if err != nil {
		return err
	}
	pipe.Del(ctx, key)
	if len(seen) > 0 {
		pipe.HSet(ctx, key, seen)
		pipe.PExpire(ctx, key, ttl)
	}
	_, err = pipe.Exec(ctx)
	return err
}

// saveReport records activity aid's last comparison report, whose reads began at startedNs
// (unix ns), for ttl.
func (k records) saveReport(ctx context.Context, aid, startedNs int64, report []byte, ttl time.Duration) error {
	return k.rds.SetexCtx(ctx, k.reportKey(aid), strconv.FormatInt(startedNs, 10)+" "+string(report),
		max(int(ttl/time.Second), 1))
}

// lastReport is activity aid's last comparison report and when its reads began (unix ns); ok
// false when none is kept.
func (k records) lastReport(ctx context.Context, aid int64) (startedNs int64, report []byte, ok bool, err error) {
	v, err := k.rds.GetCtx(ctx, k.reportKey(aid))
	if err != nil || v == "" {
		return 0, nil, false, err
	}
	at, rest, found := strings.Cut(v, " ")
	if startedNs, err = strconv.ParseInt(at, 10, 64); !found || err != nil {
		return 0, nil, false, fmt.Errorf("reconcile report of %d: malformed %.40q", aid, v)
	}
	return startedNs, []byte(rest), true, nil
}
