package stock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	pkgerrors "github.com/pkg/errors"
	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/breaker"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/xerr"
)

var (
	//go:embed scripts/warmup.lua
	warmupLua string
	//go:embed scripts/reserve.lua
	reserveLua string
	//go:embed scripts/confirm.lua
	confirmLua string
	//go:embed scripts/release.lua
	releaseLua string
	//go:embed scripts/expire_due.lua
	expireDueLua string
	//go:embed scripts/adjust.lua
	adjustLua string
	//go:embed scripts/restore.lua
	restoreLua string
	//go:embed scripts/acked.lua
	ackedLua string
	//go:embed scripts/unsent.lua
	unsentLua string
	//go:embed scripts/order.lua
	orderLua string
	//go:embed scripts/entry.lua
	entryLua string
	//go:embed scripts/claim_epoch.lua
	claimEpochLua string
	//go:embed scripts/lost.lua
	lostLua string
	//go:embed scripts/wipe.lua
	wipeLua string
	//go:embed scripts/enter.lua
	enterLua string
	//go:embed scripts/draw_advance.lua
	drawAdvanceLua string
	//go:embed scripts/restore_holdings.lua
	restoreHoldingsLua string
	//go:embed scripts/restore_entries.lua
	restoreEntriesLua string
	//go:embed scripts/restore_losers.lua
	restoreLosersLua string
	//go:embed scripts/rebuild.lua
	rebuildLua string
	//go:embed scripts/losers.lua
	losersLua string
	//go:embed scripts/end_sale.lua
	endSaleLua string
	//go:embed scripts/edit_meta.lua
	editMetaLua string

	warmupScript          = newScript("warmup", warmupArgs{}, warmupLua)
	reserveScript         = newScript("reserve", nil, reserveLuaConstants, orderLua, entryLua, unsentLua, reserveLua)
	confirmScript         = newScript("confirm", confirmArgs{}, orderLua, entryLua, unsentLua, confirmLua)
	releaseScript         = newScript("release", releaseArgs{}, orderLua, entryLua, unsentLua, releaseLua)
	expireDueScript       = newScript("expire_due", expireDueArgs{}, orderLua, entryLua, expireDueLua)
	adjustScript          = newScript("adjust", adjustArgs{}, entryLua, unsentLua, adjustLua)
	restoreScript         = newScript("restore", restoreArgs{}, orderLua, rebuildLua, restoreLua)
	restoreHoldingsScript = newScript("restore_holdings", restoreHoldingsArgs{}, rebuildLua, restoreHoldingsLua)
	ackedScript           = newScript("acked", ackedArgs{}, ackedLua)
	claimEpochScript      = newScript("claim_epoch", claimEpochArgs{}, claimEpochLua)
	lostScript            = newScript("lost", lostArgs{}, lostLua)
	wipeScript            = newScript("wipe", nil, wipeLua)
	enterScript           = newScript("enter", enterArgs{}, entryLua, unsentLua, enterLua)
	drawAdvanceScript     = newScript("draw_advance", drawAdvanceArgs{}, losersLua, drawAdvanceLua)
	restoreEntriesScript  = newScript("restore_entries", restoreEntriesArgs{}, rebuildLua, restoreEntriesLua)
	restoreLosersScript   = newScript("restore_losers", restoreLosersArgs{}, losersLua, rebuildLua, restoreLosersLua)
	endSaleScript         = newScript("end_sale", endSaleArgs{}, endSaleLua)
	editMetaScript        = newScript("edit_meta", editMetaArgs{}, editMetaLua)

	allScripts = []*script{warmupScript, reserveScript, confirmScript, releaseScript,
		expireDueScript, adjustScript, restoreScript, restoreHoldingsScript, ackedScript, claimEpochScript, lostScript,
		wipeScript, enterScript, drawAdvanceScript, restoreEntriesScript, restoreLosersScript, endSaleScript,
		editMetaScript}
)

// LoadScripts loads every script (SCRIPT LOAD) so that EVALSHA never meets NOSCRIPT,
// which go-zero's Redis breaker would count as a failure. Call it before serving, and again
// once a Redis that lost its script cache answers (the rpc's probe does). It tries every
// script even when one fails: right after Redis comes back the breaker still drops a share of
// calls, and a load that stopped at its first drop would refill the cache only when all of
// them passed at once, so each probe would start over (CI saw pay stay BUSY for a minute).
// With via (a client around go-zero's breaker, internal/redisx) the loads go through it and
// none is dropped: through the breaker, while the scripts were missing every script call
// failed with NOSCRIPT and kept the breaker open, which dropped the loads in turn (a restart
// under load stayed BUSY for over 60 s). Only via's first client is used.
func (s *Store) LoadScripts(ctx context.Context, via ...red.Scripter) error {
	load := func(src string) error {
		_, err := s.rds.ScriptLoadCtx(ctx, src)
		return err
	}
	if len(via) > 0 {
		load = func(src string) error { return via[0].ScriptLoad(ctx, src).Err() }
	}
	var errs []error
	for _, sc := range allScripts {
		if err := load(sc.src); err != nil {
			errs = append(errs, fmt.Errorf("load script %s: %w", sc.name, err))
		}
	}
	return errors.Join(errs...)
}

