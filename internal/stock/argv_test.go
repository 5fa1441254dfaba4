package stock

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// argScripts are the scripts that read ARGV by name (an arguments struct).
func argScripts() []*script {
	var out []*script
	for _, sc := range allScripts {
		if sc.args != nil {
			out = append(out, sc)
		}
	}
	return out
}

// luaPositions parses the constants luaConstants renders: name -> position.
func luaPositions(t *testing.T, prelude string) map[string]int {
	t.Helper()
	names, values, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(prelude), "local "), " = ")
	ns, vs := strings.Split(names, ", "), strings.Split(values, ", ")
	if !ok || len(ns) != len(vs) {
		t.Fatalf("prelude %q", prelude)
	}
	out := map[string]int{}
	for i, n := range ns {
		var v int
		if _, err := fmt.Sscan(vs[i], &v); err != nil {
			t.Fatalf("prelude %s = %q", n, vs[i])
		}
		out[n] = v
	}
	return out
}

// Each converted script's ARGV, built by argvOf from its arguments struct, holds every field at
// the position the script's prepended constant of that field's name gives it.
func TestScriptArgsByName(t *testing.T) {
	for _, sc := range argScripts() {
		prelude := luaConstants("ARG", sc.args)
		if !strings.HasPrefix(sc.src, prelude) {
			t.Errorf("%s: the source does not start with its constants", sc.name)
		}
		pos := luaPositions(t, prelude)
		p := reflect.New(reflect.TypeOf(sc.args))
		distinct(p.Interface(), 1)
		args := p.Elem()
		argv := argvOf(args.Interface())
		if len(argv) != args.NumField() || len(pos) != args.NumField() {
			t.Fatalf("%s: %d values and %d constants for %d fields", sc.name, len(argv), len(pos), args.NumField())
		}
		for i := range args.NumField() {
			name := "ARG_" + strings.ToUpper(args.Type().Field(i).Tag.Get("lua"))
			at, ok := pos[name]
			if !ok || at < 1 || at > len(argv) {
				t.Errorf("%s: %s at %d", sc.name, name, at)
				continue
			}
			if got, want := fmt.Sprint(argv[at-1]), fmt.Sprint(args.Field(i).Interface()); got != want {
				t.Errorf("%s: Lua reads %s as %q, Go encoded %q", sc.name, name, got, want)
			}
		}
	}
}

// A converted script indexes ARGV only by its ARG_ constants (no ARGV[<number>], no other
// name) and reads every one of them.
func TestScriptsReadArgvByName(t *testing.T) {
	index := regexp.MustCompile(`ARGV\[([^\]]*)\]`)
	var open []string
	for _, sc := range allScripts {
		if sc.args == nil {
			open = append(open, sc.name)
			continue
		}
		pos := luaPositions(t, luaConstants("ARG", sc.args))
		for _, m := range index.FindAllStringSubmatch(sc.own, -1) {
			if _, ok := pos[strings.TrimSpace(m[1])]; !ok {
				t.Errorf("%s.lua reads %s, not one of its ARG_ names", sc.name, m[0])
			}
		}
		for name := range pos {
			if !strings.Contains(sc.own, "ARGV["+name+"]") {
				t.Errorf("%s.lua never reads ARGV[%s]", sc.name, name)
			}
		}
	}
	t.Logf("scripts that read ARGV by number: %v", open)
}
