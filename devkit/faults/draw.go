package faults

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/devkit/apiclient"
	"github.com/seckill/seckill/devkit/loadgen"
	"github.com/seckill/seckill/internal/authtoken"
	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/stock"
	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// The draw rows' activity: buyers arrive over drawArrive and enter a window of drawSeconds
// (docs/API.md, "The opening draw"); the margin covers their retries through a fault.
const (
	drawArrive  = 3 * time.Second
	drawSeconds = 8
)

// drawRows are the opening draw's rows (issue 22): the draw is decided once, whatever
// fails, and its winners are those draw.Order gives for the entries and seed MySQL holds.
func drawRows() []Row {
	var killed, flushed []string
	return []Row{
		// Chunks of one entrant make the draw last long enough to be killed in: the restarted
		// service waits out the dead one's lease and resumes at the cursor, with MySQL's seed.
		{Name: "draw: kill -9 of the drawing inventory service mid-draw", Forbid: "INTERNAL", Expect: "BUSY",
			Inventory: func(c *rpcserver.Config) { c.Draw.Chunk = 1 }, Burst: drawBurst,
			Inject: recordingScaled(&killed, killMidDraw), Check: drawCheck(&killed)},
		// The rebuild after the loss restores the acknowledged entries from draw_entry.
		{Name: "draw: Redis emptied (FLUSHALL) during the entry window", Forbid: "INTERNAL", Burst: drawBurst,
			Inject: recordingScaled(&flushed, flushInWindow), Check: drawCheck(&flushed)},
	}
}

func drawBurst(b *Burst) {
	b.DrawSeconds, b.Arrive = drawSeconds, drawArrive
}

// recordingScaled is an Inject running f and keeping what it says in into.
func recordingScaled(into *[]string, f func(context.Context, *System, Scale) ([]string, error)) func(
	context.Context, *System, Scale) error {
	return func(ctx context.Context, s *System, sc Scale) error {
		var err error
		*into, err = f(ctx, s, sc)
		return err
	}
}

