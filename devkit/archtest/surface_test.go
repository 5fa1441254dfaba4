package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stockSurfaceBudget is the most exported identifiers internal/stock and the packages under it
// may have together (the issue "One reservation pipeline": at most half of the 235 it had).
// 197 -> 183 (#33): the seven key names only the package uses unexported, Store.Expire (tests
// only) moved to export_test.go, Meta embeds Counters (four fields named once), Stream.Len
// gone (the relay uses Outbox.Len), DrawPending moved to its one user (rpc/internal/logic).
// 183 -> 175: the relay's Stream (a type, its seven methods and Outbox.Stream) moved to its
// one user, internal/relay; stock keeps Outbox.Conn, the blocking connection it opens.
// 175 -> 174: DrawCommitment, the seed's hash only rpc shows, moved to rpc/internal/draw.
// 174 -> 171: ActiveEntry (a type, two fields; a third meaning of "entry") gone: ActiveUntil
// answers id -> last due time.
// 171 -> 161: ReserveResult.Entries unexported (callers use Awaited); the activity's four lease
// keys one Keys.Lock(aid, of), each lease named by its owner; the keys that are not the
// inventory's (the gateway's rate limits and Idempotency-Keys, the RPC app tokens, the activity
// Bloom filter) defined next to their owners (api/gatekeys, rpcserver, rpc/internal/activity).
// 161 -> 160: Keys.Missing unexported; the tests ask Store.Missing, or clear the mark with
// Store.ClearMissing, as the loader does.
// 160 -> 103: what both books hold and take, and the draw's vocabulary, moved to internal/domain
// (Activity, was Meta, with Counters; Order; ReserveItem; Reservation; Payment; DrawEntry,
// DrawOrder and the draw's states: 49); Store.DrawEntry answers the entry, its status and order
// number (DrawEntryStatus gone: 3); Active(from, to) for ActiveIDs and ActiveUntil;
// SetMissing(0) for ClearMissing; OrderNos (tests only) moved to devkit/stocktest;
// ErrIdempotencyConflict, answered by MySQL's check too, is xerr's; Store.Price gone (the
// prices' cache reads Store.Stock).
// 103 -> 96: reconciliation keeps its own records (internal/reconcile/records.go: the history
// of differences and the shared report, under their old key names): Audit.SaveHistory,
// SaveReport, LastReport and Sighting.History gone (4); Audit.ScanOrders takes the Sighting it
// puts the orders back to (Sighting.Seq unexported); Recovery.Restore runs wipe.lua first
// (Recovery.Wipe gone: its one caller ran it just before); an unsure script call is marked by
// a sentinel, not a wrapper type with an Unwrap method.
// Sub-packages (stock/outbox, /recovery, /audit) were weighed and not made: each view's methods
// run scripts or read keys, packed orders and stock hashes through stock's unexported script
// runner, key builders and codecs, which stock would have to export to them.
// 96 -> 94: Store.DrawEntryCount gone (Store.Draw counts the entries in its round trip,
// DrawProgress.Entries; DrawProgress.Lost, read by tests only, gone); Store.Now gone (the drawer
// reads the stock hash and Redis's clock at one moment with Audit.Sight).
// 94 -> 90: Outbox.Name gone (Outbox.Conn hands the relay the store's keys, which name the
// streams: Keys.Events); Keys.Lock unexported (Store.Lock is the way to a lease; each owner's
// tests pin its key through it); the Audit view (a type and Store.Audit) gone: Store.Sight and
// Store.ScanOrders, Sight being the drawer's read too. ErrLeaseLapsed stays exported: the
// degrade fence's scenario (devkit/pipelinetest) tells it apart from other BUSY answers by
// identity, which its message would otherwise have to stand in for.
const stockSurfaceBudget = 90

// surface counts the exported identifiers of the non-test Go files under root, every package
// there included: exported top-level types, funcs, vars and consts, exported methods (on any
// receiver), and the named exported fields of exported struct types. Fields of unexported
// structs (the script codec's, read by reflection) and embedded fields are not counted.
// It returns the count per package directory, relative to root.
func surface(t *testing.T, root string) map[string]int {
	t.Helper()
	count := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Ext(path) != ".go" || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		count[dir] += exported(f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return count
}

// exported counts one file's exported identifiers (surface).
func exported(f *ast.File) int {
	n := 0
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Name.IsExported() {
				n++
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, name := range s.Names {
						if name.IsExported() {
							n++
						}
					}
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					n++
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, fl := range st.Fields.List {
							for _, name := range fl.Names {
								if name.IsExported() {
									n++
								}
							}
						}
					}
				}
			}
		}
	}
	return n
}

func TestStockSurface(t *testing.T) {
	count := surface(t, filepath.Join(moduleRoot(t), "internal", "stock"))
	total := 0
	for dir, n := range count {
		t.Logf("internal/stock/%s: %d exported identifiers", filepath.ToSlash(dir), n)
		total += n
	}
	t.Logf("internal/stock and below: %d exported identifiers (budget %d)", total, stockSurfaceBudget)
	if total > stockSurfaceBudget {
		t.Errorf("internal/stock and below export %d identifiers, more than the budget %d", total, stockSurfaceBudget)
	}
}

// The counter must count each kind once, and skip test files and what is not exported.
func TestSurfaceCounts(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\ntype A struct{ F, G int; h int; B }\n\ntype B struct{ F int }\n\ntype c struct{ F int }\n\n" +
		"type D = A\n\nfunc (A) M() {}\n\nfunc (c) N() {}\n\nfunc (*A) m() {}\n\nfunc E() {}\n\nfunc e() {}\n\n" +
		"var V, w = 1, 2\n\nconst K = 1\n"
	write := func(name, s string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("x.go", src)
	write("x_test.go", "package x\n\nfunc T() {}\n")
	write("sub/y.go", "package sub\n\nfunc Y() {}\n")
	write("testdata/z.go", "package z\n\nfunc Z() {}\n")
	// A, F, G, B, B.F, D, M, N, E, V, K: 11; sub: Y.
	got := surface(t, dir)
	if got["."] != 11 || got["sub"] != 1 || len(got) != 2 {
		t.Errorf("counted %v, want map[.:11 sub:1]", got)
	}
}
