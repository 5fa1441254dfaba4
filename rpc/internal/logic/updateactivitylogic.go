package logic

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/internal/activity"
	"github.com/seckill/seckill/rpc/internal/svc"
	"github.com/seckill/seckill/rpc/inventory"

	"github.com/zeromicro/go-zero/core/logx"
)

// editLockWait bounds the wait for the activity's load lock (a warm-up or rebuild running):
// then BUSY, and the merchant retries (with its Idempotency-Key, safely).
const editLockWait = 2 * time.Second

type UpdateActivityLogic struct {
	ctx    context.Context
	svcCtx *svc.ServiceContext
	logx.Logger
}

func NewUpdateActivityLogic(ctx context.Context, svcCtx *svc.ServiceContext) *UpdateActivityLogic {
	return &UpdateActivityLogic{
		ctx:    ctx,
		svcCtx: svcCtx,
		Logger: logx.WithContext(ctx),
	}
}

// UpdateActivity replaces what create set of the merchant's activity, before its start only
// (docs/DESIGN.md, "Editing an activity before its start"). Under the activity's load lock
// (the one every warm-up and backfill holds while it reads MySQL and writes Redis), one MySQL
// transaction locks the row, refuses STARTED by the database's clock, writes the edit and the
// Idempotency-Key, and runs edit_meta.lua, which refuses STARTED by Redis's clock (what
// reservations are decided by) and rewrites the warmed copy; the transaction commits only
// after the script did, so an edit is in both books or in neither.
func (l *UpdateActivityLogic) UpdateActivity(in *inventory.UpdateActivityReq) (*inventory.ActivityResp, error) {
	if err := checkEdit(in); err != nil {
		return nil, err
	}
	a, err := ownedActivity(l.ctx, l.svcCtx, in.ActivityId, in.MerchantId)
	if err != nil {
		return nil, err
	}
	if in.IdempotencyKey != "" {
		if prior, err := l.edited(in); prior != nil || err != nil {
			return prior, err
		}
	}
	if time.Now().Unix() >= a.StartTime {
		return nil, xerr.ErrStarted
	}
	if err := domain.CheckStartsLater(in.StartTime, time.Now()); err != nil {
		return nil, err
	}
	if err := l.checkTotal(in, a); err != nil {
		return nil, err
	}
	release, err := l.lock(in.ActivityId)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := l.apply(in); err != nil {
		return nil, err
	}
	b, err := l.svcCtx.Activities.FindOne(l.ctx, uint64(in.ActivityId))
	if err != nil {
		return nil, activity.DBError(fmt.Errorf("read activity %d: %w", in.ActivityId, err))
	}
	d, err := drawOf(l.ctx, l.svcCtx, b)
	if err != nil {
		return nil, err
	}
	l.Infof("merchant %d edited activity %d", in.MerchantId, in.ActivityId)
	return &inventory.ActivityResp{Activity: activityOf(b), Draw: d}, nil
}

// apply runs the edit: MySQL and Redis as one step (see UpdateActivity).
func (l *UpdateActivityLogic) apply(in *inventory.UpdateActivityReq) error {
	e := model.ActivityEdit{Id: uint64(in.ActivityId), MerchantId: uint64(in.MerchantId), SkuId: uint64(in.SkuId),
		Name: in.Name, StartTime: in.StartTime, EndTime: in.EndTime, PerUserLimit: uint64(in.PerUserLimit),
		PayTimeoutSeconds: uint64(in.PayTimeoutSeconds), DrawSeconds: uint64(in.DrawSeconds), Price: uint64(in.Price)}
	next := model.Activity{Id: e.Id, StartTime: e.StartTime, EndTime: e.EndTime,
		PayTimeoutSeconds: e.PayTimeoutSeconds, DrawSeconds: e.DrawSeconds}
	redisEdit := domain.Activity{ActivityID: in.ActivityId, SkuID: in.SkuId, Name: in.Name, Start: in.StartTime,
		End: in.EndTime, Limit: in.PerUserLimit, PayTimeout: in.PayTimeoutSeconds,
		ExpireAt: l.svcCtx.Loader.KeysExpireAt(next), DrawAt: activity.DrawAtMs(next), Price: in.Price}
	var key *model.IdempotencyKey
	if in.IdempotencyKey != "" {
		key = &model.IdempotencyKey{MerchantId: uint64(in.MerchantId), IdemKey: in.IdempotencyKey,
			Fingerprint: in.IdempotencyFp}
	}
	var warm, applied bool
	before, err := l.svcCtx.Activities.EditBeforeStart(l.ctx, e, key, func(*model.Activity) error {
		var err error
		warm, err = l.svcCtx.Store.Edit(l.ctx, redisEdit)
		applied = err == nil
		return err
	})
	switch {
	case errors.Is(err, model.ErrNotFound):
		return xerr.ErrActivityNotFound
	case errors.Is(err, model.ErrStarted):
		return xerr.ErrStarted
	case errors.Is(err, model.ErrKeyTaken): // a concurrent edit with the key committed first
		if prior, err := l.edited(in); prior != nil || err != nil {
			return err
		}
		return xerr.Unavailable(errors.New("edit activity: the idempotency key is taken but not found"))
	case err != nil && applied && warm:
		l.undo(before)
		return activity.DBError(fmt.Errorf("edit activity %d: %w", in.ActivityId, err))
	case err != nil:
		var xe *xerr.Error
		if errors.As(err, &xe) {
			return err
		}
		return activity.DBError(fmt.Errorf("edit activity %d: %w", in.ActivityId, err))
	}
	if warm {
		if err := l.svcCtx.Store.Activate(l.ctx, in.ActivityId, in.EndTime+in.PayTimeoutSeconds); err != nil {
			l.Errorf("activity %d edited, but its due time in the active set is not: %v", in.ActivityId, err)
		}
	}
	return nil
}

