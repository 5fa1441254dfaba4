// Package edge lets the gateway answer by itself the reservations that cannot succeed (sold
// out, not started, ended): Marks holds what it knows, Gate decodes, checks and learns on the
// reservation route. docs/DESIGN.md "Sold-out at the edge".
package edge

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill/seckill/internal/xerr"
)

// Conf tunes the edge answers (the gateway's Edge config).
type Conf struct {
	// Enabled turns the gateway's own answers on.
	Enabled bool `json:",default=true"`
	// FastPath answers these before go-zero's route chain (reserve.Pipeline.Front), for a
	// buyer token that verifies; while traces are on it follows the sampling decision (a
	// sampled answer gets the route's span).
	FastPath bool `json:",default=true"`
	// SoldOutTTL bounds a sold-out mark: at most this long after stock came back is a
	// buyer told SOLD_OUT, even if the stock-back message was lost.
	SoldOutTTL time.Duration `json:",default=1s"`
	// WindowTTL is how long a fetched activity window (start, end) is kept.
	WindowTTL time.Duration `json:",default=10s"`
	// ClockMargin: the gateway answers NOT_STARTED only until start - margin and ENDED only
	// from end + margin (the scripts decide by Redis's clock; this absorbs the skew).
	ClockMargin time.Duration `json:",default=1s"`
	// ReplayCheck bounds the read of the buyers hash before a mark answers (a buyer who holds
	// an order for the request id is sent on, as a replay); a read that takes longer sends
	// the request on too.
	ReplayCheck time.Duration `json:",default=250ms"`
}

// Marks is the per-activity state; safe for concurrent use. A nil *Marks answers nothing.
type Marks struct {
	c   Conf
	now func() time.Time

	gen  atomic.Uint64 // bumped by every stock-back and reset
	wgen atomic.Uint64 // bumped by every edit's message and reset: windows read before are stale
	mu   sync.RWMutex
	act  map[int64]*entry
}

type entry struct {
	soldOutUntil int64 // unix ns; 0: no mark
	start, end   int64 // unix s, valid while windowUntil
	windowUntil  int64 // unix ns; 0: no window known
}

// New returns empty marks.
func New(c Conf) *Marks {
	return &Marks{c: c, now: time.Now, act: map[int64]*entry{}}
}

// Gen is the stock-back generation; read it before asking the inventory service and hand
// it to SoldOut with the answer.
func (m *Marks) Gen() uint64 {
	if m == nil {
		return 0
	}
	return m.gen.Load()
}

// Check answers for aid when the gateway knows the answer: xerr.ErrSoldOut while a mark
// holds, xerr.ErrNotStarted / xerr.ErrEnded from a known window; nil means ask.
func (m *Marks) Check(aid int64) error {
	if m == nil {
		return nil
	}
	now := m.now()
	ns := now.UnixNano()
	m.mu.RLock()
	e := m.act[aid]
	var soldOut, notStarted, ended bool
	if e != nil {
		soldOut = e.soldOutUntil > ns
		if e.windowUntil > ns {
			margin := int64(m.c.ClockMargin)
			notStarted = ns < e.start*int64(time.Second)-margin
			ended = ns >= e.end*int64(time.Second)+margin
		}
	}
	m.mu.RUnlock()
	switch {
	case ended:
		return xerr.ErrEnded
	case notStarted:
		return xerr.ErrNotStarted
	case soldOut:
		return xerr.ErrSoldOut
	}
	return nil
}

// SoldOut records a SOLD_OUT answer for aid to a request sent at generation gen. It sets
// the mark only if no stock came back since.
func (m *Marks) SoldOut(aid int64, gen uint64) {
	if m == nil {
		return
	}
	until := m.now().Add(m.c.SoldOutTTL).UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gen.Load() != gen { // checked under the lock StockBack bumps it under
		return
	}
	e := m.act[aid]
	if e == nil {
		e = &entry{}
		m.act[aid] = e
	}
	e.soldOutUntil = until
}

// StockBack drops aid's sold-out mark (stock came back).
func (m *Marks) StockBack(aid int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.gen.Add(1)
	if e := m.act[aid]; e != nil {
		e.soldOutUntil = 0
	}
	m.mu.Unlock()
}

// Reset drops every sold-out mark and every window: the gateway (re)subscribed and may have
// missed stock-back and edit messages.
func (m *Marks) Reset() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.gen.Add(1)
	m.wgen.Add(1)
	for _, e := range m.act {
		e.soldOutUntil = 0
		e.windowUntil = 0
	}
	m.mu.Unlock()
}

// WindowGen is the edit generation; read it before fetching a window and hand it to Window.
func (m *Marks) WindowGen() uint64 {
	if m == nil {
		return 0
	}
	return m.wgen.Load()
}

// Edited drops aid's window: the merchant edited the activity (its start or end may have
// moved), so the next NOT_STARTED or ENDED answer reads it again. A window being fetched
// meanwhile is not kept (WindowGen).
func (m *Marks) Edited(aid int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.wgen.Add(1)
	if e := m.act[aid]; e != nil {
		e.windowUntil = 0
	}
	m.mu.Unlock()
}

// HasWindow reports whether aid's window is known and fresh.
func (m *Marks) HasWindow(aid int64) bool {
	if m == nil {
		return false
	}
	ns := m.now().UnixNano()
	m.mu.RLock()
	defer m.mu.RUnlock()
	e := m.act[aid]
	return e != nil && e.windowUntil > ns
}

// Window records aid's window (unix s), read at edit generation wgen, kept for WindowTTL;
// not when an edit's message arrived since (the read may predate the edit).
func (m *Marks) Window(aid, start, end int64, wgen uint64) {
	if m == nil {
		return
	}
	until := m.now().Add(m.c.WindowTTL).UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.wgen.Load() != wgen {
		return
	}
	e := m.act[aid]
	if e == nil {
		e = &entry{}
		m.act[aid] = e
	}
	e.start, e.end, e.windowUntil = start, end, until
}

// Sweep forgets activities whose marks and windows all expired (bounds the map).
func (m *Marks) Sweep() {
	if m == nil {
		return
	}
	ns := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	for aid, e := range m.act {
		if e.soldOutUntil <= ns && e.windowUntil <= ns {
			delete(m.act, aid)
		}
	}
}
