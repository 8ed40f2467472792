package all_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/all"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// TestDefaultResolves: linking all is enough for DefaultStrategy to
// resolve (the evidence selector, given its embedder), and for every kind
// of registrant to be there: strategies, the band, the text selectors and
// the answering route.
func TestDefaultResolves(t *testing.T) {
	deps := ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: indextest.HashEmbedder{}})
	res, err := ctxsel.Resolver{Deps: deps}.Resolve(ctxsel.DefaultStrategy)
	if err != nil {
		t.Fatalf("%s: %v", ctxsel.DefaultStrategy, err)
	}
	if res.Kind != ctxsel.SelectorKind {
		t.Fatalf("%s resolved to kind %v, want a text selector", ctxsel.DefaultStrategy, res.Kind)
	}
	var names []string
	for _, d := range ctxsel.Defs() {
		names = append(names, d.Name)
	}
	for _, d := range ctxsel.SelectorDefs() {
		names = append(names, d.Name)
	}
	for _, d := range ctxsel.RouteDefs() {
		names = append(names, d.Name)
	}
	for _, want := range []string{"topk", "budget", "band", "evidence", "picker", "selfroute"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not registered with all linked (registered: %v)", want, names)
		}
	}
}

// TestAllLinksEveryRegistrant: every package of the module that registers
// a name with ctxsel (Register, RegisterSelector, RegisterRoute) is linked
// by all, so that a binary or a test importing all knows every name
// (TestEveryParamRefusesTheSameWay checks them all through it).
func TestAllLinksEveryRegistrant(t *testing.T) {
	fset := token.NewFileSet()
	self, err := parser.ParseFile(fset, "all.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, im := range self.Imports {
		linked[strings.Trim(im.Path.Value, `"`)] = true
	}
	const module = "github.com/ctxsel/ctxsel"
	found := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		registers := false
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "ctxsel" && strings.HasPrefix(sel.Sel.Name, "Register") {
						registers = true
					}
				}
			}
			return !registers
		})
		if !registers {
			return nil
		}
		found++
		rel, err := filepath.Rel("..", filepath.Dir(path))
		if err != nil {
			return err
		}
		if pkg := module + "/" + filepath.ToSlash(rel); !linked[pkg] {
			t.Errorf("%s registers names with ctxsel, but all does not import %s", path, pkg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < len(linked) {
		t.Errorf("found %d registering files for %d linked packages", found, len(linked))
	}
}
