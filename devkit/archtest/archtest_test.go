package archtest

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/seckill/seckill"

// layer is a group of folders that obey the same import rule.
type layer struct {
	name string
	// owns reports whether a package (path relative to the module) belongs to the layer.
	owns func(rel string) bool
	// mayUse reports whether a package of the layer may depend (directly or not, non-test
	// code only) on the module's package rel.
	mayUse func(self, rel string) bool
}

func under(rel string, dirs ...string) bool {
	for _, d := range dirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// generatedClient is the one thing of a service another may use: the inventory service's
// goctl-generated zRPC client and its protobuf types (the gateway and the jobs call it).
func generatedClient(rel string) bool {
	return rel == "rpc/inventory" || rel == "rpc/inventoryclient"
}

func service(rel string) string { return strings.SplitN(rel, "/", 2)[0] }

// layers, from the bottom up. Every package of the module must belong to exactly one.
var layers = []layer{
	{"schema and models", func(rel string) bool { return under(rel, "sql", "model") },
		func(_, rel string) bool { return under(rel, "sql", "model") }},
	{"runtime (internal/)", func(rel string) bool { return under(rel, "internal") },
		func(_, rel string) bool { return under(rel, "internal", "model", "sql") || generatedClient(rel) }},
	{"services (api/, rpc/, mq/)", func(rel string) bool { return under(rel, "api", "rpc", "mq") },
		func(self, rel string) bool {
			return under(rel, "internal", "model", "sql") || generatedClient(rel) || service(rel) == service(self)
		}},
	{"tooling (devkit/, cmd/)", func(rel string) bool { return under(rel, "devkit", "cmd", "etc") },
		func(_, _ string) bool { return true }},
}

// inAPI reports whether the package rel belongs to the gateway.
func inAPI(rel string) bool { return under(rel, "api") }

// forbidden are outside packages a layer may not reach, with the reason.
var forbidden = []struct {
	layer func(rel string) bool
	dep   string
	why   string
}{
	{inAPI, "github.com/go-sql-driver/mysql", "the gateway holds no database handle"},
	{inAPI, "github.com/zeromicro/go-zero/core/stores/sqlx", "the gateway holds no database handle"},
	{inAPI, module + "/model", "the gateway asks the inventory service for activities"},
}

type listed struct {
	ImportPath string
	Deps       []string
}

func goList(t *testing.T) []listed {
	t.Helper()
	// "./..." matches the main module's packages only; the pattern module+"/..." also searches
	// every module in the build list, which needs go.mod files the build never downloads.
	cmd := exec.Command("go", "list", "-tags", "no_k8s", "-json=ImportPath,Deps", "./...")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages: not the whole module", len(pkgs))
	}
	return pkgs
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root not at %s: %v", dir, err)
	}
	return dir
}

func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// violations returns what breaks the layer rules in pkgs.
func violations(pkgs []listed) []string {
	var bad []string
	for _, p := range pkgs {
		self, _ := rel(p.ImportPath)
		var in []layer
		for _, l := range layers {
			if l.owns(self) {
				in = append(in, l)
			}
		}
		if len(in) != 1 {
			bad = append(bad, self+": belongs to "+strconv.Itoa(len(in))+" layers (give its folder a rule)")
			continue
		}
		for _, dep := range p.Deps {
			if r, ok := rel(dep); ok && !in[0].mayUse(self, r) {
				bad = append(bad, self+" ("+in[0].name+") depends on "+r)
			}
			for _, f := range forbidden {
				if f.layer(self) && (dep == f.dep || strings.HasPrefix(dep, f.dep+"/")) {
					bad = append(bad, self+" depends on "+dep+": "+f.why)
				}
			}
		}
	}
	return bad
}

func TestImportsPointDown(t *testing.T) {
	for _, v := range violations(goList(t)) {
		t.Error(v)
	}
}

// The rules must be able to fail: a runtime package reaching a service or the tooling, a
// service reaching the tooling, the gateway reaching the database, a folder without a rule.
func TestRulesCatch(t *testing.T) {
	for _, tc := range []struct {
		pkg  listed
		want string
	}{
		{listed{module + "/internal/stock", []string{module + "/rpc/rpcserver"}}, "depends on rpc/rpcserver"},
		{listed{module + "/internal/stock", []string{module + "/devkit/testenv"}}, "depends on devkit/testenv"},
		{listed{module + "/mq/internal/jobs", []string{module + "/devkit/rpctest"}}, "depends on devkit/rpctest"},
		{listed{module + "/api/internal/svc", []string{module + "/mq/internal/writer"}}, "depends on mq/internal/writer"},
		{listed{module + "/api/internal/svc", []string{"github.com/go-sql-driver/mysql"}}, "no database handle"},
		{listed{module + "/model", []string{module + "/internal/xerr"}}, "depends on internal/xerr"},
		{listed{module + "/tools/x", nil}, "belongs to 0 layers"},
	} {
		got := strings.Join(violations([]listed{tc.pkg}), "\n")
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s with deps %v: got %q, want a violation %q", tc.pkg.ImportPath, tc.pkg.Deps, got, tc.want)
		}
	}
	ok := []listed{
		{module + "/mq/internal/jobs", []string{module + "/rpc/inventoryclient", module + "/internal/xerr"}},
		{module + "/api/internal/logic/buyer", []string{module + "/api/internal/svc", module + "/internal/domain"}},
		{module + "/devkit/standalone", []string{module + "/api/apiserver", module + "/mq/mqserver"}},
	}
	if v := violations(ok); len(v) != 0 {
		t.Errorf("allowed imports reported: %v", v)
	}
}

// sqlLiteral matches a string that is an SQL statement or a clause of one.
var sqlLiteral = regexp.MustCompile(`^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|TRUNCATE|GRANT)\s` +
	`|\s(FROM|WHERE|VALUES|SET|JOIN)\s`)

// sqlOutsideModel lists string literals that look like SQL in non-test Go files outside
// model/ and sql/.
func sqlOutsideModel(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && path != root || r == "model" || r == "sql" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		found = append(found, sqlIn(t, path, r)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func sqlIn(t *testing.T, path, name string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if s, err := strconv.Unquote(lit.Value); err == nil && sqlLiteral.MatchString(s) {
			found = append(found, name+":"+strconv.Itoa(fset.Position(lit.Pos()).Line)+": "+s)
		}
		return true
	})
	return found
}

func TestNoSQLOutsideModel(t *testing.T) {
	for _, f := range sqlOutsideModel(t, moduleRoot(t)) {
		t.Errorf("SQL outside model/ and sql/: %s", f)
	}
}

func TestSQLDetectorCatches(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nconst a = \"SELECT id FROM activity\"\n\nvar b = `UPDATE inventory SET sold = sold + ?`\n\n" +
		"var c = \" WHERE activity_id = ?\"\n\nvar d = \"select the activity\"\n\nvar e = \"Update the counters\"\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := sqlOutsideModel(t, dir)
	if len(got) != 3 {
		t.Fatalf("found %d SQL literals, want 3 (a, b, c): %q", len(got), got)
	}
}
