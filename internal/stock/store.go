// Package stock is the Redis half of the inventory: key names, the Lua scripts that
// check and change stock in one atomic step, and their typed results.
package stock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	pkgerrors "github.com/pkg/errors"
	red "github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/redis"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/event"
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
	//go:embed scripts/fence.lua
	fenceLua string
	//go:embed scripts/lost.lua
	lostLua string
	//go:embed scripts/wipe.lua
	wipeLua string

	warmupScript    = newScript("warmup", warmupLua)
	reserveScript   = newScript("reserve", unsentLua+reserveLua)
	confirmScript   = newScript("confirm", unsentLua+confirmLua)
	releaseScript   = newScript("release", unsentLua+releaseLua)
	expireDueScript = newScript("expire_due", expireDueLua)
	adjustScript    = newScript("adjust", adjustLua)
	restoreScript   = newScript("restore", restoreLua)
	ackedScript     = newScript("acked", ackedLua)
	fenceScript     = newScript("fence", fenceLua)
	lostScript      = newScript("lost", lostLua)
	wipeScript      = newScript("wipe", wipeLua)

	allScripts = []*script{warmupScript, reserveScript, confirmScript, releaseScript,
		expireDueScript, adjustScript, restoreScript, ackedScript, fenceScript, lostScript, wipeScript}
)

// Bounds for values coming from callers.
const (
	MaxExpireBatch  = 1000
	DefaultReqTTL   = 24 * 60 * 60 // scripts' ARGV, unused: a request id is remembered as long as the activity's keys
	orderNoAttempts = 3
	// RestoreBatch is how many orders one restore script call writes.
	RestoreBatch = 500
	// maxKeyLife bounds how far out a key may be set to expire (the scripts check the
	// same 20 years): twice domain.MaxHorizon, so a 10-year activity plus its pay timeout
	// and grace fits and a nanosecond end does not.
	maxKeyLife = 2 * domain.MaxHorizon
)

// Store runs the inventory scripts against one Redis (node or cluster).
type Store struct {
	rds    *redis.Redis
	keys   Keys
	reqTTL int
	// orderKey tags order numbers (domain.NewOrderNo); nil: the unkeyed checksum.
	orderKey []byte
	// ack, when set, is given the outbox entry of every change a caller is answered for
	// (reserve, pay, cancel, expire one, adjust) before the call returns: nil when the
	// change may be acknowledged, an error (BUSY) when it may not.
	ack Ack
}

// Entry is an outbox entry as a script wrote it: its stream id and fields, and the epoch
// of the stock hash it was written under (the field event.FieldEpoch).
type Entry struct {
	ActivityID int64
	ID         string
	Values     map[string]any
	Epoch      int64
	Seq        int64 // the stock hash's change count 'seq' the change made (event.FieldSeq; 0: none)
}

// Ack decides whether the change that wrote e may be acknowledged (relay.Acker: once its
// event is in Kafka and the book that made it still sells). An error is returned to the
// caller as it is; the change stays made and its entry stays in the outbox, so a retry of
// the same call answers it (a replay).
type Ack func(ctx context.Context, e Entry) error

// SetAck makes every acknowledged change wait for ack (nil: answer once Redis has it).
// Call it before serving.
func (s *Store) SetAck(ack Ack) { s.ack = ack }

// wantEntry is reserve's ARGV[8]: "1" when the script is to return its outbox entry's
// fields (an ack hook reads them), "0" when only the entry id is needed.
func (s *Store) wantEntry() string {
	if s.ack == nil {
		return "0"
	}
	return "1"
}

// acked hands the entry at res[i] (id) and res[i+1] (fields) to the ack hook, if any.
func (s *Store) acked(ctx context.Context, aid int64, res []any, i int) error {
	if s.ack == nil {
		return nil
	}
	e, err := entryAt(aid, res, i)
	if err != nil {
		return err
	}
	return s.ack(ctx, e)
}

