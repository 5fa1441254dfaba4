package mqserver

import (
	"testing"

	"github.com/zeromicro/go-zero/core/conf"
)

// The jobs' zRPC client runs go-zero's trace interceptor only when mq's Telemetry exports.
func TestJobsClientTracesOnlyWhenExporting(t *testing.T) {
	var c Config
	if err := conf.FillDefault(&c); err != nil {
		t.Fatal(err)
	}
	if !c.Inventory.Middlewares.Trace {
		t.Fatal("go-zero's default Middlewares.Trace is off: the test shows nothing")
	}
	c.Telemetry.Disabled = true
	if cc := inventoryConf(c); cc.Middlewares.Trace || !cc.NonBlock {
		t.Errorf("Telemetry off: Trace %v, NonBlock %v; want false, true", cc.Middlewares.Trace, cc.NonBlock)
	}
	c.Telemetry.Disabled, c.Telemetry.Endpoint = false, "jaeger:4317"
	if cc := inventoryConf(c); !cc.Middlewares.Trace {
		t.Error("exporting: the jobs' client has no trace interceptor")
	}
}
