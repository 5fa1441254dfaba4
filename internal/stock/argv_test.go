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

// luaPositions parses the constants luaConstants renders, line by line: name -> position.
func luaPositions(t *testing.T, prelude string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(prelude), "\n") {
		names, values, ok := strings.Cut(strings.TrimPrefix(line, "local "), " = ")
		ns, vs := strings.Split(names, ", "), strings.Split(values, ", ")
		if !ok || len(ns) != len(vs) {
			t.Fatalf("prelude line %q", line)
		}
		for i, n := range ns {
			var v int
			if _, err := fmt.Sscan(vs[i], &v); err != nil {
				t.Fatalf("prelude %s = %q", n, vs[i])
			}
			if _, dup := out[n]; dup {
				t.Fatalf("prelude names %s twice", n)
			}
			out[n] = v
		}
	}
	return out
}

// luaValues is, for each of the script's constants but a group's width, the values the script
// reads from it in args's ARGV, with every field set distinct and a list of two: a field's
// value; a list's two elements from ARG_<NAME> on; for a group field, its value in each of the
// two groups (ARGV[ARG_<LIST> - 1 + WIDTH * (i - 1) + <GROUP>_<NAME>]).
func luaValues(t *testing.T, sc *script) (want, got map[string][]string) {
	t.Helper()
	pos := luaPositions(t, argConstants(sc.args))
	p := reflect.New(reflect.TypeOf(sc.args))
	distinct(p.Interface(), 1)
	args := p.Elem()
	want = map[string][]string{}
	for i := range args.NumField() {
		name := "ARG_" + strings.ToUpper(args.Type().Field(i).Tag.Get("lua"))
		f := args.Field(i)
		switch {
		case f.Kind() != reflect.Slice:
			want[name] = []string{fmt.Sprint(f.Interface())}
		case i != args.NumField()-1:
			t.Fatalf("%s: a list before the last field", sc.name)
		case f.Type().Elem().Kind() != reflect.Struct:
			f.Set(reflect.ValueOf([]string{"first", "second"}))
			want[name] = []string{"first", "second"}
		default:
			f.Set(reflect.MakeSlice(f.Type(), 2, 2))
			prefix := strings.ToUpper(args.Type().Field(i).Tag.Get("group"))
			for g := range 2 {
				e := f.Index(g)
				distinct(e.Addr().Interface(), g+2)
				for j := range e.NumField() {
					gname := prefix + "_" + strings.ToUpper(e.Type().Field(j).Tag.Get("lua"))
					want[gname] = append(want[gname], fmt.Sprint(e.Field(j).Interface()))
				}
			}
			if pos[prefix+"_WIDTH"] != f.Type().Elem().NumField() {
				t.Errorf("%s: %s_WIDTH %d", sc.name, prefix, pos[prefix+"_WIDTH"])
			}
			delete(pos, prefix+"_WIDTH")
			want[name] = nil // the first group's place: its fields are checked by their names
		}
	}
	if len(pos) != len(want) {
		t.Fatalf("%s: %d constants for %d fields", sc.name, len(pos), len(want))
	}
	return want, readArgv(t, sc, pos, argvOf(args.Interface()), want)
}

// readArgv reads argv as the script does through its constants pos: each name's values
// (want's number of them) from its position, a group field's at its place in each group.
func readArgv(t *testing.T, sc *script, pos map[string]int, argv []any, want map[string][]string) map[string][]string {
	t.Helper()
	prefix, group, grouped := argGroup(reflect.TypeOf(sc.args))
	list := reflect.TypeOf(sc.args).Field(reflect.TypeOf(sc.args).NumField() - 1).Tag.Get("lua")
	got := map[string][]string{}
	for name, vals := range want {
		at, ok := pos[name]
		if !ok || at < 1 {
			t.Errorf("%s: no constant %s", sc.name, name)
			continue
		}
		for j := range vals {
			i := at - 1 + j // 0-based
			if grouped && strings.HasPrefix(name, prefix+"_") {
				i = pos["ARG_"+strings.ToUpper(list)] - 1 + group.NumField()*j + at - 1
			}
			if i >= len(argv) {
				t.Errorf("%s: %s (+%d) past the %d values", sc.name, name, j, len(argv))
				continue
			}
			got[name] = append(got[name], fmt.Sprint(argv[i]))
		}
	}
	return got
}

// Each converted script's ARGV, built by argvOf from its arguments struct, holds every field at
// the position the script's prepended constant of that field's name gives it (a list's first
// element there, the next after it; a group field in each group at its place).
func TestScriptArgsByName(t *testing.T) {
	for _, sc := range argScripts() {
		if !strings.HasPrefix(sc.src, argConstants(sc.args)) {
			t.Errorf("%s: the source does not start with its constants", sc.name)
		}
		want, got := luaValues(t, sc)
		for name, vals := range want {
			if !reflect.DeepEqual(got[name], vals) && len(vals) > 0 {
				t.Errorf("%s: Lua reads %s as %q, Go encoded %q", sc.name, name, got[name], vals)
			}
		}
	}
}

// A converted script indexes ARGV only by its ARG_ constants (no ARGV[<number>]; a script whose
// arguments end in a list, by a loop variable too; one whose list is of groups, by a variable
// plus a group's constant) and names every one of them, in its code (comments aside).
func TestScriptsReadArgvByName(t *testing.T) {
	index := regexp.MustCompile(`ARGV\[([^\]]*)\]`)
	loopVar := regexp.MustCompile(`^[a-z]\w*$`)
	inGroup := regexp.MustCompile(`^[a-z]\w* \+ ([A-Z_]+)$`)
	comment := regexp.MustCompile(`--[^\n]*`)
	var open []string
	for _, sc := range allScripts {
		code := comment.ReplaceAllString(sc.own, "")
		if regexp.MustCompile(`ARGV\[\s*\d`).MatchString(code) {
			open = append(open, sc.name)
		}
		if sc.args == nil {
			continue
		}
		pos := luaPositions(t, argConstants(sc.args))
		args := reflect.TypeOf(sc.args)
		list := args.Field(args.NumField()-1).Type.Kind() == reflect.Slice
		prefix, _, grouped := argGroup(args)
		for _, m := range index.FindAllStringSubmatch(code, -1) {
			i := strings.TrimSpace(m[1])
			_, named := pos[i]
			g := inGroup.FindStringSubmatch(i)
			inList := list && !grouped && loopVar.MatchString(i)
			ofGroup := grouped && g != nil && strings.HasPrefix(g[1], prefix+"_") && pos[g[1]] > 0
			if !named && !inList && !ofGroup {
				t.Errorf("%s.lua reads %s, not one of its ARG_ names", sc.name, m[0])
			}
		}
		for name := range pos {
			if !regexp.MustCompile(`\b` + name + `\b`).MatchString(code) {
				t.Errorf("%s.lua never uses %s", sc.name, name)
			}
		}
	}
	if len(open) > 0 {
		t.Logf("scripts that read ARGV by number: %v", open)
	}
}
