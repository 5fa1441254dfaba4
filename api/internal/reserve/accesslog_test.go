package reserve_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zeromicro/go-zero/core/logx"
	"github.com/zeromicro/go-zero/core/logx/logtest"

	"github.com/seckill/seckill/api/internal/config"
	"github.com/seckill/seckill/api/internal/edge"
	"github.com/seckill/seckill/api/internal/reserve"
	"github.com/seckill/seckill/internal/authtoken"
)

// TestFastPathAccessLogFollowsTheChain: a fast answer writes go-zero's access log line
// exactly when the chain writes one for the requests it answers (Middlewares.Log): with it
// on, a line for the fast answer and one for the route's; with it off (deploy/'s gateways),
// none at level info.
func TestFastPathAccessLogFollowsTheChain(t *testing.T) {
	token, _ := authtoken.Buyer(buyerSecret, 42, time.Hour)
	const sold, open = `{"activity_id":5,"request_id":"abcdefgh"}`, `{"activity_id":6,"request_id":"abcdefgh"}`
	for _, on := range []bool{true, false} {
		c := &counted{marks: edge.New(edge.Conf{Enabled: true, SoldOutTTL: time.Minute, WindowTTL: time.Minute})}
		c.marks.SoldOut(5, c.marks.Gen())
		p := reserve.New(c.stages(), reserve.Front{Answer: true, MaxBytes: 64 << 10, Log: on})
		addr := serve(t, p, func(c *config.Config) { c.Middlewares.Log = on })
		logs := logtest.NewCollector(t)
		logx.SetLevel(logx.InfoLevel)
		for _, tc := range []struct {
			body   string
			status int
		}{{sold, http.StatusConflict}, {open, http.StatusOK}} {
			req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/seckill/orders",
				strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close()
			if res.StatusCode != tc.status {
				t.Fatalf("access log %v: %s answered %d, want %d", on, tc.body, res.StatusCode, tc.status)
			}
		}
		logx.SetLevel(logx.SevereLevel)
		got := strings.Count(string(logs.Bytes()), "[HTTP]")
		fast := strings.Count(string(logs.Bytes()), "(edge fast path)")
		want := map[bool]int{true: 2, false: 0}[on]
		if got != want || fast != want/2 {
			t.Errorf("access log %v: %d access lines (%d of the fast path), want %d (%d): %s", on, got, fast, want,
				want/2, logs.Bytes())
		}
	}
}