// killMidDraw waits for the hot activity's draw to have recorded a chunk (cursor > 0, not
// done), kills rpc with -9, starts it again and waits for the draw to be done.
func killMidDraw(ctx context.Context, s *System, _ Scale) ([]string, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Redis.Addr, DisableIdentity: true})
	defer c.Close()
	key := stock.Keys{Prefix: s.invCfg.KeyPrefix}.Draw(s.Hot)
	deadline := time.Now().Add(drawSeconds*time.Second + 30*time.Second)
	for {
		cursor, status, err := drawProgress(ctx, c, key)
		switch {
		case err != nil && !errors.Is(err, redis.Nil):
			return nil, err
		case status == domain.DrawDone:
			return nil, fmt.Errorf("the draw was done (cursor %d) before it could be killed", cursor)
		case cursor > 0:
			s.Inventory.kill()
			at, st, err := drawProgress(ctx, c, key)
			if err != nil {
				return nil, err
			}
			if st == domain.DrawDone {
				return nil, fmt.Errorf("the draw was done (cursor %d) when the kill landed", at)
			}
			n, _ := c.HLen(ctx, stock.Keys{Prefix: s.invCfg.KeyPrefix}.DrawEntries(s.Hot)).Result()
			if err := s.Inventory.start(ctx); err != nil {
				return nil, err
			}
			notes := []string{fmt.Sprintf("rpc killed with the draw's cursor at %d of %d entries", at, n)}
			start := time.Now()
			for {
				_, st, err := drawProgress(ctx, c, key)
				if err == nil && st == domain.DrawDone {
					return append(notes, fmt.Sprintf("the restarted rpc finished the draw %s after its start",
						time.Since(start).Round(100*time.Millisecond))), nil
				}
				if time.Since(start) > 30*time.Second {
					return notes, fmt.Errorf("the draw not done 30 s after the restart (%v)", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		case time.Now().After(deadline):
			return nil, fmt.Errorf("the draw never started (cursor %d, status %q)", cursor, status)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func drawProgress(ctx context.Context, c *redis.Client, key string) (cursor int64, status string, err error) {
	v, err := c.HMGet(ctx, key, "cursor", "status").Result()
	if err != nil {
		return 0, "", err
	}
	if x, ok := v[0].(string); ok {
		cursor, _ = strconv.ParseInt(x, 10, 64)
	}
	status, _ = v[1].(string)
	return cursor, status, nil
}

// flushInWindow empties Redis (FLUSHALL) while the buyers are still entering, after some
// entries were taken.
func flushInWindow(ctx context.Context, s *System, _ Scale) ([]string, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Redis.Addr, DisableIdentity: true})
	defer c.Close()
	n, err := c.HLen(ctx, stock.Keys{Prefix: s.invCfg.KeyPrefix}.DrawEntries(s.Hot)).Result()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("no entry taken before the flush")
	}
	if err := c.FlushAll(ctx).Err(); err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("Redis emptied holding %d entries", n)}, nil
}

// drawBuyer enters the draw (202 queued), perhaps sends a further reservation under another
// request id (answered with the same entry), replays the entry until the draw decides it
// (200: won, then pays or cancels as in any row; SOLD_OUT: lost).
func drawBuyer(ctx context.Context, c *client, secret string, aid int64, b Burst, uid int64, req string, t *tally) {
	token, err := authtoken.Buyer(secret, uid, time.Hour)
	if err != nil {
		t.code("TOKEN")
		return
	}
	rnd := mrand.New(mrand.NewPCG(uint64(uid), 7))
	send := func(req string, out *apiclient.Reservation) func() (string, error) {
		return c.reserve(ctx, token, aid, req, out)
	}
	var e, r apiclient.Reservation
	switch _, code := retry(ctx, t, send(req+"-a", &e)); code {
	case apiclient.CodeQueued:
	case apiclient.CodeOK: // 200 in the window: a reservation the draw did not decide
		_, _ = retry(ctx, t, send(req+"-a", &r))
		t.mu.Lock()
		t.reserved[buyerKey{uid, req + "-a"}] = r.OrderNo
		t.notEntered++
		t.mu.Unlock()
		return
	default:
		return
	}
	t.mu.Lock()
	t.entries[uid] = e
	t.mu.Unlock()
	if rnd.Float64() < b.SecondTry {
		var again apiclient.Reservation
		if _, code := retry(ctx, t, send(req+"-b", &again)); code == apiclient.CodeQueued &&
			again.RequestID != e.RequestID {
			t.mu.Lock()
			t.twoEntries++
			t.mu.Unlock()
		}
	}
	// A client polls once the draw is due (draw_at): a replay in the window would enter the
	// buyer again after a loss, hiding a rebuild that lost the entry.
	select {
	case <-time.After(time.Until(time.Unix(e.DrawAt, 0))):
	case <-ctx.Done():
		return
	}
	wait := 200 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			t.mu.Lock()
			t.unanswered++
			t.mu.Unlock()
			return
		case <-time.After(wait + time.Duration(mrand.Int64N(int64(wait)))):
		}
		code, _ := send(e.RequestID, &r)()
		switch {
		case code == apiclient.CodeOK:
			t.mu.Lock()
			t.reserved[buyerKey{uid, e.RequestID}] = r.OrderNo
			t.wonAt[uid] = time.Now()
			t.mu.Unlock()
			settle(ctx, c, token, b, rnd, r, t)
			return
		case code == apiclient.CodeQueued:
		case retryable(code):
			t.code(code)
		default: // SOLD_OUT: the draw's verdict
			t.code(code)
			return
		}
	}
}

