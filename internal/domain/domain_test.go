package domain_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/domain"
	"github.com/seckill/seckill/internal/xerr"
)

func TestCheckNewActivity(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ok := domain.NewActivity{SkuID: 1, Name: "tea", Stock: 100, StartTime: now.Unix(), EndTime: now.Unix() + 3600,
		PerUserLimit: 1, PayTimeoutSeconds: 900}
	if err := domain.CheckNewActivity(ok, now); err != nil {
		t.Fatalf("valid activity refused: %v", err)
	}
	for name, tc := range map[string]struct {
		edit func(*domain.NewActivity)
		want string
	}{
		"sku 0":            {func(a *domain.NewActivity) { a.SkuID = 0 }, "sku_id"},
		"empty name":       {func(a *domain.NewActivity) { a.Name = "" }, "name"},
		"long name":        {func(a *domain.NewActivity) { a.Name = strings.Repeat("é", 129) }, "name"},
		"bad utf-8":        {func(a *domain.NewActivity) { a.Name = "\xff" }, "name"},
		"stock 0":          {func(a *domain.NewActivity) { a.Stock = 0 }, "stock"},
		"negative start":   {func(a *domain.NewActivity) { a.StartTime = -1 }, "start_time"},
		"end = start":      {func(a *domain.NewActivity) { a.EndTime = a.StartTime }, "end_time"},
		"year 3000":        {func(a *domain.NewActivity) { a.EndTime = 32503680000 }, "within 10 years"},
		"end in ms":        {func(a *domain.NewActivity) { a.EndTime *= 1000 }, "within 10 years"},
		"end in ns":        {func(a *domain.NewActivity) { a.EndTime *= 1_000_000_000 }, "within 10 years"},
		"start, end in ms": {func(a *domain.NewActivity) { a.StartTime *= 1000; a.EndTime *= 1000 }, "within 10 years"},
		"start 11y back": {func(a *domain.NewActivity) { a.StartTime = now.Add(-11 * 365 * 24 * time.Hour).Unix() },
			"within 10 years"},
		"limit 0":          {func(a *domain.NewActivity) { a.PerUserLimit = 0 }, "per_user_limit"},
		"pay timeout 0":    {func(a *domain.NewActivity) { a.PayTimeoutSeconds = 0 }, "pay_timeout"},
		"pay timeout 1d+1": {func(a *domain.NewActivity) { a.PayTimeoutSeconds = 86401 }, "pay_timeout"},
	} {
		a := ok
		tc.edit(&a)
		err := domain.CheckNewActivity(a, now)
		if xerr.CodeOf(err) != xerr.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want INVALID_ARGUMENT naming %q", name, err, tc.want)
		}
	}
	// The horizon's edges: 10 years ahead is allowed, a second more is not.
	edge := ok
	edge.EndTime = now.Add(domain.MaxHorizon).Unix()
	if err := domain.CheckNewActivity(edge, now); err != nil {
		t.Errorf("end at the horizon refused: %v", err)
	}
	edge.EndTime++
	if err := domain.CheckNewActivity(edge, now); err == nil {
		t.Error("end past the horizon accepted")
	}
}

func TestOrderNumbers(t *testing.T) {
	no := domain.NewOrderNo(42)
	if aid, err := domain.CheckOrderNo(no); err != nil || aid != 42 {
		t.Fatalf("CheckOrderNo(%q) = %d, %v", no, aid, err)
	}
	for _, bad := range []string{"", "42", "0-deadbeef", "-1-deadbeef", "42-DEADBEEF", "42-dead", "a-deadbeef",
		"42-" + strings.Repeat("a", 61), "99999999999999999999-deadbeef"} {
		if _, err := domain.CheckOrderNo(bad); err == nil {
			t.Errorf("CheckOrderNo(%q) accepted", bad)
		}
	}
}

func TestRequestIDs(t *testing.T) {
	for id, want := range map[string]bool{"abcdefgh": true, "A_b-9xyz": true, strings.Repeat("a", 64): true,
		"abcdefg": false, strings.Repeat("a", 65): false, "abc def gh": false, "abcdefg/": false, "": false} {
		if got := domain.CheckRequestID(id) == nil; got != want {
			t.Errorf("CheckRequestID(%q) ok = %v, want %v", id, got, want)
		}
	}
}

// ValidRequestID is the byte loop for `^[A-Za-z0-9_-]{8,64}$`: it agrees with the regexp on
// every length around the bounds and every byte value.
func TestValidRequestIDIsThePattern(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{8,64}$`)
	check := func(id string) {
		if got, want := domain.ValidRequestID(id), re.MatchString(id); got != want {
			t.Fatalf("ValidRequestID(%q) = %v, the pattern says %v", id, got, want)
		}
	}
	for n := 0; n <= 66; n++ {
		check(strings.Repeat("a", n))
	}
	for c := 0; c < 256; c++ {
		check("abcdefg" + string([]byte{byte(c)}))
		check(string([]byte{byte(c)}) + "abcdefg")
	}
	check("abcdefgh\n")
	check("abc-_DEF09")
}

// NewOrderNo's body is "<aid>-<unix ms><8 hex>", its tag verifies, and its shape parses.
func TestNewOrderNoShape(t *testing.T) {
	key := []byte("k")
	before := time.Now().UnixMilli()
	no := domain.NewOrderNo(9223372036854775807, key)
	after := time.Now().UnixMilli()
	if aid, ok := domain.VerifyOrderNo(no, key); !ok || aid != 9223372036854775807 {
		t.Fatalf("VerifyOrderNo(%q) = %d, %v", no, aid, ok)
	}
	body := strings.TrimPrefix(no[:len(no)-domain.OrderNoTagLen], "9223372036854775807-")
	if len(body) != 13+8 {
		t.Fatalf("order no %q: body %q, want 13 ms digits and 8 hex", no, body)
	}
	ms, err := strconv.ParseInt(body[:13], 10, 64)
	if err != nil || ms < before || ms > after {
		t.Fatalf("order no %q: ms %d (%v), want in [%d, %d]", no, ms, err, before, after)
	}
	if _, err := strconv.ParseUint(body[13:], 16, 32); err != nil || strings.ToLower(body[13:]) != body[13:] {
		t.Fatalf("order no %q: random part %q is not 8 lower-case hex digits", no, body[13:])
	}
}
