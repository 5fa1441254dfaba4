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
// the position the script's prepended constant of that field's name gives it (a list's first
// element there, the next after it).
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
		want := map[string][]string{} // constant -> the values Lua should find from it on
		for i := range args.NumField() {
			name := "ARG_" + strings.ToUpper(args.Type().Field(i).Tag.Get("lua"))
			if f := args.Field(i); f.Kind() == reflect.Slice {
				if i != args.NumField()-1 {
					t.Fatalf("%s: a list before the last field", sc.name)
				}
				f.Set(reflect.ValueOf([]string{"first", "second"}))
				want[name] = []string{"first", "second"}
			} else {
				want[name] = []string{fmt.Sprint(f.Interface())}
			}
		}
		argv := argvOf(args.Interface())
		if len(pos) != len(want) {
			t.Fatalf("%s: %d constants for %d fields", sc.name, len(pos), len(want))
		}
		for name, vals := range want {
			at, ok := pos[name]
			if !ok || at < 1 || at+len(vals)-1 > len(argv) {
				t.Errorf("%s: %s at %d of %d values", sc.name, name, at, len(argv))
				continue
			}
			for j, v := range vals {
				if got := fmt.Sprint(argv[at-1+j]); got != v {
					t.Errorf("%s: Lua reads %s (+%d) as %q, Go encoded %q", sc.name, name, j, got, v)
				}
			}
		}
	}
}

// A converted script indexes ARGV only by its ARG_ constants (no ARGV[<number>]; a script whose
// arguments end in a list, by a loop variable too) and names every one of them.
func TestScriptsReadArgvByName(t *testing.T) {
	index := regexp.MustCompile(`ARGV\[([^\]]*)\]`)
	loopVar := regexp.MustCompile(`^[a-z]\w*$`)
	var open []string
	for _, sc := range allScripts {
		if regexp.MustCompile(`ARGV\[\s*\d`).MatchString(sc.own) {
			open = append(open, sc.name)
		}
		if sc.args == nil {
			continue
		}
		pos := luaPositions(t, luaConstants("ARG", sc.args))
		args := reflect.TypeOf(sc.args)
		list := args.Field(args.NumField()-1).Type.Kind() == reflect.Slice
		for _, m := range index.FindAllStringSubmatch(sc.own, -1) {
			i := strings.TrimSpace(m[1])
			if _, ok := pos[i]; !ok && !(list && loopVar.MatchString(i)) {
				t.Errorf("%s.lua reads %s, not one of its ARG_ names", sc.name, m[0])
			}
		}
		for name := range pos {
			if !regexp.MustCompile(`\b` + name + `\b`).MatchString(sc.own) {
				t.Errorf("%s.lua never uses %s", sc.name, name)
			}
		}
	}
	t.Logf("scripts that read ARGV by number: %v", open)
}
