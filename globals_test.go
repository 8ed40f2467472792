package ctxsel_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writableGlobals are the package-level variables the module's code writes
// after initialisation, each with why that is not mutable state a result
// depends on. Anything else written outside init (a global policy, a
// default a caller swaps) fails TestNoMutableGlobals: pass it in instead.
var writableGlobals = map[string]string{
	".registry":             "the registry of strategies, routes and text selector kinds, filled by Register* from init",
	"index.backends":        "the registry of index back ends, filled by RegisterBackend from init",
	"token.shared":          "a memo of the counter per encoding (a pure function of the name), under its mutex",
	"embed/uselite.loaded":  "the embedded weights, decoded once under loadOnce",
	"embed/uselite.loadErr": "the embedded weights' decoding error, set once under loadOnce",
}

// exportedTables are the exported package-level slices and maps, each
// with why it is still a variable: any other fails TestNoMutableGlobals,
// since a caller could change it for every other caller (a parameter
// schema or a table of names is a function returning a new one, as
// ctxsel.CapParams, score.HybridParams and chunk.Chunkers are).
var exportedTables = map[string]string{
	"dataset.LaRALengths":              "a list of names, predating this check; to become a function",
	"dataset.LaRAKinds":                "a list of names, predating this check; to become a function",
	"embed/uselite.Precisions":         "a list of names, predating this check; to become a function",
	"evidence.FeatureNames":            "the feature order models are read by, predating this check; to become a function",
	"evidence.V1Features":              "the version 1 features (FeatureNames' head), predating this check; to become a function",
	"index/ingest.Extensions":          "a list of names, predating this check; to become a function",
	"ldar/ldareval.BaselineStrategies": "a list of specs, predating this check; to become a function",
	"token.Encodings":                  "a list of names, predating this check; to become a function",
}

// TestNoMutableGlobals: no package of the module writes a package-level
// variable outside init, except the registries and memos listed in
// writableGlobals (tests may swap seams; they are not scanned), and none
// exports a slice or a map a caller could change, except those listed in
// exportedTables.
func TestNoMutableGlobals(t *testing.T) {
	found := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			for _, v := range exportedSlicesAndMaps(t, path) {
				found[v.name] = true
				if _, ok := exportedTables[v.name]; !ok {
					t.Errorf("%s exports the package-level slice or map %s, which any caller can change for every other: make it a function returning a new one (or list it in exportedTables with why)", v.pos, v.name)
				}
			}
			for _, w := range globalWrites(t, path) {
				found[w.name] = true
				if _, ok := writableGlobals[w.name]; !ok {
					t.Errorf("%s writes the package-level variable %s outside init: pass the value in (or, for a registry or memo filled at start, list it in writableGlobals with why)", w.pos, w.name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range writableGlobals {
		if !found[name] {
			t.Errorf("writableGlobals lists %s, which no code writes any more: remove it", name)
		}
	}
	for name := range exportedTables {
		if !found[name] {
			t.Errorf("exportedTables lists %s, which is no longer an exported slice or map: remove it", name)
		}
	}
}

// exportedSlicesAndMaps lists the exported package-level variables of the
// non-test files of dir whose declared type, composite literal or slice
// expression makes them a slice or a map.
func exportedSlicesAndMaps(t *testing.T, dir string) []globalVar {
	t.Helper()
	fset, files := parseDir(t, dir)
	pkg := filepath.ToSlash(dir)
	if pkg == "." {
		pkg = ""
	}
	isTable := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.ArrayType:
			return x.Len == nil
		case *ast.MapType:
			return true
		}
		return false
	}
	var out []globalVar
	for _, f := range files {
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !n.IsExported() {
						continue
					}
					table := vs.Type != nil && isTable(vs.Type)
					if vs.Type == nil && i < len(vs.Values) {
						switch v := vs.Values[i].(type) {
						case *ast.CompositeLit:
							table = isTable(v.Type)
						case *ast.SliceExpr:
							table = true
						}
					}
					if table {
						out = append(out, globalVar{pkg + "." + n.Name, fset.Position(n.Pos()).String()})
					}
				}
			}
		}
	}
	return out
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) (*token.FileSet, []*ast.File) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	return fset, files
}

type globalVar struct{ name, pos string }

// globalWrites lists the writes to package-level variables in the
// non-test files of dir, outside func init: assignments and ++/-- whose
// target is the variable, a field or an element of it.
func globalWrites(t *testing.T, dir string) []globalVar {
	t.Helper()
	fset, files := parseDir(t, dir)
	// The package-level variables, by name and by declaration.
	names := map[string]bool{}
	specs := map[*ast.ValueSpec]bool{}
	for _, f := range files {
		for _, decl := range f.Decls {
			if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					specs[vs] = true
					for _, n := range vs.Names {
						names[n.Name] = n.Name != "_"
					}
				}
			}
		}
	}
	pkg := filepath.ToSlash(dir)
	if pkg == "." {
		pkg = ""
	}
	var out []globalVar
	isGlobal := func(id *ast.Ident) bool {
		if id.Obj != nil { // resolved in this file: a global only if declared at package level
			vs, ok := id.Obj.Decl.(*ast.ValueSpec)
			return ok && specs[vs] && names[id.Name]
		}
		return names[id.Name] // declared in another file of the package
	}
	target := func(e ast.Expr) {
		for {
			switch x := e.(type) {
			case *ast.SelectorExpr:
				e = x.X
				continue
			case *ast.IndexExpr:
				e = x.X
				continue
			case *ast.StarExpr:
				e = x.X
				continue
			case *ast.ParenExpr:
				e = x.X
				continue
			case *ast.Ident:
				if isGlobal(x) {
					out = append(out, globalVar{pkg + "." + x.Name, fset.Position(x.Pos()).String()})
				}
			}
			return
		}
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || (fn.Recv == nil && fn.Name.Name == "init") {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch s := n.(type) {
				case *ast.AssignStmt:
					if s.Tok != token.DEFINE {
						for _, l := range s.Lhs {
							target(l)
						}
					}
				case *ast.IncDecStmt:
					target(s.X)
				}
				return true
			})
		}
	}
	slices.SortFunc(out, func(a, b globalVar) int { return strings.Compare(a.pos, b.pos) })
	return out
}
