package domain

import (
	"strings"
	"testing"
)

func TestOrderNoTag(t *testing.T) {
	key := []byte("order-key-for-the-test-0123456789")
	no := NewOrderNo(42, key)
	if aid, ok := VerifyOrderNo(no, key); !ok || aid != 42 {
		t.Fatalf("%s: %d %v", no, aid, ok)
	}
	if _, ok := ParseOrderNo(no); !ok || len(no) > MaxOrderNoLen {
		t.Fatalf("%s does not have the documented shape", no)
	}
	for name, bad := range map[string]string{
		"other key": NewOrderNo(42, []byte("another-key")),
		"unkeyed":   NewOrderNo(42),
		"other aid": "43" + no[2:],
		"flipped digit": no[:len(no)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef",
			no[len(no)-1])+1)%16]),
		"no tag": no[:len(no)-OrderNoTagLen],
		"short":  "42-deadbeef",
	} {
		if _, ok := VerifyOrderNo(bad, key); ok {
			t.Errorf("%s: %s verified", name, bad)
		}
	}
	if _, ok := VerifyOrderNo(NewOrderNo(7), nil); !ok {
		t.Fatal("the unkeyed checksum does not verify")
	}
}
