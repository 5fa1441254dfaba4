package apiserver_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// TestOrdersCSVBrokenMidStream: an export whose inventory service goes away after the 200 went
// out ends with a broken connection (no final chunk: the client reads an unexpected EOF), never
// a clean end that would pass a cut export for a whole one. The gateway reaches the service
// through a proxy that holds each 32 KiB the service sends for 20 ms (5,000 orders are about 12
// of them), so the export is still running when the test kills the proxy's connections (RSTs,
// as for a service killed with -9) after reading its first rows.
func TestOrdersCSVBrokenMidStream(t *testing.T) {
	e, proxy := startBehindProxy(t)
	a := e.create(map[string]any{"stock": 1000})
	e.insertOrders(a.ActivityID, 0, 5000, 0)
	proxy.SetDelay(20 * time.Millisecond)
	resp := e.getCSV(ordersPath(a.ActivityID, nil), merchantToken(t, merchantID))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %d", resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	for range 2 { // the header and the first order
		if _, err := br.ReadString('\n'); err != nil {
			t.Fatalf("the export's first lines: %v", err)
		}
	}
	proxy.Kill()
	rest, err := io.ReadAll(br)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("after the service went away: %v, want an unexpected EOF (%d more bytes read)", err, len(rest))
	}
	if n := bytes.Count(rest, []byte("\n")) + 1; n >= 5000 {
		t.Fatalf("%d orders came before the break: the export was not cut", n)
	}
}

// TestOrdersCSVClientLeaves: a client that leaves in the middle of an export ends it (its
// stream is cancelled) without the handler writing to a connection the server has finished
// with: run with -race, go-zero's timeout handler on this route returned at the client's
// leaving while the export still wrote and flushed (the route has no timeout for that reason).
// A request after it is answered as usual.
func TestOrdersCSVClientLeaves(t *testing.T) {
	e, proxy := startBehindProxy(t)
	a := e.create(map[string]any{"stock": 1000})
	e.insertOrders(a.ActivityID, 0, 5000, 0)
	proxy.SetDelay(20 * time.Millisecond)
	tok := merchantToken(t, merchantID)
	for range 3 {
		resp := e.getCSV(ordersPath(a.ActivityID, nil), tok)
		if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("export: %d %v", resp.StatusCode, err)
		}
		_ = resp.Body.Close() // gone after the header: the connection is closed
		time.Sleep(100 * time.Millisecond)
	}
	proxy.SetDelay(0)
	var p orderPage
	e.call(http.MethodGet, ordersPath(a.ActivityID, url.Values{"size": {"1"}}), tok, nil, &p)
	if len(p.Orders) != 1 {
		t.Fatalf("after the exports: %+v", p)
	}
}

// heapPeak samples the process's heap (runtime/metrics: the bytes of heap objects, live or not
// yet swept) every millisecond until stop is closed, and returns the largest value seen.
func heapPeak(stop <-chan struct{}) func() uint64 {
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	return func() uint64 { wg.Wait(); return peak }
}

// TestOrdersCSVMemoryFlat: the CSV export streams end to end, so exporting 100,000 orders
// needs no more memory than exporting 10,000. The gateway, the inventory service and the
// client all run in this test's process: the measure is the process's peak heap (bytes of
// heap objects, sampled every millisecond) during each export, with the garbage collector set
// to run at 10 % growth (debug.SetGCPercent) so that the heap follows what is held, not the
// collector's pacing (at the default 100 % the heap doubles between collections whatever the
// export holds). Each export starts after a collection; the client counts the lines as they
// come without keeping them. The peak at 100,000 must be at most 1.2 × the peak at 10,000:
// an export that held its rows (100,000 are about 9 MB of CSV and more as protobuf and Go
// strings) would be well above it. The log gives both peaks and each one's growth above the
// heap at its start.
func TestOrdersCSVMemoryFlat(t *testing.T) {
	e := start(t)
	small := e.create(map[string]any{"stock": 1000})
	large := e.create(map[string]any{"stock": 1000})
	e.insertOrders(small.ActivityID, 0, 10_000, 0)
	e.insertOrders(large.ActivityID, 0, 100_000, 0)
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	tok := merchantToken(t, merchantID)
	e.client = &http.Client{Timeout: time.Minute} // 100,000 orders under -race on 2 busy cores
	export := func(aid int64, n int) (peak, base uint64) {
		runtime.GC()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(sample)
		base = sample[0].Value.Uint64()
		stop := make(chan struct{})
		wait := heapPeak(stop)
		began := time.Now()
		resp := e.getCSV(ordersPath(aid, nil), tok)
		lines, err := countLines(resp.Body)
		_ = resp.Body.Close()
		close(stop)
		peak = wait()
		t.Logf("export of %d orders: %s", n, time.Since(began).Round(time.Millisecond))
		if err != nil || resp.StatusCode != http.StatusOK || lines != n+1 {
			t.Fatalf("export of %d orders: %d, %d lines, %v", n, resp.StatusCode, lines, err)
		}
		return peak, base
	}
	export(small.ActivityID, 10_000) // warm: connections, buffers, code paths
	peakSmall, baseSmall := export(small.ActivityID, 10_000)
	peakLarge, baseLarge := export(large.ActivityID, 100_000)
	t.Logf("peak heap: 10,000 orders %.1f MiB (+%.1f MiB over its start), 100,000 orders %.1f MiB (+%.1f MiB); "+
		"ratio %.3f", mib(peakSmall), mib(peakSmall-min(peakSmall, baseSmall)), mib(peakLarge),
		mib(peakLarge-min(peakLarge, baseLarge)), float64(peakLarge)/float64(peakSmall))
	if float64(peakLarge) > 1.2*float64(peakSmall) {
		t.Fatalf("exporting 100,000 orders peaked at %.1f MiB, above 1.2 x the %.1f MiB of 10,000",
			mib(peakLarge), mib(peakSmall))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// countLines counts the lines of r as they come, keeping none.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 32<<10)
	n := 0
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte("\n"))
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
