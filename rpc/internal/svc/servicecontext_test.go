package svc

import (
	"testing"

	"github.com/seckill/seckill/rpc/internal/degrade"
)

// The books consult the fence only in degrade mode (Degrade: mysql): off, they get none and a
// reservation's path does not pass it (docs/DESIGN.md, "A reservation's path").
func TestBooksConsultTheFenceOnlyInDegradeMode(t *testing.T) {
	if got := booksFence(&degrade.Fence{On: false}); got != nil {
		t.Errorf("Degrade: off: the books get a fence")
	}
	on := &degrade.Fence{On: true}
	if got := booksFence(on); got != on {
		t.Errorf("Degrade: mysql: the books get %p, want the fence %p", got, on)
	}
}
