// Package etc_test checks that every shipped configuration loads into its service's
// Config (go-zero's loader: required fields, ranges, options) so a config cannot rot.
package etc_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/seckill/seckill/api/apiserver"
	"github.com/seckill/seckill/mq/mqserver"
	"github.com/seckill/seckill/rpc/rpcserver"
)

func TestShippedConfigsLoad(t *testing.T) {
	sets := []struct{ dir, rpc, api, mq string }{
		{".", "inventory.yaml", "seckill-api.yaml", "mq.yaml"},
		{"../deploy/multinode", "rpc.yaml", "api.yaml", "mq.yaml"},
	}
	t.Setenv("SECKILL_MYSQL_PASSWORD", "from-the-environment")
	for _, s := range sets {
		t.Run(s.dir, func(t *testing.T) {
			rc, err := rpcserver.LoadConfig(filepath.Join(s.dir, s.rpc))
			if err != nil {
				t.Fatalf("%s: %v", s.rpc, err)
			}
			if rc.ListenOn == "" || rc.StockRedis.Host == "" || rc.Mysql.DataSource == "" {
				t.Fatalf("%s: incomplete: %+v", s.rpc, rc)
			}
			if strings.Contains(rc.Mysql.DataSource, "${") {
				t.Fatalf("%s: ${VAR} not expanded: %s", s.rpc, rc.Mysql.DataSource)
			}
			if len(rc.Middlewares.StatConf.IgnoreContentMethods) == 0 {
				t.Fatalf("%s: the hot methods must not log their content per request", s.rpc)
			}
			ac, err := apiserver.LoadConfig(filepath.Join(s.dir, s.api))
			if err != nil {
				t.Fatalf("%s: %v", s.api, err)
			}
			if err := ac.Validate(); err != nil {
				t.Fatalf("%s: %v", s.api, err)
			}
			if _, err := mqserver.LoadConfig(filepath.Join(s.dir, s.mq)); err != nil {
				t.Fatalf("%s: %v", s.mq, err)
			}
		})
	}
}
