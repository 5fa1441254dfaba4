package consumer

import (
	"context"
	"testing"
	"time"

	"github.com/zeromicro/go-queue/kq"
	"github.com/zeromicro/go-zero/core/conf"
)

type nopHandler struct{}

func (nopHandler) Submit(_ context.Context, _, _ string, done func(error)) { done(nil) }
func (nopHandler) Reject(_, _, _ string, done func(error))                 { done(nil) }

// The group's session timeout and heartbeat reach every member's group membership (how soon a killed
// writer's partitions move to the others); unset, they are kafka-go's 30 s and 3 s.
func TestSessionTimeoutReachesTheReaders(t *testing.T) {
	kc := kq.KqConf{Brokers: []string{"127.0.0.1:1"}, Group: "g", Topic: "t", Conns: 2}
	var def Conf
	if err := conf.FillDefault(&def); err != nil {
		t.Fatal(err)
	}
	for _, c := range []Conf{def, {MaxInFlight: 1, SessionTimeout: 7 * time.Second, HeartbeatInterval: time.Second}} {
		g, err := New(kc, c, nopHandler{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range g.members {
			rc := m.gc
			if rc.SessionTimeout != c.SessionTimeout || rc.HeartbeatInterval != c.HeartbeatInterval {
				t.Errorf("group session %s heartbeat %s, want %s %s", rc.SessionTimeout, rc.HeartbeatInterval,
					c.SessionTimeout, c.HeartbeatInterval)
			}
		}
		g.Stop()
	}
	if def.SessionTimeout != 30*time.Second || def.HeartbeatInterval != 3*time.Second {
		t.Errorf("defaults %s %s, want kafka-go's 30s 3s", def.SessionTimeout, def.HeartbeatInterval)
	}
}
