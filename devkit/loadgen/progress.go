package loadgen

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// progress draws a bar for the reserve phase and one line per later phase. On a terminal
// the bar redraws in place; elsewhere (a CI log) it prints a line every few seconds.
type progress struct {
	w     io.Writer
	tty   bool
	total int
	start time.Time

	done, attempts, reserved, soldOut, errs atomic.Int64

	mu   sync.Mutex
	last struct { // the previous line's attempts and time, for the rate since
		attempts int64
		at       time.Time
	}
	stop chan struct{}
	wg   sync.WaitGroup
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) phase(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *progress) startBar(name string, total int) {
	p.total, p.start = total, time.Now()
	p.last.attempts, p.last.at = 0, p.start
	if p.w == nil {
		return
	}
	p.phase("%s: %d buyers", name, total)
	p.stop = make(chan struct{})
	every := 200 * time.Millisecond
	if !p.tty {
		every = 2 * time.Second
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
}

func (p *progress) endBar() {
	if p.w == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	p.draw()
	if p.tty {
		p.mu.Lock()
		fmt.Fprintln(p.w)
		p.mu.Unlock()
	}
}

func (p *progress) attempt() { p.attempts.Add(1) }

// buyerDone counts a buyer's final outcome ("" for not sent).
func (p *progress) buyerDone(code string) {
	p.done.Add(1)
	switch code {
	case CodeOK:
		p.reserved.Add(1)
	case CodeSoldOut:
		p.soldOut.Add(1)
	case "":
	default:
		p.errs.Add(1)
	}
}

// bar renders the progress line.
func bar(done, total int, width int) string {
	if total <= 0 {
		total = 1
	}
	filled := min(width, done*width/total)
	return "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "]"
}

func (p *progress) draw() {
	done := int(p.done.Load())
	attempts := p.attempts.Load()
	now := time.Now()
	el := now.Sub(p.start)
	rps := 0.0
	if el > 0 {
		rps = float64(attempts) / el.Seconds()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	recent := 0.0
	if d := now.Sub(p.last.at); d > 0 {
		recent = float64(attempts-p.last.attempts) / d.Seconds()
	}
	p.last.attempts, p.last.at = attempts, now
	line := fmt.Sprintf("%s %d/%d  reserved %d  sold out %d  errors %d  %.0f req/s (now %.0f)  %s",
		bar(done, p.total, 30), done, p.total, p.reserved.Load(), p.soldOut.Load(), p.errs.Load(), rps, recent,
		el.Round(100*time.Millisecond))
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\033[K", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}
