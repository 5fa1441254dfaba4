package devenv

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a loopback TCP proxy in front of one server, for fault tests: clients pointed at
// Addr reach the target until Cut, which drops every open connection and refuses new ones
// (each is accepted and closed at once, so a client sees a reset or EOF rather than a
// hang) until Restore. Kill is Cut with resets: every connection is closed with SO_LINGER 0
// (an RST, as the kernel answers for a process killed with kill -9), and so is each new one.
type Proxy struct {
	Addr   string // where clients connect
	Target string // where the proxy forwards

	l      net.Listener
	mu     sync.Mutex
	cut    bool
	reset  bool // Kill: connections are reset, not closed
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
	delay  atomic.Int64 // SetDelay: each chunk from the target waits this long (ns)
	send   atomic.Int64 // SetSendDelay: each chunk to the target waits this long (ns)
}

// SetDelay makes every chunk the target sends wait d before it is passed on (0: none): a
// slow server, or a slow link back from it.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(d)) }

// SetSendDelay makes every chunk a client sends wait d before it is passed on to the target
// (0: none): a link that holds requests and delivers them late, as one that heals does.
func (p *Proxy) SetSendDelay(d time.Duration) { p.send.Store(int64(d)) }

// slow copies src to dst, each chunk held for delay.
func slow(dst, src net.Conn, delay *atomic.Int64) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := delay.Load(); d > 0 {
				time.Sleep(time.Duration(d))
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// StartProxy listens on a free loopback port and forwards every connection to target.
func StartProxy(target string) (*Proxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: l.Addr().String(), Target: target, l: l, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			p.drop(c)
			continue
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

// track registers c unless the proxy is cut or closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut || p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.conns, c)
		_ = c.Close()
	}
}

func (p *Proxy) forward(c net.Conn) {
	defer p.wg.Done()
	up, err := net.Dial("tcp", p.Target)
	if err != nil {
		p.untrack(c)
		return
	}
	if !p.track(up) {
		_ = up.Close()
		p.untrack(c)
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		slow(up, c, &p.send)
		done <- struct{}{}
	}()
	go func() {
		slow(c, up, &p.delay)
		done <- struct{}{}
	}()
	<-done // one direction ended: close both, which ends the other
	p.untrack(c, up)
	<-done
}

// Cut drops every connection through the proxy and refuses new ones until Restore.
func (p *Proxy) Cut() { p.cutAll(false) }

// Kill resets every connection through the proxy (RST) and resets new ones until Restore.
func (p *Proxy) Kill() { p.cutAll(true) }

func (p *Proxy) cutAll(reset bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut, p.reset = true, reset
	for c := range p.conns {
		p.dropLocked(c)
		delete(p.conns, c)
	}
}

// drop closes a connection the proxy refuses: reset after Kill.
func (p *Proxy) drop(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(c)
}

func (p *Proxy) dropLocked(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok && p.reset {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut, p.reset = false, false
	p.mu.Unlock()
}

// Close stops the proxy and drops its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.mu.Unlock()
	err := p.l.Close()
	p.Cut()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}
