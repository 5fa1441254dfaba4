package opstest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/websocket"

	"github.com/seckill/seckill/devkit/devenv"
	"github.com/seckill/seckill/devkit/testenv"
)

// browser is a headless Chromium driven over the DevTools protocol (a minimal client:
// commands on one page target's websocket, events ignored).
type browser struct {
	t    *testing.T
	ws   *websocket.Conn
	next atomic.Int64

	mu      sync.Mutex
	waiting map[int64]chan cdpReply
	console []string // the page's console messages and exceptions, for failure reports
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

var devtoolsURL = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// startBrowser runs headless Chromium (apt-get where missing) with a temporary profile and
// connects to its first page.
func startBrowser(t *testing.T) *browser {
	t.Helper()
	testenv.Need(t, devenv.ChromiumPackage)
	bin, err := devenv.LookFirst(devenv.ChromiumPackage.Binaries...)
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: Chromium's helper processes may still write to the profile for a
	// moment after the browser is killed, and TempDir fails the test when its removal does.
	profile, err := os.MkdirTemp("", "seckill-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+profile, "--remote-debugging-address=127.0.0.1",
		"--remote-debugging-port=0", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the browser and its helpers, one group
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	browserWS := devtoolsEndpoint(t, stderr)
	host := strings.SplitN(strings.TrimPrefix(browserWS, "ws://"), "/", 2)[0]
	pageWS := pageTarget(t, host)
	ws, err := websocket.Dial(pageWS, "", "http://"+host)
	if err != nil {
		t.Fatal(err)
	}
	ws.MaxPayloadBytes = 64 << 20
	b := &browser{t: t, ws: ws, waiting: map[int64]chan cdpReply{}}
	t.Cleanup(func() { _ = ws.Close() })
	go b.read()
	b.call("Runtime.enable", nil)
	b.call("Page.enable", nil)
	return b
}

// devtoolsEndpoint reads Chromium's stderr until it names its DevTools endpoint (ws://...).
func devtoolsEndpoint(t *testing.T, stderr io.Reader) string {
	t.Helper()
	found := make(chan string, 1)
	var logMu sync.Mutex
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := devtoolsURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case browserWS := <-found:
		return browserWS
	case <-time.After(60 * time.Second):
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("chromium did not start its DevTools endpoint:\n%s", log.String())
	}
	return ""
}

// pageTarget waits for the browser at host to list a page target and returns its
// WebSocket URL.
func pageTarget(t *testing.T, host string) string {
	t.Helper()
	var pageWS string
	for deadline := time.Now().Add(20 * time.Second); pageWS == ""; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("chromium has no page target")
		}
		resp, err := http.Get("http://" + host + "/json/list")
		if err != nil {
			continue
		}
		var targets []struct {
			Type string `json:"type"`
			WS   string `json:"webSocketDebuggerUrl"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&targets)
		_ = resp.Body.Close()
		for _, tg := range targets {
			if tg.Type == "page" && tg.WS != "" {
				pageWS = tg.WS
				break
			}
		}
	}
	return pageWS
}

func (b *browser) read() {
	for {
		var msg struct {
			ID     int64           `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			cdpReply
		}
		if err := websocket.JSON.Receive(b.ws, &msg); err != nil {
			b.mu.Lock()
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		if msg.ID == 0 {
			if msg.Method == "Runtime.consoleAPICalled" || msg.Method == "Runtime.exceptionThrown" {
				b.mu.Lock()
				b.console = append(b.console, string(msg.Params))
				b.mu.Unlock()
			}
			continue
		}
		b.mu.Lock()
		ch := b.waiting[msg.ID]
		delete(b.waiting, msg.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- msg.cdpReply
		}
	}
}

// call sends a DevTools command and returns its result.
func (b *browser) call(method string, params any) json.RawMessage {
	b.t.Helper()
	id := b.next.Add(1)
	ch := make(chan cdpReply, 1)
	b.mu.Lock()
	b.waiting[id] = ch
	b.mu.Unlock()
	if err := websocket.JSON.Send(b.ws, map[string]any{"id": id, "method": method, "params": params}); err != nil {
		b.t.Fatal(err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			b.t.Fatalf("%s: the DevTools connection closed", method)
		}
		if r.Error != nil {
			b.t.Fatalf("%s: %s", method, r.Error.Message)
		}
		return r.Result
	case <-time.After(30 * time.Second):
		b.t.Fatalf("%s: no answer in 30 s", method)
	}
	return nil
}

// eval evaluates a JavaScript expression in the page (promises awaited) and decodes its
// value into out (when not nil).
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	raw := b.call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true})
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		b.t.Fatal(err)
	}
	if res.ExceptionDetails != nil {
		b.t.Fatalf("%s: %s %s", expr, res.ExceptionDetails.Text, res.ExceptionDetails.Exception.Description)
	}
	if out != nil && len(res.Result.Value) > 0 {
		if err := json.Unmarshal(res.Result.Value, out); err != nil {
			b.t.Fatalf("%s: decode %s: %v", expr, res.Result.Value, err)
		}
	}
}

// text is an element's text content ("" when absent).
func (b *browser) text(selector string) string {
	var s string
	b.eval(fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent`, selector), &s)
	return s
}

// waitFor polls a JavaScript condition until it is true.
func (b *browser) waitFor(what, cond string, limit time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var ok bool
		b.eval("Boolean("+cond+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.mu.Lock()
			console := strings.Join(b.console, "\n")
			b.mu.Unlock()
			b.t.Fatalf("timed out after %v waiting for %s (%s); message: %q; page console:\n%s",
				limit, what, cond, b.text("#message"), console)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// screenshot saves a PNG of the page (for a look at a failure; not compared).
func (b *browser) screenshot(file string) {
	b.t.Helper()
	raw := b.call("Page.captureScreenshot", map[string]any{"format": "png"})
	var res struct {
		Data []byte `json:"data"`
	}
	if err := json.Unmarshal(raw, &res); err == nil {
		_ = os.WriteFile(file, res.Data, 0o644)
	}
}
