package ctxsel_test

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var updateDesign = flag.Bool("update-design", false, "rewrite the imports column of DESIGN.md's package table from go list")

// TestPackageTable: DESIGN.md's package table names every package of the
// module once (and nothing that is not one, but for a directory whose
// imports read "—", such as a node project), and each row's imports
// column is what go list says its packages import: the module's packages
// by path ("root" for the module root), then third-party modules
// (OWNER/REPO, x/REPO for golang.org/x), "stdlib" for none. A row of
// several packages with different imports lists them per package:
// "`a`: x, y; `b`: z". An import may carry a note in parentheses
// ("evidence (registration)"), which the check ignores and the rewrite
// keeps. go test -run TestPackageTable -update-design . rewrites the
// column.
func TestPackageTable(t *testing.T) {
	const path = "DESIGN.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string][]string{} // package (rel; "" = root) → its imports, as the table writes them
	for _, p := range goList(t) {
		imports[p.rel()] = tableImports(p.Imports)
	}
	lines := strings.Split(string(b), "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "## Packages") })
	if start < 0 {
		t.Fatalf("%s has no \"## Packages\" section", path)
	}
	named := map[string]int{} // package → row line
	rows := 0
	changed := false
	for i := start + 1; i < len(lines) && !strings.HasPrefix(lines[i], "## "); i++ {
		line := lines[i]
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		rows++
		cells := strings.Split(line, " | ")
		if len(cells) < 3 {
			t.Errorf("line %d: a row of %d cells, want 3: %.80q", i+1, len(cells), line)
			continue
		}
		pkgs := rowPackages(strings.TrimPrefix(cells[0], "| "))
		got := strings.TrimSuffix(cells[len(cells)-1], " |")
		for _, p := range pkgs {
			if prev, dup := named[p]; dup {
				t.Errorf("line %d: %s is also in the row of line %d", i+1, displayName(p), prev)
			}
			named[p] = i + 1
		}
		want, err := rowImports(pkgs, imports)
		if err != nil {
			if got != "—" {
				t.Errorf("line %d: %v", i+1, err)
			} else if _, statErr := os.Stat(pkgs[0]); len(pkgs) != 1 || statErr != nil {
				t.Errorf("line %d: %v, and it is no directory either", i+1, err)
			}
			continue
		}
		notes := importNotes(got)
		if withoutNotes(got) == want {
			continue
		}
		if *updateDesign {
			cells[len(cells)-1] = withNotes(want, notes) + " |"
			lines[i] = strings.Join(cells, " | ")
			changed = true
			continue
		}
		t.Errorf("line %d, %s: imports column\n got: %s\nwant: %s\n(go test -run TestPackageTable -update-design . rewrites it)", i+1, strings.Join(mapSlice(pkgs, displayName), ", "), got, want)
	}
	if rows < 20 {
		t.Fatalf("%d rows in the package table", rows)
	}
	for p := range imports {
		if _, ok := named[p]; !ok {
			t.Errorf("package %s has no row in %s's package table", displayName(p), path)
		}
	}
	if changed {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the imports column of %s", path)
	}
}

// rowPackages reads a row's first cell: each `path` names a package, and
// "`ctxsel` (root)" the module root.
func rowPackages(cell string) []string {
	var out []string
	for _, m := range regexp.MustCompile("`([^`]+)`( \\(root\\))?").FindAllStringSubmatch(cell, -1) {
		if m[2] != "" {
			out = append(out, "")
		} else {
			out = append(out, m[1])
		}
	}
	return out
}

// rowImports is the imports cell of a row of pkgs.
func rowImports(pkgs []string, imports map[string][]string) (string, error) {
	lists := make([]string, len(pkgs))
	for i, p := range pkgs {
		imps, ok := imports[p]
		if !ok {
			return "", fmt.Errorf("%s is no package of the module", displayName(p))
		}
		lists[i] = strings.Join(imps, ", ")
		if len(imps) == 0 {
			lists[i] = "stdlib"
		}
	}
	if len(slices.Compact(slices.Clone(lists))) == 1 {
		return lists[0], nil
	}
	parts := make([]string, len(pkgs))
	for i, p := range pkgs {
		parts[i] = "`" + displayName(p) + "`: " + lists[i]
	}
	return strings.Join(parts, "; "), nil
}

// tableImports writes a package's imports as the table does: the module's
// packages first ("root", then by path), then third-party modules, each
// once; the standard library is left out.
func tableImports(imps []string) []string {
	var own, third []string
	for _, imp := range imps {
		switch rel, ok := strings.CutPrefix(imp, modulePath); {
		case ok && rel == "":
			own = append(own, "root")
		case ok:
			own = append(own, strings.TrimPrefix(rel, "/"))
		case strings.Contains(strings.Split(imp, "/")[0], "."):
			third = append(third, thirdParty(imp))
		}
	}
	slices.Sort(own)
	if i := slices.Index(own, "root"); i > 0 {
		own = slices.Insert(slices.Delete(own, i, i+1), 0, "root")
	}
	slices.Sort(third)
	return append(own, slices.Compact(third)...)
}

// thirdParty names an import's module: OWNER/REPO on GitHub, x/REPO for
// golang.org/x, the first two elements otherwise.
func thirdParty(imp string) string {
	parts := strings.Split(imp, "/")
	switch {
	case parts[0] == "golang.org" && len(parts) > 2 && parts[1] == "x":
		return "x/" + parts[2]
	case len(parts) >= 3:
		return parts[1] + "/" + parts[2]
	}
	return imp
}

func displayName(rel string) string {
	if rel == "" {
		return "ctxsel (root)"
	}
	return rel
}

func mapSlice(in []string, f func(string) string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = f(s)
	}
	return out
}

// noteRE matches an import's note: " (registration)".
var noteRE = regexp.MustCompile(` \([^()]*\)`)

// importNotes maps each noted import of a cell to its note.
func importNotes(cell string) map[string]string {
	notes := map[string]string{}
	for _, seg := range strings.Split(cell, "; ") {
		_, list, ok := strings.Cut(seg, "`: ")
		if !ok {
			list = seg
		}
		for _, item := range strings.Split(list, ", ") {
			if loc := noteRE.FindStringIndex(item); loc != nil {
				notes[item[:loc[0]]] = item[loc[0]:loc[1]]
			}
		}
	}
	return notes
}

func withoutNotes(cell string) string { return noteRE.ReplaceAllString(cell, "") }

// withNotes puts notes back after the imports they belong to.
func withNotes(cell string, notes map[string]string) string {
	segs := strings.Split(cell, "; ")
	for i, seg := range segs {
		head, list, ok := strings.Cut(seg, "`: ")
		if !ok {
			head, list = "", seg
		} else {
			head += "`: "
		}
		items := strings.Split(list, ", ")
		for j, item := range items {
			items[j] = item + notes[item]
		}
		segs[i] = head + strings.Join(items, ", ")
	}
	return strings.Join(segs, "; ")
}
