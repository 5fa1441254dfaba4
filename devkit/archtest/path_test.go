package archtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	pathEntry = regexp.MustCompile("(?m)^(\\d+)\\. `([^`]+)`(?: — `([^`]+)`)?")
	pathCount = regexp.MustCompile(`The list has (\d+) files \((\d+) Go, (\d+) Lua\)`)
)

// pathProblems checks the list docs/DESIGN.md opens with, "A reservation's path" (design is
// the document, root the module): its entries numbered 1, 2, … in order, each naming a file
// that exists, none named twice, each Go entry leading with a function its file declares (a Lua
// entry may: "n. `file` — `fn` …", fn F or T.M), and the sentence after it counting them ("The
// list has n files (g Go, l Lua)"). files is the list, in order.
func pathProblems(root string, design []byte) (files, problems []string) {
	doc := string(design)
	start := strings.Index(doc, "## A reservation's path")
	if start < 0 {
		return nil, []string{`no "## A reservation's path" section`}
	}
	section := doc[start+2:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	seen := map[string]bool{}
	var goFiles, luaFiles int
	for i, m := range pathEntry.FindAllStringSubmatch(section, -1) {
		if m[1] != strconv.Itoa(i+1) {
			problems = append(problems, fmt.Sprintf("entry %d is numbered %s", i+1, m[1]))
		}
		file := m[2]
		files = append(files, file)
		if seen[file] {
			problems = append(problems, file+" is listed twice")
		}
		seen[file] = true
		if !exists(filepath.Join(root, filepath.FromSlash(file))) {
			problems = append(problems, file+" does not exist")
		} else if p := leadProblem(root, file, m[3]); p != "" {
			problems = append(problems, p)
		}
		switch filepath.Ext(file) {
		case ".go":
			goFiles++
		case ".lua":
			luaFiles++
		}
	}
	want := fmt.Sprintf("The list has %d files (%d Go, %d Lua)", len(files), goFiles, luaFiles)
	if got := pathCount.FindString(section); got != want {
		problems = append(problems, fmt.Sprintf("the count says %q, the list %q", got, want))
	}
	return files, problems
}

// leadProblem checks that file (which exists) declares fn, the function its entry leads with: F
// or T.M in Go (a method of T, T's pointer or generic type), F in Lua; a Go entry must lead
// with one. "" when it does.
func leadProblem(root, file, fn string) string {
	lua := filepath.Ext(file) == ".lua"
	if fn == "" {
		if lua {
			return ""
		}
		return file + "'s entry does not lead with the function it runs"
	}
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		return err.Error()
	}
	recv, name, _ := strings.Cut(fn, ".")
	if name == "" {
		recv, name = "", recv
	}
	var decl string
	switch {
	case lua:
		decl = `(?m)^(local )?function ` + regexp.QuoteMeta(fn) + `\(`
	case recv != "":
		decl = `(?m)^func \(\w+ \*?` + regexp.QuoteMeta(recv) + `(\[[^\]]*\])?\) ` + regexp.QuoteMeta(name) + `[\[(]`
	default:
		decl = `(?m)^func ` + regexp.QuoteMeta(name) + `[\[(]`
	}
	if !regexp.MustCompile(decl).Match(src) {
		return file + " declares no " + fn
	}
	return ""
}

func TestReservationPath(t *testing.T) {
	root := moduleRoot(t)
	design, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, problems := pathProblems(root, design)
	for _, p := range problems {
		t.Errorf("docs/DESIGN.md, A reservation's path: %s", p)
	}
	t.Logf("a reservation's path: %d files", len(files))
}

// The check must be able to fail: a gap in the numbering, a file that does not exist, a file
// listed twice, a wrong count and an entry whose file does not declare the function it leads
// with (or a Go entry leading with none) are each reported.
func TestReservationPathCatch(t *testing.T) {
	root := t.TempDir()
	for f, src := range map[string]string{"a.go": "package a\n\nfunc (t *T) Run() {}\n\nfunc F[K any]() {}\n",
		"b.lua": "local function pack(x)\nend\n"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	good := "# x\n\n## A reservation's path\n\n1. `a.go` — `T.Run` one, then `F`.\n2. `b.lua` — two.\n\n" +
		"The list has 2 files (1 Go, 1 Lua).\n\n## Next\n\n3. `gone.go` — not in the section.\n"
	if files, problems := pathProblems(root, []byte(good)); len(problems) != 0 || len(files) != 2 {
		t.Fatalf("a true list: files %q, problems %q", files, problems)
	}
	for _, c := range []struct{ from, to, want string }{
		{"2. `b.lua`", "3. `b.lua`", "entry 2 is numbered 3"},
		{"2. `b.lua`", "2. `c.lua`", "c.lua does not exist"},
		{"2. `b.lua`", "2. `a.go`", "a.go is listed twice"},
		{"(1 Go, 1 Lua)", "(2 Go, 0 Lua)", `the count says "The list has 2 files (2 Go, 0 Lua)"`},
		{"`T.Run` one", "`U.Run` one", "a.go declares no U.Run"},
		{"`T.Run` one", "`Run` one", "a.go declares no Run"},
		{"`T.Run` one", "one", "a.go's entry does not lead with the function it runs"},
		{"— two", "— `packed` two", "b.lua declares no packed"},
	} {
		_, problems := pathProblems(root, []byte(strings.Replace(good, c.from, c.to, 1)))
		if !strings.Contains(strings.Join(problems, "; "), c.want) {
			t.Errorf("%s → %s: problems %q, want %q", c.from, c.to, problems, c.want)
		}
	}
}