// undo puts the warmed copy back to what MySQL kept (before) when the transaction failed after
// the script rewrote it (the commit failed): best effort, logged.
func (l *UpdateActivityLogic) undo(before *model.Activity) {
	if before == nil {
		l.Errorf("edit: the warmed copy was rewritten but MySQL's transaction failed; its prior row is unknown")
		return
	}
	_, err := l.svcCtx.Store.Edit(context.WithoutCancel(l.ctx), domain.Activity{ActivityID: int64(before.Id),
		SkuID: int64(before.SkuId), Name: before.Name, Start: before.StartTime, End: before.EndTime,
		Limit: int64(before.PerUserLimit), PayTimeout: int64(before.PayTimeoutSeconds),
		ExpireAt: l.svcCtx.Loader.KeysExpireAt(*before), DrawAt: activity.DrawAtMs(*before),
		Price: int64(before.Price)})
	if err != nil {
		l.Errorf("edit of activity %d: MySQL's transaction failed after Redis was rewritten, and the undo "+
			"failed (%v): Redis holds the edit, MySQL does not", before.Id, err)
	}
}

// lock takes the activity's load lock (stock.Store.RebuildLock), waiting up to editLockWait.
func (l *UpdateActivityLogic) lock(aid int64) (release func(), err error) {
	lk := l.svcCtx.Store.Lock(aid, "")
	lk.SetExpire(10)
	deadline := time.Now().Add(editLockWait)
	for {
		ok, err := lk.AcquireCtx(l.ctx)
		if err != nil {
			return nil, xerr.Unavailable(err)
		}
		if ok {
			return func() {
				if _, err := lk.ReleaseCtx(context.WithoutCancel(l.ctx)); err != nil {
					l.Errorf("edit of activity %d: release the load lock: %v", aid, err)
				}
			}, nil
		}
		if time.Now().After(deadline) {
			return nil, xerr.New(xerr.Busy, "the activity is being loaded into Redis, retry")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkTotal holds an edit's stock, when sent, to the activity's total now: the warmed copy's
// (what /stock changed last) or MySQL's.
func (l *UpdateActivityLogic) checkTotal(in *inventory.UpdateActivityReq, a *model.Activity) error {
	if !in.HasTotal {
		return nil
	}
	total := int64(a.Total)
	snap, err := l.svcCtx.Store.Stock(l.ctx, in.ActivityId)
	switch {
	case err == nil:
		total = snap.Total
	case !errors.Is(err, stock.ErrNotWarm):
		return err
	}
	if in.Total != total {
		return xerr.Newf(xerr.InvalidArgument,
			"stock must equal the activity's total now (%d): change it with POST .../stock", total)
	}
	return nil
}

// edited answers an edit whose merchant's Idempotency-Key is recorded: the activity as it is
// (the same fingerprint on the same activity) or IDEMPOTENCY_CONFLICT; nil, nil when the key is
// not recorded.
func (l *UpdateActivityLogic) edited(in *inventory.UpdateActivityReq) (*inventory.ActivityResp, error) {
	k, err := l.svcCtx.Activities.FindKey(l.ctx, uint64(in.MerchantId), in.IdempotencyKey)
	if errors.Is(err, model.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, activity.DBError(fmt.Errorf("edit activity: read the idempotency key: %w", err))
	}
	if k.Fingerprint != in.IdempotencyFp || int64(k.ActivityId) != in.ActivityId {
		return nil, xerr.ErrIdempotencyConflict
	}
	a, err := l.svcCtx.Activities.FindOne(l.ctx, k.ActivityId)
	if err != nil {
		return nil, activity.DBError(fmt.Errorf("edit activity: read activity %d of the idempotency key: %w",
			k.ActivityId, err))
	}
	d, err := drawOf(l.ctx, l.svcCtx, a)
	if err != nil {
		return nil, err
	}
	return &inventory.ActivityResp{Activity: activityOf(a), Draw: d}, nil
}

// checkEdit holds an edit to create's bounds (domain's, which the gateway checks too) and the
// merchant the gateway names.
func checkEdit(in *inventory.UpdateActivityReq) error {
	if in.MerchantId < 1 {
		return errNoMerchant
	}
	if err := domain.CheckActivityID(in.ActivityId); err != nil {
		return err
	}
	return domain.CheckActivityEdit(domain.NewActivity{SkuID: in.SkuId, Name: in.Name, Stock: in.Total,
		StartTime: in.StartTime, EndTime: in.EndTime, PerUserLimit: in.PerUserLimit,
		PayTimeoutSeconds: in.PayTimeoutSeconds, DrawSeconds: in.DrawSeconds, Price: in.Price},
		in.HasTotal, time.Now())
}