// auditEntries compares the entries acknowledged (202) with MySQL's draw_entry: an
// acknowledged entry MySQL lacks is lost; one MySQL holds that no buyer was answered, or a
// buyer answered with two entries, is a violation (the draw would not be over the
// acknowledged entries alone).
func auditEntries(ctx context.Context, dsn string, aid int64, t *tally) (c counts, err error) {
	conn := sqlx.NewMysql(dsn)
	rows, err := model.NewDrawEntryModel(conn).FindByActivity(ctx, aid)
	if err != nil {
		return c, fmt.Errorf("read MySQL draw entries: %w", err)
	}
	a, err := model.NewActivityModel(conn).FindOne(ctx, uint64(aid))
	if err != nil {
		return c, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	early := 0 // the draw's done mark is written in MySQL before the draw opens the answers
	for _, at := range t.wonAt {
		if at.UnixMilli() < a.DrawDoneAt {
			early++
		}
	}
	if early > 0 {
		c.violations = append(c.violations, fmt.Sprintf("%d entrants answered their order before the draw was "+
			"done (API.md: 202 queued until it is)", early))
	}
	inDB := map[int64]string{}
	for _, r := range rows {
		inDB[int64(r.Uid)] = r.RequestId
		if e, ok := t.entries[int64(r.Uid)]; !ok {
			c.violations = append(c.violations, fmt.Sprintf("uid %d: an entry in MySQL no buyer was answered", r.Uid))
		} else if e.RequestID != r.RequestId {
			c.violations = append(c.violations, fmt.Sprintf("uid %d: entry %s answered, %s in MySQL", r.Uid,
				e.RequestID, r.RequestId))
		}
	}
	for uid := range t.entries {
		if _, ok := inDB[uid]; !ok {
			c.lost++
		}
	}
	if c.lost > 0 {
		c.violations = append(c.violations, fmt.Sprintf("%d acknowledged entries not in MySQL", c.lost))
	}
	if t.twoEntries > 0 {
		c.duplicated += t.twoEntries
		c.violations = append(c.violations, fmt.Sprintf("%d buyers answered with a second entry", t.twoEntries))
	}
	if t.notEntered > 0 {
		c.violations = append(c.violations, fmt.Sprintf("%d reservations in the window answered 200, not an entry",
			t.notEntered))
	}
	return c, nil
}

// drawCheck: the draw is done in MySQL and its winners (the entrants with an order under
// their entry's request id) are exactly the first ones draw.Order gives for MySQL's entries
// and seed under the serve rule (each served as an ordinary reservation, in that order, until
// the stock is gone); no entrant holds two orders. notes are the row's fault's findings.
func drawCheck(notes *[]string) func(context.Context, *System, int64) ([]string, []string) {
	return func(ctx context.Context, s *System, aid int64) ([]string, []string) {
		v, won, err := checkDraw(ctx, s.MariaDB.DSN, aid)
		if err != nil {
			v = append(v, "check the draw: "+err.Error())
		}
		if err := verifyAudit(ctx, s, aid, won); err != nil {
			v = append(v, "the draw's audit: "+err.Error())
		}
		return v, *notes
	}
}

// verifyAudit reads the activity's draw audit through the gateway (its merchant, uid 1 of
// setUp) and recomputes the winners from it (loadgen.VerifyDrawAudit): they must be the
// audit's and won, the winners MySQL holds.
func verifyAudit(ctx context.Context, s *System, aid int64, won []int64) error {
	token, err := authtoken.Merchant(s.MerchantSecret, 1, time.Hour)
	if err != nil {
		return err
	}
	c := apiclient.New(s.APIURL, apiclient.Options{Timeout: 10 * time.Second})
	defer c.Close()
	a, err := c.DrawAudit(ctx, token, aid)
	if err != nil {
		return err
	}
	return loadgen.VerifyDrawAudit(a, won)
}

// checkDraw returns the violations of the draw MySQL holds and the winners it names.
func checkDraw(ctx context.Context, dsn string, aid int64) ([]string, []int64, error) {
	conn := sqlx.NewMysql(dsn)
	a, err := model.NewActivityModel(conn).FindOne(ctx, uint64(aid))
	if err != nil {
		return nil, nil, err
	}
	rows, err := model.NewDrawEntryModel(conn).FindByActivity(ctx, aid)
	if err != nil {
		return nil, nil, err
	}
	orders, err := model.NewSeckillOrderModel(conn).FindAuditByActivity(ctx, aid)
	if err != nil {
		return nil, nil, err
	}
	var v []string
	if len(a.DrawSeed) == 0 || a.DrawDoneAt == 0 {
		v = append(v, fmt.Sprintf("MySQL: draw seed of %d bytes, done at %d: not decided", len(a.DrawSeed),
			a.DrawDoneAt))
	}
	entries := make([]domain.DrawEntry, len(rows))
	entryReq := map[int64]string{}
	for i, r := range rows {
		entries[i] = domain.DrawEntry{UID: int64(r.Uid), Qty: int64(r.Quantity), RequestID: r.RequestId}
		entryReq[int64(r.Uid)] = r.RequestId
	}
	slices.SortFunc(entries, func(x, y domain.DrawEntry) int { return int(x.UID - y.UID) })
	var want []int64
	left := int64(a.Total)
	for _, e := range domain.DrawOrder(entries, []byte(a.DrawSeed)) {
		if e.Qty <= left { // per-user limit 1, quantity 1: only the stock decides
			left -= e.Qty
			want = append(want, e.UID)
		}
	}
	var got []int64
	perUID := map[int64]int{}
	for _, o := range orders {
		uid := int64(o.Uid)
		if perUID[uid]++; perUID[uid] == 2 {
			v = append(v, fmt.Sprintf("uid %d holds two orders", uid))
		}
		if req, ok := entryReq[uid]; ok && req == o.RequestId {
			got = append(got, uid)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		extra, missing := diff(got, want), diff(want, got)
		v = append(v, fmt.Sprintf("winners differ from draw.Order(MySQL's %d entries, seed %x): %d won not drawn "+
			"(e.g. %v), %d drawn did not win (e.g. %v)", len(entries), a.DrawSeed, len(extra), firstInts(extra),
			len(missing), firstInts(missing)))
	}
	if len(want) == 0 {
		v = append(v, "no winner: the row proves nothing")
	}
	return v, got, nil
}

// diff is what of a (sorted) b (sorted) lacks.
func diff(a, b []int64) []int64 {
	var out []int64
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			out = append(out, x)
		}
	}
	return out
}

func firstInts(s []int64) []int64 { return s[:min(len(s), 3)] }