// ackUnsent hands to the ack hook, in order, the entries of an already-made change that
// a script found still in the outbox (res[i]: unsent.lua's flat list; absent or empty:
// all in Kafka already), so a replay, an "already paid" or "already cancelled", is
// answered only once what it confirms is in Kafka, as the first answer would have been.
func (s *Store) ackUnsent(ctx context.Context, aid int64, res []any, i int) error {
	if s.ack == nil || i >= len(res) {
		return nil
	}
	list, ok := res[i].([]any)
	if !ok {
		return fmt.Errorf("stock script reply: bad unsent entries %v", res[i])
	}
	for j := 0; j+1 < len(list); j += 2 {
		e, err := entryAt(aid, list, j)
		if err != nil {
			return err
		}
		if err := s.ack(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// entryAt parses the entry a script returned at res[i], res[i+1].
func entryAt(aid int64, res []any, i int) (Entry, error) {
	if i+1 >= len(res) {
		return Entry{}, fmt.Errorf("stock script reply without its outbox entry: %v", res)
	}
	fields, ok := res[i+1].([]any)
	if !ok || len(fields)%2 != 0 {
		return Entry{}, fmt.Errorf("stock script reply: bad outbox entry fields %v", res[i+1])
	}
	e := Entry{ActivityID: aid, ID: toString(res, i), Values: make(map[string]any, len(fields)/2)}
	for j := 0; j < len(fields); j += 2 {
		e.Values[toString(fields, j)] = toString(fields, j+1)
	}
	e.Epoch, _ = strconv.ParseInt(fmt.Sprint(e.Values[event.FieldEpoch]), 10, 64)
	e.Seq, _ = strconv.ParseInt(fmt.Sprint(e.Values[event.FieldSeq]), 10, 64)
	return e, nil
}

// NewStore returns a Store using keys under the given naming.
func NewStore(rds *redis.Redis, keys Keys) *Store {
	return &Store{rds: rds, keys: keys, reqTTL: DefaultReqTTL}
}

// Keys returns the key naming the store uses.
func (s *Store) Keys() Keys { return s.keys }

// Redis returns the client.
func (s *Store) Redis() *redis.Redis { return s.rds }

// LoadScripts loads every script (SCRIPT LOAD) so that EVALSHA never meets NOSCRIPT,
// which go-zero's Redis breaker would count as a failure. Call it before serving.
func (s *Store) LoadScripts(ctx context.Context) error {
	for _, sc := range allScripts {
		if _, err := s.rds.ScriptLoadCtx(ctx, sc.src); err != nil {
			return fmt.Errorf("load script %s: %w", sc.name, err)
		}
	}
	return nil
}

// script is one embedded Lua file: its name (for errors), its source (for SCRIPT LOAD)
// and go-zero's EVALSHA wrapper around it.
type script struct {
	name, src string
	*redis.Script
}

func newScript(name, src string) *script {
	return &script{name: name, src: src, Script: redis.NewScript(src)}
}

// Meta is what warm-up needs to know about an activity.
type Meta struct {
	ActivityID int64
	SkuID      int64
	Name       string
	Total      int64
	Remaining  int64
	Locked     int64
	Sold       int64
	Start      int64 // unix seconds
	End        int64 // unix seconds
	Limit      int64
	PayTimeout int64 // seconds
	ExpireAt   int64 // unix seconds: when the activity's keys go (end + pay timeout + grace)
	// Epoch is inventory.epoch of the warm-up or rebuild that wrote the hash (0 in a hash
	// written before epochs existed).
	Epoch int64
}

// LastDue is when the activity's last order can fall due (unix seconds): its end plus
// its pay timeout. The active set is scored by it, and keys outlive it by the grace.
func (m Meta) LastDue() int64 { return m.End + m.PayTimeout }

// Warmup creates the stock hash if absent and records the activity as active.
// It never overwrites live stock: created is false when the hash already existed.
func (s *Store) Warmup(ctx context.Context, m Meta) (created bool, remaining int64, err error) {
	if m.ActivityID <= 0 || m.Total < 0 || m.Remaining < 0 || m.Locked < 0 || m.Sold < 0 ||
		m.Remaining+m.Locked+m.Sold != m.Total || m.End <= m.Start || m.Limit < 1 || m.PayTimeout < 1 ||
		m.Epoch < 0 {
		return false, 0, xerr.Newf(xerr.InvalidArgument, "bad activity for warm-up: %+v", m)
	}
	// The script checks it too; bounding it here names the activity in the error.
	if now := time.Now(); m.ExpireAt <= now.Unix() || m.ExpireAt > now.Add(maxKeyLife).Unix() {
		return false, 0, xerr.Newf(xerr.InvalidArgument,
			"activity %d: keys' expire-at %d is not within %v of now", m.ActivityID, m.ExpireAt, maxKeyLife)
	}
	res, err := s.run(ctx, warmupScript, []string{s.keys.Stock(m.ActivityID), s.keys.Fence(m.ActivityID)},
		m.Total, m.Remaining, m.Locked, m.Sold, m.Start, m.End, m.Limit, m.PayTimeout, m.SkuID,
		m.ExpireAt, m.Name, m.Epoch)
	if err != nil {
		return false, 0, err
	}
	return toInt(res, 0) == 1, toInt(res, 1), nil
}

// Fence claims epoch for a loss rebuild of aid before it bumps inventory.epoch to it: from
// then on no stock hash of a lower epoch is written (Warmup answers ErrFenced), so a
// rebuilder that stalled after its own bump cannot write a hash behind MySQL's epoch.
// ErrAlreadyWarm when the stock hash exists (nothing written). The fence key expires at
// expireAt (unix s), with the activity's keys.
func (s *Store) Fence(ctx context.Context, aid, epoch, expireAt int64) error {
	_, err := s.run(ctx, fenceScript, []string{s.keys.Stock(aid), s.keys.Fence(aid)}, epoch, expireAt)
	return err
}

// MarkActive records the activity in the active set, scored by lastDue (Meta.LastDue: its
// end plus its pay timeout), which the relay and the jobs walk. Separate from the warm-up
// script: it is not in the activity's slot.
func (s *Store) MarkActive(ctx context.Context, aid, lastDue int64) error {
	_, err := s.rds.ZaddCtx(ctx, s.keys.Active(), lastDue, strconv.FormatInt(aid, 10))
	return dep(err)
}

// StockBack announces that an activity's stock may have come back (after a rebuild):
// gateways drop their sold-out mark for it (docs/DESIGN.md, "Sold-out at the edge").
func (s *Store) StockBack(ctx context.Context, aid int64) error {
	_, err := s.rds.PublishCtx(ctx, s.keys.StockBack(), strconv.FormatInt(aid, 10))
	return dep(err)
}

// Restore writes an activity's orders and its buyers' holdings (uid -> quantity held),
// read from MySQL, into Redis in batches of RestoreBatch, every key expiring at expireAt
// (unix s). It runs only while the stock hash is absent: ErrAlreadyWarm, with nothing
// more written, once it exists. Writing the same data twice is harmless.
func (s *Store) Restore(ctx context.Context, aid, expireAt int64, orders []Order, holdings map[int64]int64) error {
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	k := s.keys
	head := []string{k.Stock(aid), k.Pending(aid), k.Orders(aid)}
	for i := 0; i < len(orders); i += RestoreBatch {
		batch := orders[i:min(i+RestoreBatch, len(orders))]
		keys := append([]string(nil), head...)
		args := []any{expireAt, len(batch), s.reqTTL}
		for _, o := range batch {
			keys = append(keys, k.Order(aid, o.OrderNo), k.Req(aid, o.UID, o.RequestID))
			args = append(args, o.OrderNo, o.UID, o.Quantity, o.State, o.ExpireAt, o.RequestID, o.CreatedAt)
		}
		if _, err := s.run(ctx, restoreScript, keys, args...); err != nil {
			return err
		}
	}
	uids := make([]int64, 0, len(holdings))
	for uid, q := range holdings {
		if q > 0 {
			uids = append(uids, uid)
		}
	}
	slices.Sort(uids)
	for i := 0; i < len(uids); i += RestoreBatch {
		batch := uids[i:min(i+RestoreBatch, len(uids))]
		keys := append([]string(nil), head...)
		args := []any{expireAt, 0, s.reqTTL}
		for _, uid := range batch {
			keys = append(keys, k.User(aid, uid))
			args = append(args, holdings[uid])
		}
		if _, err := s.run(ctx, restoreScript, keys, args...); err != nil {
			return err
		}
	}
	return nil
}

// Reservation is a successful (or replayed) reservation.
type Reservation struct {
	OrderNo   string
	Quantity  int64
	Remaining int64
	ExpireAt  int64 // ms
	CreatedAt int64 // ms
	Replay    bool
	// State is the order's state now: reserved for a new reservation; for a replay whatever
	// it has become (paid, cancelled, expired).
	State string
}

// Reserve moves qty from remaining to locked for uid, idempotent per request id.
func (s *Store) Reserve(ctx context.Context, aid, uid, qty int64, requestID string) (Reservation, error) {
	return s.ReserveBy(ctx, aid, uid, qty, requestID, time.Time{})
}

// ReserveBy is Reserve that sells nothing once Redis's clock is past sellBy (zero: no
// limit): ErrLeaseLapsed, nothing written. Degrade mode passes the end of the instance's
// lease on the activity's mode, so that a reservation delayed on its way into Redis cannot
// sell after MySQL may have started to (degrade.Book).
func (s *Store) ReserveBy(ctx context.Context, aid, uid, qty int64, requestID string, sellBy time.Time) (Reservation, error) {
	if err := firstErr(domain.CheckActivityID(aid), domain.CheckUID(uid), domain.CheckQuantity(qty),
		domain.CheckRequestID(requestID)); err != nil {
		return Reservation{}, err
	}
	for attempt := 0; ; attempt++ {
		orderNo := domain.NewOrderNo(aid, s.orderKey)
		keys, orderPrefix := s.keys.reserve(aid, uid, requestID, orderNo)
		res, err := s.run(ctx, reserveScript, keys,
			aid, orderNo, uid, qty, requestID, sellByMs(sellBy), orderPrefix, s.wantEntry())
		if errors.Is(err, errOrderNoTaken) && attempt < orderNoAttempts {
			continue
		}
		if err != nil {
			return Reservation{}, err
		}
		if toInt(res, 0) == codeReplay {
			if len(res) < 7 { // the replayed order's keys are gone
				return Reservation{}, xerr.ErrOrderNotFound
			}
			if err := s.ackUnsent(ctx, aid, res, 7); err != nil {
				return Reservation{}, err
			}
			return Reservation{OrderNo: toString(res, 1), State: toString(res, 2), Quantity: toInt(res, 3),
				ExpireAt: toInt(res, 4), CreatedAt: toInt(res, 5), Remaining: toInt(res, 6), Replay: true}, nil
		}
		if err := s.acked(ctx, aid, res, 5); err != nil {
			return Reservation{}, err
		}
		return Reservation{OrderNo: toString(res, 1), Quantity: qty, Remaining: toInt(res, 2),
			ExpireAt: toInt(res, 3), CreatedAt: toInt(res, 4), State: domain.StateReserved}, nil
	}
}

// Confirm pays a reserved order of uid (>= 1; another user's order is ORDER_NOT_FOUND).
func (s *Store) Confirm(ctx context.Context, orderNo string, uid int64) error {
	aid, err := s.orderActivity(orderNo, uid)
	if err != nil {
		return err
	}
	k := s.keys
	res, err := s.run(ctx, confirmScript, []string{k.Stock(aid), k.Order(aid, orderNo), k.Pending(aid),
		k.Events(aid)}, aid, orderNo, uid)
	if err != nil {
		return err
	}
	if toString(res, 2) == "" { // already paid: no new entry
		return s.ackUnsent(ctx, aid, res, 3)
	}
	return s.acked(ctx, aid, res, 2)
}

// Release cancels (target domain.StateCancelled) or expires (domain.StateExpired, only once due) a
// reserved order of uid (>= 1; another user's order is ORDER_NOT_FOUND). Repeating it is not
// an error.
func (s *Store) Release(ctx context.Context, orderNo string, uid int64, target string) error {
	aid, err := s.orderActivity(orderNo, uid)
	if err != nil {
		return err
	}
	if target != domain.StateCancelled && target != domain.StateExpired {
		return xerr.Newf(xerr.InvalidArgument, "bad release target %q", target)
	}
	o, err := s.orderOwner(ctx, aid, orderNo)
	if err != nil {
		return err
	}
	if o != 0 && o != uid {
		return xerr.ErrOrderNotFound // another user's order is as good as absent
	}
	// An absent order (o == 0) still goes to the script: it answers ORDER_NOT_FOUND, or not
	// warm when the stock hash is gone as well (a Redis loss), without touching a user key.
	return s.release(ctx, aid, orderNo, uid, target)
}

// Expire expires one reserved order whose expire_at has passed, whoever owns it: the
// operator's path (the expiry job uses ExpireDue), never reachable with a buyer's identity.
func (s *Store) Expire(ctx context.Context, orderNo string) error {
	aid, err := s.CheckOrderNo(orderNo)
	if err != nil {
		return err
	}
	o, err := s.orderOwner(ctx, aid, orderNo)
	if err != nil {
		return err
	}
	if o == 0 {
		return xerr.ErrOrderNotFound
	}
	return s.release(ctx, aid, orderNo, o, domain.StateExpired)
}

func (s *Store) release(ctx context.Context, aid int64, orderNo string, owner int64, target string) error {
	k := s.keys
	res, err := s.run(ctx, releaseScript, []string{k.Stock(aid), k.Order(aid, orderNo), k.User(aid, owner),
		k.Pending(aid), k.Events(aid)}, aid, orderNo, owner, target, k.StockBack())
	if err != nil {
		return err
	}
	if toString(res, 2) == "" { // already in the target state: no new entry
		return s.ackUnsent(ctx, aid, res, 3)
	}
	return s.acked(ctx, aid, res, 2)
}

// orderOwner reads the order's uid, needed to name the user key the script touches. An
// absent order gives 0: the script then answers ORDER_NOT_FOUND, or not warm when the
// stock hash is gone as well, without touching that key.
func (s *Store) orderOwner(ctx context.Context, aid int64, orderNo string) (int64, error) {
	v, err := s.rds.HgetCtx(ctx, s.keys.Order(aid, orderNo), "uid")
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, dep(err)
	}
	return strconv.ParseInt(v, 10, 64)
}

// ExpireDue releases up to limit reserved orders whose expire_at has passed.
func (s *Store) ExpireDue(ctx context.Context, aid int64, limit int) ([]string, error) {
	if err := domain.CheckActivityID(aid); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxExpireBatch {
		return nil, xerr.Newf(xerr.InvalidArgument, "limit must be 1..%d", MaxExpireBatch)
	}
	k := s.keys
	now, err := s.now(ctx)
	if err != nil {
		return nil, err
	}
	due, err := s.rds.ZrangebyscoreWithScoresAndLimitCtx(ctx, k.Pending(aid), 0, now, 0, limit)
	if err != nil {
		return nil, dep(err)
	}
	if len(due) == 0 {
		// Nothing due, or nothing at all: a lost activity has no pending set either.
		if _, err := s.Stock(ctx, aid); err != nil {
			return nil, err
		}
		return nil, nil
	}
	orderNos := make([]string, len(due))
	cmds := make([]*red.StringCmd, len(due))
	err = s.rds.PipelinedCtx(ctx, func(p redis.Pipeliner) error {
		for i, d := range due {
			orderNos[i] = d.Key
			cmds[i] = p.HGet(ctx, k.Order(aid, d.Key), "uid")
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, dep(err)
	}
	keys := []string{k.Stock(aid), k.Pending(aid), k.Events(aid)}
	args := []any{aid, k.StockBack()}
	for i, ono := range orderNos {
		uid, _ := strconv.ParseInt(cmds[i].Val(), 10, 64) // a vanished order: the script drops it
		keys = append(keys, k.Order(aid, ono), k.User(aid, uid))
		args = append(args, ono)
	}
	res, err := s.run(ctx, expireDueScript, keys, args...)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(res)-1)
	for i := 1; i < len(res); i++ {
		out = append(out, toString(res, i))
	}
	return out, nil
}

// Counters are an activity's stock numbers.
type Counters struct {
	Total, Remaining, Locked, Sold int64
}

// Adjust adds (delta > 0) or withdraws (delta < 0) sellable stock.
func (s *Store) Adjust(ctx context.Context, aid, delta int64) (Counters, error) {
	if err := firstErr(domain.CheckActivityID(aid), domain.CheckDelta(delta)); err != nil {
		return Counters{}, err
	}
	res, err := s.run(ctx, adjustScript, []string{s.keys.Stock(aid), s.keys.Events(aid)}, aid, delta, s.keys.StockBack())
	if err != nil {
		return Counters{}, err
	}
	if err := s.acked(ctx, aid, res, 5); err != nil {
		return Counters{}, err
	}
	return Counters{Total: toInt(res, 1), Remaining: toInt(res, 2), Locked: toInt(res, 3),
		Sold: toInt(res, 4)}, nil
}

// Snapshot is the stock hash as read.
type Snapshot = Meta

// Counters returns the stock numbers of m.
func (m Meta) Counters() Counters {
	return Counters{Total: m.Total, Remaining: m.Remaining, Locked: m.Locked, Sold: m.Sold}
}

// Stock reads an activity's stock hash; ErrNotWarm when absent.
func (s *Store) Stock(ctx context.Context, aid int64) (Snapshot, error) {
	m, err := s.rds.HgetallCtx(ctx, s.keys.Stock(aid))
	if err != nil {
		return Snapshot{}, dep(err)
	}
	if _, ok := m["remaining"]; !ok {
		return Snapshot{}, ErrNotWarm
	}
	n := func(f string) int64 { v, _ := strconv.ParseInt(m[f], 10, 64); return v }
	return Snapshot{ActivityID: aid, SkuID: n("sku"), Name: m["name"], Start: n("start"), End: n("end"),
		Limit: n("limit"), PayTimeout: n("ttl"), ExpireAt: n("exp"), Total: n("total"),
		Remaining: n("remaining"), Locked: n("locked"), Sold: n("sold"), Epoch: n("epoch")}, nil
}

// MaxAckedBatch bounds the entries of one Acked call.
const MaxAckedBatch = 256

// Acked is told that entries es of activity aid (1..MaxAckedBatch) are in Kafka (produced
// by the Acker). Each whose epoch the stock hash still holds is deleted from the outbox
// (the relay need not produce it again), reported true in same; another epoch: false,
// nothing deleted. epoch is the hash's; ErrNotWarm when the hash is gone.
func (s *Store) Acked(ctx context.Context, aid int64, es []Entry) (same []bool, epoch, seq int64, err error) {
	if len(es) == 0 || len(es) > MaxAckedBatch {
		return nil, 0, 0, fmt.Errorf("stock: %d entries to check, want 1..%d", len(es), MaxAckedBatch)
	}
	args := make([]any, 0, 2*len(es))
	for _, e := range es {
		args = append(args, e.Epoch, e.ID)
	}
	res, err := s.run(ctx, ackedScript, []string{s.keys.Stock(aid), s.keys.Events(aid)}, args...)
	if err != nil {
		return nil, 0, 0, err
	}
	if len(res) != 3+len(es) {
		return nil, 0, 0, fmt.Errorf("stock script acked: %d results for %d entries", len(res)-3, len(es))
	}
	same = make([]bool, len(es))
	for i := range es {
		same[i] = toInt(res, 3+i) == 1
	}
	return same, toInt(res, 1), toInt(res, 2), nil
}

// Lost deletes the activity's stock hash while it is still of epoch: Redis was found to
// have lost acknowledged writes (relay.Acker), and the next call rebuilds the activity
// from MySQL. false: gone already or of another epoch (nothing deleted).
func (s *Store) Lost(ctx context.Context, aid, epoch int64) (bool, error) {
	res, err := s.run(ctx, lostScript, []string{s.keys.Stock(aid)}, epoch)
	if err != nil {
		return false, err
	}
	return toInt(res, 0) == 1, nil
}

// WipeChunk is how many orders one wipe script call deletes.
const WipeChunk = 500

// Wipe deletes, while the activity's stock hash is absent, what Redis still holds of its
// orders and buyers: every order hash the orders set lists, with its request-id and
// buyer keys, then the pending and orders sets (wipe.lua, WipeChunk orders a call). A
// loss rebuild runs it before Restore: a Redis that came back with part of its state
// would otherwise keep orders MySQL lacks, reserved, to return their stock on expiry.
// ErrAlreadyWarm when the stock hash exists (nothing more deleted).
func (s *Store) Wipe(ctx context.Context, aid int64) error {
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	keys, order, user, req := s.keys.wipe(aid)
	for {
		res, err := s.run(ctx, wipeScript, keys, order, user, req, WipeChunk)
		if err != nil {
			return err
		}
		if toInt(res, 2) == 0 {
			return nil
		}
	}
}

// Order is an order as Redis holds it.
type Order struct {
	OrderNo    string
	ActivityID int64
	UID        int64
	Quantity   int64
	State      string
	ExpireAt   int64 // ms
	CreatedAt  int64 // ms
	RequestID  string
}

// Order reads an order; xerr.ErrOrderNotFound when Redis does not hold it.
func (s *Store) Order(ctx context.Context, orderNo string) (Order, error) {
	aid, err := s.CheckOrderNo(orderNo)
	if err != nil {
		return Order{}, err
	}
	m, err := s.rds.HgetallCtx(ctx, s.keys.Order(aid, orderNo))
	if err != nil {
		return Order{}, dep(err)
	}
	if _, ok := m["state"]; !ok {
		return Order{}, xerr.ErrOrderNotFound
	}
	n := func(f string) int64 { v, _ := strconv.ParseInt(m[f], 10, 64); return v }
	return Order{OrderNo: orderNo, ActivityID: aid, UID: n("uid"), Quantity: n("qty"), State: m["state"],
		ExpireAt: n("expire_at"), CreatedAt: n("created_at"), RequestID: m["request_id"]}, nil
}

// OrderNos lists an activity's orders (the orders zset), oldest first.
func (s *Store) OrderNos(ctx context.Context, aid int64) ([]string, error) {
	nos, err := s.rds.ZrangeCtx(ctx, s.keys.Orders(aid), 0, -1)
	return nos, dep(err)
}

// ActiveIDs lists warm activities whose last due time (end + pay timeout) is at or after
// since (unix seconds).
func (s *Store) ActiveIDs(ctx context.Context, since int64) ([]int64, error) {
	pairs, err := s.rds.ZrangebyscoreWithScoresCtx(ctx, s.keys.Active(), since, 1<<62)
	if err != nil {
		return nil, dep(err)
	}
	ids := make([]int64, 0, len(pairs))
	for _, p := range pairs {
		if id, err := strconv.ParseInt(p.Key, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// now is Redis's clock in ms: the same clock the scripts use.
func (s *Store) now(ctx context.Context) (int64, error) {
	v, err := s.rds.EvalCtx(ctx, "local t = redis.call('TIME') return t[1] * 1000 + math.floor(t[2] / 1000)", nil)
	if err != nil {
		return 0, dep(err)
	}
	n, _ := v.(int64)
	return n, nil
}

func (s *Store) orderActivity(orderNo string, uid int64) (int64, error) {
	if uid < 1 {
		return 0, xerr.New(xerr.InvalidArgument, "uid must be >= 1 (the order's owner)")
	}
	return s.CheckOrderNo(orderNo)
}

// SetOrderKey sets the key that tags order numbers (config OrderKey); call it before use.
// Without one, the tag is an unkeyed checksum.
func (s *Store) SetOrderKey(key []byte) { s.orderKey = key }

// CheckOrderNo returns the activity of an order number this service could have issued:
// INVALID_ARGUMENT for a malformed one, ORDER_NOT_FOUND for one whose tag is wrong
// (forged, random, or from before tags), without reading anything.
func (s *Store) CheckOrderNo(orderNo string) (int64, error) {
	if _, ok := domain.ParseOrderNo(orderNo); !ok {
		return 0, xerr.New(xerr.InvalidArgument, "malformed order_no")
	}
	aid, ok := domain.VerifyOrderNo(orderNo, s.orderKey)
	if !ok {
		return 0, xerr.ErrOrderNotFound
	}
	return aid, nil
}

// run executes a script and turns a negative first element into its typed error.
func (s *Store) run(ctx context.Context, sc *script, keys []string, args ...any) ([]any, error) {
	v, err := s.rds.ScriptRunCtx(ctx, sc.Script, keys, args...)
	if err != nil {
		// An infrastructure error enters logic here: keep where it happened (the edge,
		// xerr's interceptor, logs it once with this stack) and type it as a dependency
		// failure (BUSY, never INTERNAL).
		return nil, xerr.Unavailable(pkgerrors.Wrapf(err, "stock script %s", sc.name))
	}
	res, ok := v.([]any)
	if !ok || len(res) == 0 {
		return nil, fmt.Errorf("stock script %s: unexpected reply %v", sc.name, v)
	}
	code, _ := res[0].(int64)
	if code < 0 {
		return nil, codeError(code)
	}
	return res, nil
}

// sellByMs is reserve's ARGV[6]: ms since the epoch, 0 for none.
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

// NewOrderNo is a fresh order number for activity aid, tagged with this store's order key
// (degrade mode writes orders straight to MySQL with it, so the tag check passes).
func (s *Store) NewOrderNo(aid int64) string { return domain.NewOrderNo(aid, s.orderKey) }

// Forget deletes whatever Redis still holds of an activity's book: its stock hash, pending
// and orders sets, outbox stream, missing mark, every order hash listed in the orders set
// with its request-id and user keys. Degrade mode calls it before the rebuild that hands
// the activity back to Redis (MySQL is then the complete book; what Redis kept is never
// trusted). Deleting twice is harmless. Plain commands, not wipe.lua: it runs as Redis
// comes back, possibly before the probe has loaded the scripts again (DESIGN.md, "Known
// traps": a NOSCRIPT counts against go-zero's breaker).
func (s *Store) Forget(ctx context.Context, aid int64) error {
	if err := domain.CheckActivityID(aid); err != nil {
		return err
	}
	k := s.keys
	nos, err := s.rds.ZrangeCtx(ctx, k.Orders(aid), 0, -1)
	if err != nil {
		return dep(err)
	}
	for _, no := range nos {
		vals, err := s.rds.HmgetCtx(ctx, k.Order(aid, no), "uid", "request_id")
		if err != nil {
			return dep(err)
		}
		keys := []string{k.Order(aid, no)}
		if uid, err := strconv.ParseInt(vals[0], 10, 64); err == nil && uid > 0 {
			keys = append(keys, k.User(aid, uid))
			if len(vals) > 1 && vals[1] != "" {
				keys = append(keys, k.Req(aid, uid, vals[1]))
			}
		}
		if _, err := s.rds.DelCtx(ctx, keys...); err != nil {
			return dep(err)
		}
	}
	_, err = s.rds.DelCtx(ctx, k.Stock(aid), k.Pending(aid), k.Orders(aid), k.Events(aid), k.Missing(aid))
	return dep(err)
}

// OutboxLen is the number of entries in an activity's outbox stream the relay has not
// moved to Kafka yet (degrade mode waits for 0 before MySQL sells).
func (s *Store) OutboxLen(ctx context.Context, aid int64) (int64, error) {
	var n *red.IntCmd
	err := s.rds.PipelinedCtx(ctx, func(p redis.Pipeliner) error {
		n = p.XLen(ctx, s.keys.Events(aid))
		return nil
	})
	if err != nil {
		return 0, dep(err)
	}
	return n.Val(), nil
}
