package rpcserver_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zeromicro/go-zero/core/logx"

	"github.com/seckill/seckill/model"
	"github.com/seckill/seckill/rpc/inventory"
	"github.com/seckill/seckill/rpc/rpcserver"
)

// lockedBuffer collects log output written from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// captureLogs sends go-zero's log, every level, to a buffer until the test ends.
func captureLogs(t *testing.T) *lockedBuffer {
	logs := &lockedBuffer{}
	prev := logx.Reset()
	logx.SetWriter(logx.NewWriter(logs))
	logx.SetLevel(logx.DebugLevel)
	t.Cleanup(func() { logx.SetLevel(logx.SevereLevel); logx.Reset(); logx.SetWriter(prev) })
	return logs
}

// seedForms are the renderings of seed a leak would show: hex (either case), base64, the bytes,
// and the bytes as go-zero's JSON log shows a string, plain or in a logged SQL statement
// (sqlx quotes an argument with backslash escapes, invalid UTF-8 becoming U+FFFD).
func seedForms(seed []byte) []string {
	h := hex.EncodeToString(seed)
	decimal := fmt.Sprintf("%d", seed) // "[12 200 …]", not the bytes as text
	forms := []string{h, strings.ToUpper(h), base64.StdEncoding.EncodeToString(seed),
		base64.RawURLEncoding.EncodeToString(seed), string(seed), decimal, h[:16]}
	for _, s := range []string{string(seed), sqlEscaped(string(seed))} {
		var j bytes.Buffer
		enc := json.NewEncoder(&j)
		enc.SetEscapeHTML(false) // as go-zero's log
		_ = enc.Encode(s)
		text := strings.TrimSpace(j.String())
		forms = append(forms, text[1:len(text)-1])
	}
	return forms
}

