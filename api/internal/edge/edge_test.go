package edge

import (
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/xerr"
)

func marks() (*Marks, *time.Time) {
	now := time.Unix(1_000_000, 0)
	m := New(Conf{Enabled: true, SoldOutTTL: time.Second, WindowTTL: 10 * time.Second, ClockMargin: time.Second})
	m.now = func() time.Time { return now }
	return m, &now
}

func TestSoldOutMark(t *testing.T) {
	m, now := marks()
	if err := m.Check(1); err != nil {
		t.Fatalf("no mark: %v", err)
	}
	m.SoldOut(1, m.Gen())
	if err := m.Check(1); xerr.CodeOf(err) != xerr.SoldOut {
		t.Fatalf("marked: %v", err)
	}
	if err := m.Check(2); err != nil {
		t.Fatalf("another activity: %v", err)
	}
	*now = now.Add(time.Second)
	if err := m.Check(1); err != nil {
		t.Fatalf("after the TTL: %v", err)
	}
	m.SoldOut(1, m.Gen())
	m.StockBack(1)
	if err := m.Check(1); err != nil {
		t.Fatalf("after stock-back: %v", err)
	}
	m.SoldOut(1, m.Gen())
	m.Reset()
	if err := m.Check(1); err != nil {
		t.Fatalf("after a resubscribe: %v", err)
	}
}

// A SOLD_OUT answer to a request sent before stock came back must not set a mark.
func TestStaleSoldOutAnswerSetsNoMark(t *testing.T) {
	m, _ := marks()
	gen := m.Gen()
	m.StockBack(7) // while the request was in flight
	m.SoldOut(1, gen)
	if err := m.Check(1); err != nil {
		t.Fatalf("stale answer set a mark: %v", err)
	}
}

func TestWindow(t *testing.T) {
	m, now := marks()
	start, end := now.Unix()+10, now.Unix()+20
	m.Window(1, start, end, m.WindowGen())
	if err := m.Check(1); xerr.CodeOf(err) != xerr.NotStarted {
		t.Fatalf("before start: %v", err)
	}
	*now = time.Unix(start-1, 0) // inside the clock margin: ask the service
	if err := m.Check(1); err != nil {
		t.Fatalf("within the margin before start: %v", err)
	}
	m.Window(1, start, end, m.WindowGen())
	*now = time.Unix(end, 0)
	if err := m.Check(1); err != nil {
		t.Fatalf("within the margin after end: %v", err)
	}
	*now = time.Unix(end+1, 0)
	m.Window(1, start, end, m.WindowGen())
	if err := m.Check(1); xerr.CodeOf(err) != xerr.Ended {
		t.Fatalf("after end + margin: %v", err)
	}
	*now = now.Add(time.Minute)
	if m.HasWindow(1) || m.Check(1) != nil {
		t.Fatal("window kept past WindowTTL")
	}
	m.Sweep()
	if len(m.act) != 0 {
		t.Fatalf("sweep left %d entries", len(m.act))
	}
}

// An edit's message drops the window, and a window read before it arrived is not kept: the
// gateway would otherwise answer NOT_STARTED / ENDED by the old start and end.
func TestEditedDropsTheWindow(t *testing.T) {
	m, now := marks()
	start, end := now.Unix()+100, now.Unix()+200
	m.Window(1, start, end, m.WindowGen())
	if err := m.Check(1); xerr.CodeOf(err) != xerr.NotStarted {
		t.Fatalf("before start: %v", err)
	}
	m.Edited(1) // the start moved to now
	if m.HasWindow(1) || m.Check(1) != nil {
		t.Fatal("the window outlived the edit")
	}
	gen := m.WindowGen() // a read in flight across the next edit
	m.Edited(1)
	m.Window(1, start, end, gen)
	if m.HasWindow(1) {
		t.Fatal("a window read before the edit was kept")
	}
	m.Window(1, start, end, m.WindowGen())
	m.Reset() // resubscribed: edits may have been missed
	if m.HasWindow(1) {
		t.Fatal("a window outlived the resubscription")
	}
}

func TestMarksConcurrent(t *testing.T) {
	m := New(Conf{Enabled: true, SoldOutTTL: time.Second, WindowTTL: time.Second})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 2000 {
				aid := int64(j % 5)
				switch (i + j) % 4 {
				case 0:
					m.SoldOut(aid, m.Gen())
				case 1:
					m.StockBack(aid)
					m.Edited(aid)
				case 2:
					_ = m.Check(aid)
				case 3:
					m.Window(aid, 0, 1, m.WindowGen())
					m.Sweep()
				}
			}
		}()
	}
	wg.Wait()
}