// script is one embedded Lua file: its name (for errors), its own file (own), its arguments
// struct (args, nil while it reads ARGV by number), its source (for SCRIPT LOAD) and go-zero's
// EVALSHA wrapper around it.
type script struct {
	name, own, src string
	args           any
	*redis.Script
}

// newScript is the script whose own file is the last of parts, after the shared files it
// uses. With an arguments struct args, the source starts with the constants of args's fields
// (argConstants), which the script reads ARGV by.
func newScript(name string, args any, parts ...string) *script {
	src := strings.Join(parts, "")
	if args != nil {
		src = argConstants(args) + src
	}
	return &script{name: name, own: parts[len(parts)-1], src: src, args: args, Script: redis.NewScript(src)}
}

// run executes a script of activity aid (in the span stock.<script> when ctx is traced) and
// turns a negative first element into its typed error.
func (s *Store) run(ctx context.Context, sc *script, aid int64, keys []string, args ...any) (res []any, err error) {
	var code int64
	ctx, span := startScript(ctx, sc, aid)
	defer func() { endScript(span, code, err) }()
	v, err := s.rds.ScriptRunCtx(ctx, sc.Script, keys, args...)
	if err != nil {
		// An infrastructure error enters logic here: keep where it happened (the edge,
		// xerr's interceptor, logs it once with this stack) and type it as a dependency
		// failure (BUSY, never INTERNAL).
		err = pkgerrors.Wrapf(err, "stock script %s", sc.name)
		if mayRun(err) {
			err = fmt.Errorf("%w (%w)", err, errUnsure)
		}
		return nil, xerr.Unavailable(err)
	}
	res, ok := v.([]any)
	if !ok || len(res) == 0 {
		return nil, fmt.Errorf("stock script %s: unexpected reply %v", sc.name, v)
	}
	code, _ = res[0].(int64)
	if code < 0 {
		return nil, codeError(code)
	}
	return res, nil
}

// sellByMs is a sell-by time as reserve's and enter's ARGV carry it: ms since the epoch, 0 for none.
func sellByMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixMilli(), 1)
}

func toInt(res []any, i int) int64 {
	if i >= len(res) {
		return 0
	}
	switch v := res[i].(type) {
	case int64:
		return v
	case string:
		n, _ := strconv.ParseInt(v, 10, 64)
		return n
	}
	return 0
}

func toString(res []any, i int) string {
	if i >= len(res) {
		return ""
	}
	switch v := res[i].(type) {
	case string: // every field a script returns, but for integers
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprint(res[i])
}

// dep types a Redis error as a dependency failure (xerr.Unavailable, BUSY at the edge),
// with the stack of where it entered logic. redis.Nil is not a failure: callers test for
// it before.
func dep(err error) error {
	if err == nil {
		return nil
	}
	return xerr.Unavailable(pkgerrors.WithStack(err))
}

// firstErr returns the first non-nil error of checks run in order.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// errUnsure marks a script call that failed once the script may have been sent: it may still
// reach Redis and run (a request held in a partitioned link, delivered when it heals).
var errUnsure = errors.New("the script may still reach Redis")

// Unsure reports whether err is a script call that failed with the script perhaps still on its
// way to Redis (not refused by the breaker, not a failed dial): its effect is unknown until the
// sell-by the call carried has passed on Redis's clock.
func Unsure(err error) bool { return errors.Is(err, errUnsure) }

// mayRun reports whether a script call that failed with err may have been sent.
func mayRun(err error) bool {
	var op *net.OpError
	if errors.Is(err, breaker.ErrServiceUnavailable) || errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	return true
}

// The Acker's script call (acked.lua), the second a reservation runs through Store.run.

// MaxAckedBatch bounds the entries of one Acked call.
const MaxAckedBatch = 256

// Acked deletes from the outbox the entries es (1..MaxAckedBatch, in Kafka) whose epoch the stock
// hash still holds, reporting each in same, with the hash's epoch and seq and the replication id of
// the Redis serving it (line: a new one after a failover or a restart); ErrNotWarm when it is gone.
func (o Outbox) Acked(ctx context.Context, aid int64, es []Entry) (same []bool, epoch, seq int64, line string,
	err error) {
	s := o.s
	if len(es) == 0 || len(es) > MaxAckedBatch {
		return nil, 0, 0, "", fmt.Errorf("stock: %d entries to check, want 1..%d", len(es), MaxAckedBatch)
	}
	list := make([]ackedEntryArgs, len(es))
	for i, e := range es {
		list[i] = ackedEntryArgs{Epoch: e.Epoch, ID: e.ID}
	}
	res, err := s.run(ctx, ackedScript, aid, []string{s.keys.Stock(aid), s.keys.Events(aid)},
		argvOf(ackedArgs{Entries: list})...)
	if err != nil {
		return nil, 0, 0, "", err
	}
	head := fields[ackedReply]()
	if len(res) != head+len(es) {
		return nil, 0, 0, "", fmt.Errorf("stock script acked: %d results for %d entries", len(res)-head, len(es))
	}
	same = make([]bool, len(es))
	for i := range es { // then one flag per entry
		same[i] = toInt(res, head+i) == 1
	}
	h := decoded[ackedReply](res)
	return same, h.Epoch, h.Seq, h.Line, nil
}
