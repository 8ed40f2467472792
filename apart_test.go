package ctxsel_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/ctxsel/ctxsel"

// listedPackage is what `go list -json` says of one package of the module.
type listedPackage struct {
	ImportPath string
	Name       string
	Imports    []string
	Deps       []string
}

// rel is a package's path inside the module ("" for the root).
func (p listedPackage) rel() string {
	return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, modulePath), "/")
}

// goList lists the module's packages (not their tests) with `go list`.
func goList(t *testing.T) []listedPackage {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goTool, "list", "-json=ImportPath,Name,Imports,Deps", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// trainingOnly are the packages that train or measure selectors, by path
// in the module: mining evidence sets, exporting picker training rows,
// the picker's reward (Eq. 6), the band's training pipeline and its data
// and reports, and the measuring harness. A selector user imports none
// of them (DESIGN.md, "Product and training").
var trainingOnly = []string{"mine", "picker/export", "picker/reward", "ldar/ldareval", "ldar/ldartrain", "evidence/evidencetrain", "eval"}

// notProduct are the other packages a selector user does not import: test
// helpers and data. Commands (package main) are left out too.
var notProduct = []string{"eval/sample", "llm/llmtest", "picker/pickertest", "picker/pickertest/simllm", "index/indextest", "internal/plot/plottest"}

// trainingAllowed are the training-only packages a product package may
// import, with why.
var trainingAllowed = map[string]map[string]string{
	"server": {"picker/reward": "the /v1/reward endpoint, the hook an RL trainer (python/verl_reward.py) calls, serves Eq. 6"},
	// askserve.New implements server.Asker, so askserve carries server's one exception with it.
	"server/askserve": {"picker/reward": "through server (askserve.New implements server.Asker), which serves /v1/reward"},
}

// TestTrainingApart: no package a selector user imports (the root, cutoff,
// ldar, evidence, score, picker, ask, index, server, …: every package but
// the training-only ones, test helpers and commands) depends on a
// training-only package, directly or not, beyond trainingAllowed.
func TestTrainingApart(t *testing.T) {
	pkgs := goList(t)
	known := map[string]bool{}
	for _, p := range pkgs {
		known[p.rel()] = true
	}
	for _, name := range slices.Concat(trainingOnly, notProduct) {
		if !known[name] {
			t.Errorf("%s is listed as training-only or not product but is no package of the module", name)
		}
	}
	checked := 0
	for _, p := range pkgs {
		if p.Name == "main" || slices.Contains(trainingOnly, p.rel()) || slices.Contains(notProduct, p.rel()) {
			continue
		}
		checked++
		for _, d := range p.Deps {
			rel, ok := strings.CutPrefix(d, modulePath+"/")
			if !ok || !slices.Contains(trainingOnly, rel) {
				continue
			}
			if _, ok := trainingAllowed[p.rel()][rel]; !ok {
				t.Errorf("%s (what a selector user imports) depends on the training-only package %s", p.ImportPath, rel)
			}
		}
	}
	for _, must := range []string{"", "cutoff", "ldar", "evidence", "score", "picker", "ask", "index", "server"} {
		if !known[must] || slices.Contains(trainingOnly, must) || slices.Contains(notProduct, must) {
			t.Errorf("%q should be a product package, checked by this test", must)
		}
	}
	if checked < 20 {
		t.Errorf("only %d product packages checked", checked)
	}
}

// TestAskLinksNoServer: ask, the domain, links no transport: neither the
// server, the MCP SDK nor the picker's reward (which the server serves).
// The server.Asker adapter lives beside the server (server/askserve).
func TestAskLinksNoServer(t *testing.T) {
	var deps []string
	found := false
	for _, p := range goList(t) {
		if p.rel() == "ask" {
			deps, found = p.Deps, true
		}
	}
	if !found {
		t.Fatal("go list found no package ask")
	}
	for _, d := range deps {
		for _, banned := range []string{modulePath + "/server", "github.com/modelcontextprotocol/go-sdk", modulePath + "/picker/reward"} {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("ask depends on %s", d)
			}
		}
	}
}
