package stock

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// distinct sets every field of the struct at p to a value no other field of any call holds:
// field i of group g is g*100+i (a string of it, or the number).
func distinct(p any, g int) {
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Int64, reflect.Int:
			f.SetInt(int64(g*100 + i))
		case reflect.String:
			f.SetString(fmt.Sprint(g*100 + i))
		}
	}
}

// argvAt is the value the Lua side reads for the field named name of group g (0: the call's
// own, 1..: item g's), through the positions it is given (reserveLuaConstants).
func argvAt(t *testing.T, consts map[string]int, argv []any, g int, name string) string {
	t.Helper()
	if g == 0 {
		return fmt.Sprint(argv[consts["ARG_"+strings.ToUpper(name)]-1])
	}
	at := consts["ARG_COUNT"] + consts["ITEM_COUNT"]*(g-1) + consts["ITEM_"+strings.ToUpper(name)]
	return fmt.Sprint(argv[at-1])
}

// reserveConstants parses the Lua prelude rendered from the codec's structs.
func reserveConstants(t *testing.T) map[string]int {
	t.Helper()
	return luaPositions(t, reserveLuaConstants)
}

// Every argument reserve.lua reads by name is the field of that name that Go encoded: argv and
// the Lua constants agree for every field of the call and of each item.
func TestReserveArgvFollowsTheTable(t *testing.T) {
	consts := reserveConstants(t)
	var call reserveArgs
	distinct(&call, 0)
	items := make([]reserveItemArgs, 3)
	for g := range items {
		distinct(&items[g], g+1)
	}
	argv := call.argv(items)
	if len(argv) != reserveArgCount+3*reserveItemArgCount {
		t.Fatalf("argv of %d values for 3 items", len(argv))
	}
	call.Distinct, call.HeldPrefix = "1", heldPrefix // argv's own: from the items (distinct here), a constant
	check := func(p any, g int) {
		v := reflect.ValueOf(p)
		for i := range v.NumField() {
			name := v.Type().Field(i).Tag.Get("lua")
			if got, want := argvAt(t, consts, argv, g, name), fmt.Sprint(v.Field(i).Interface()); got != want {
				t.Errorf("group %d: Lua reads %s as %q, Go encoded %q", g, name, got, want)
			}
		}
	}
	check(call, 0)
	for g, it := range items {
		check(it, g+1)
	}
}

// reserve.lua reads ARGV and builds its reply only through the constants: it indexes ARGV by
// no number, and uses every constant the codec renders.
func TestReserveLuaUsesTheNames(t *testing.T) {
	if m := regexp.MustCompile(`ARGV\[\s*\d|out\[[^\]]*\d`).FindAllString(reserveLua, -1); len(m) > 0 {
		t.Fatalf("reserve.lua indexes ARGV or its reply by number: %v", m)
	}
	for name := range reserveConstants(t) {
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(reserveLua) {
			t.Errorf("reserve.lua does not use %s", name)
		}
	}
}

// The script keeps no table of what earlier items did only when argv says the items are
// distinct: a buyer twice, or a fresh number twice, in one call makes the flag "0".
func TestReserveArgvDistinct(t *testing.T) {
	item := func(uid int64, short string) reserveItemArgs { return reserveItemArgs{UID: uid, Short: short} }
	for _, c := range []struct {
		items []reserveItemArgs
		want  string
	}{
		{[]reserveItemArgs{item(1, "a")}, "1"},
		{[]reserveItemArgs{item(1, "a"), item(2, "b"), item(3, "c")}, "1"},
		{[]reserveItemArgs{item(1, "a"), item(2, "b"), item(1, "c")}, "0"}, // a buyer twice
		{[]reserveItemArgs{item(1, "a"), item(2, "b"), item(3, "a")}, "0"}, // a number twice
	} {
		argv := reserveArgs{}.argv(c.items)
		if got := argv[reserveLuaConstantsAt(t, "ARG_DISTINCT")-1]; got != c.want {
			t.Errorf("items %+v: distinct %v, want %s", c.items, got, c.want)
		}
	}
}

func reserveLuaConstantsAt(t *testing.T, name string) int {
	t.Helper()
	at, ok := reserveConstants(t)[name]
	if !ok {
		t.Fatalf("no %s", name)
	}
	return at
}
