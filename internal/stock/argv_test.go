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
	args := reflect.New(reflect.TypeOf(sc.args)).Elem()
	fields := argFields(args.Type())
	want = map[string][]string{}
	for i, sf := range fields {
		name := "ARG_" + strings.ToUpper(sf.Tag.Get("lua"))
		f := args.FieldByIndex(sf.Index)
		switch {
		case f.Kind() == reflect.Int64 || f.Kind() == reflect.Int:
			f.SetInt(int64(100 + i)) // distinct values, an embedded struct's fields included
			want[name] = []string{fmt.Sprint(f.Interface())}
		case f.Kind() == reflect.String:
			f.SetString(fmt.Sprint(100 + i))
			want[name] = []string{f.String()}
		case f.Kind() != reflect.Slice:
			t.Fatalf("%s: field %s is a %s", sc.name, sf.Name, f.Kind())
		case i != len(fields)-1:
			t.Fatalf("%s: a list before the last field", sc.name)
		case f.Type().Elem().Kind() != reflect.Struct:
			f.Set(reflect.ValueOf([]string{"first", "second"}))
			want[name] = []string{"first", "second"}
		default:
			f.Set(reflect.MakeSlice(f.Type(), 2, 2))
			prefix := strings.ToUpper(sf.Tag.Get("group"))
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
	fields := argFields(reflect.TypeOf(sc.args))
	list := fields[len(fields)-1].Tag.Get("lua")
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
		fields := argFields(args)
		list := fields[len(fields)-1].Type.Kind() == reflect.Slice
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

// An embedded struct's fields are arguments in its place (warmup.lua's and edit_meta.lua's shared
// activityArgs): in the ARGV argvOf builds and in the constants, where a walk that skipped it
// would leave ARG_START out, or put the whole struct in one value and move every later field.
func TestArgsWalkEmbeddedFields(t *testing.T) {
	a := warmupArgs{Total: 1, Remaining: 2, Locked: 3, Sold: 4, activityArgs: activityArgs{Start: 5, End: 6, Limit: 7,
		PayTimeout: 8, SkuID: 9, ExpireAt: 10, Name: "n", DrawAt: 12, Price: 13}, Epoch: 14, Drawn: "1"}
	want := []any{int64(1), int64(2), int64(3), int64(4), int64(5), int64(6), int64(7), int64(8), int64(9), int64(10),
		"n", int64(12), int64(13), int64(14), "1"}
	if got := argvOf(a); !reflect.DeepEqual(got, want) {
		t.Fatalf("argvOf(warmupArgs): %v, want %v", got, want)
	}
	pos := luaPositions(t, argConstants(warmupArgs{}))
	for name, at := range map[string]int{"ARG_SOLD": 4, "ARG_START": 5, "ARG_PRICE": 13, "ARG_EPOCH": 14,
		"ARG_DRAWN": 15} {
		if pos[name] != at {
			t.Errorf("warmup's %s = %d, want %d", name, pos[name], at)
		}
	}
	if pos := luaPositions(t, argConstants(editMetaArgs{})); pos["ARG_START"] != 1 || pos["ARG_MESSAGE"] != 11 {
		t.Errorf("edit_meta's ARG_START %d, ARG_MESSAGE %d; want 1 and 11", pos["ARG_START"], pos["ARG_MESSAGE"])
	}
}