// sqlEscaped is a string argument as go-zero's sqlx writes it into a logged statement: rune by
// rune (an invalid byte is U+FFFD), with backslash escapes.
func sqlEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case 0:
			b.WriteString(`\x00`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		case '\\', '\'', '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case 0x1a:
			b.WriteString(`\x1a`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func leaks(where, text string, seed []byte) error {
	for _, form := range seedForms(seed) {
		if strings.Contains(text, form) {
			return fmt.Errorf("%s shows the seed (as %q)", where, form)
		}
	}
	return nil
}

// views reads every view of activity aid that carries its draw: (name, commitment, seed).
func (f *fixture) views(t *testing.T, aid int64) [][3]string {
	t.Helper()
	get, err := f.client.GetActivity(ctx, &inventory.GetActivityReq{ActivityId: aid, MerchantId: auditMerchant})
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.client.ListActivities(ctx, &inventory.ListActivitiesReq{MerchantId: auditMerchant, Page: 1,
		Size: 100})
	if err != nil {
		t.Fatal(err)
	}
	var listed *inventory.Activity
	for _, a := range list.GetActivities() {
		if a.GetActivityId() == aid {
			listed = a
		}
	}
	buyer, err := f.client.GetStock(ctx, &inventory.GetStockReq{ActivityId: aid})
	if err != nil {
		t.Fatal(err)
	}
	audit := f.audit(t, aid)
	return [][3]string{
		{"admin", get.GetActivity().GetDrawCommitment(), get.GetActivity().GetDrawSeed()},
		{"list", listed.GetDrawCommitment(), listed.GetDrawSeed()},
		{"buyer", buyer.GetActivity().GetDrawCommitment(), buyer.GetActivity().GetDrawSeed()},
		{"audit", audit.GetCommitment(), audit.GetSeed()},
	}
}

// The seed of an activity's draw is in no view, log line, Redis key (the events' stream
// included) or metric before the draw is done, every view shows the same commitment
// (SHA-256 of MySQL's seed) from creation on, and once the draw is done every view shows the
// seed. The service logs at every level into the test.
func TestDrawSeedHiddenUntilDone(t *testing.T) {
	f, _, _ := startDraws(t, func(c *rpcserver.Config) { c.Draw.Chunk = 4 })
	logs := captureLogs(t)
	act := f.drawActivity(t, 20, 4) // entries until start + 4 s: 2 to 3 s from now
	aid := act.GetActivityId()
	seed, err := model.NewActivityModel(f.db.Conn).FindDrawSeed(ctx, aid)
	if err != nil || len(seed) != 32 {
		t.Fatalf("seed %x, %v", seed, err)
	}
	sum := sha256.Sum256(seed)
	committed := hex.EncodeToString(sum[:])
	if act.GetDrawCommitment() != committed || act.GetDrawSeed() != "" {
		t.Fatalf("created: commitment %q seed %q, want %q and no seed", act.GetDrawCommitment(), act.GetDrawSeed(),
			committed)
	}
	if !strings.Contains(logs.String(), "<draw seed>") {
		t.Fatal("the seed's statement was not logged (masked): the log check proves nothing")
	}
	f.enterAll(t, aid, 60)
	var doneSeen bool
	for deadline := time.Now().Add(30 * time.Second); !doneSeen; {
		if time.Now().After(deadline) {
			t.Fatal("the draw was not done")
		}
		vs := f.views(t, aid)
		row, err := model.NewActivityModel(f.db.Conn).FindOne(ctx, uint64(aid)) // read after the views
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if v[1] != committed {
				t.Fatalf("%s view: commitment %q, committed %q", v[0], v[1], committed)
			}
			if v[2] != "" && (row.DrawDoneAt == 0 || v[2] != hex.EncodeToString(seed)) {
				t.Fatalf("%s view shows seed %q, the draw done at %d", v[0], v[2], row.DrawDoneAt)
			}
		}
		if row.DrawDoneAt == 0 {
			f.noLeak(t, aid, seed, logs)
		}
		doneSeen = row.DrawDoneAt > 0
		time.Sleep(20 * time.Millisecond)
	}
	f.waitDone(t, aid)
	time.Sleep(300 * time.Millisecond) // the buyer's view follows Redis's done mark
	for _, v := range f.views(t, aid) {
		if v[1] != committed || v[2] != hex.EncodeToString(seed) {
			t.Fatalf("%s view after the draw: commitment %q seed %q", v[0], v[1], v[2])
		}
	}
	f.noLeak(t, aid, seed, logs) // nothing logs it afterwards either
	if !strings.Contains(logs.String(), committed) {
		t.Fatal("the draw's log line (with the commitment) was not captured: the log check proves nothing")
	}
}

// noLeak fails when the logs so far, any Redis key of the test (the outbox stream included) or
// a metric shows seed.
func (f *fixture) noLeak(t *testing.T, aid int64, seed []byte, logs *lockedBuffer) {
	t.Helper()
	if err := leaks("the log", logs.String(), seed); err != nil {
		t.Fatal(err)
	}
	if err := leaks("Redis", fmt.Sprint(f.env.Dump()), seed); err != nil {
		t.Fatal(err)
	}
	if err := leaks("the events", fmt.Sprint(f.env.Outbox(aid)), seed); err != nil {
		t.Fatal(err)
	}
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if err := leaks("the metrics", fmt.Sprint(mfs), seed); err != nil {
		t.Fatal(err)
	}
}

// Every activity gets its seed at creation, one with no draw too (an edit adding a draw later
// finds one); seeds differ; a view of an activity without a draw carries none of it.
func TestEveryActivityGetsASeed(t *testing.T) {
	f, _, _ := startDraws(t, nil)
	acts := model.NewActivityModel(f.db.Conn)
	seen := map[string]bool{}
	for _, draw := range []int64{0, 0, 5} {
		a := f.drawActivity(t, 3, draw)
		seed, err := acts.FindDrawSeed(ctx, a.GetActivityId())
		if err != nil || len(seed) != model.DrawSeedBytes || seen[string(seed)] {
			t.Fatalf("activity %d (draw %d s): seed %x, %v", a.GetActivityId(), draw, seed, err)
		}
		seen[string(seed)] = true
		if draw == 0 && (a.GetDrawCommitment() != "" || a.GetDrawAt() != 0 || a.GetDrawSeed() != "") {
			t.Fatalf("an activity without a draw shows one: %v", a)
		}
	}
}
