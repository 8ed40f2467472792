package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/token"
)

// testOnce records what the testonce selector saw: how many times a spec
// naming it was resolved, and the token encoding it counted with when it
// selected.
var testOnce struct {
	sync.Mutex
	built    int
	encoding string
}

// onceSelector keeps the best passage and notes its counter's encoding.
type onceSelector struct{ counter token.Counter }

// noCounter stands for a counter left out.
type noCounter struct{}

func (noCounter) Count(string) int { return 0 }
func (noCounter) Encoding() string { return "none" }

func (onceSelector) Name() string { return "testonce" }

func (s onceSelector) SelectTexts(_ context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	testOnce.Lock()
	testOnce.encoding = s.counter.Encoding()
	testOnce.Unlock()
	return ctxsel.SelectSet(q.Curve, []int{0}, q.Caps, q.Order, ctxsel.Explanation{Strategy: "testonce", Reason: "the best passage"})
}

func init() {
	ctxsel.RegisterSelector(ctxsel.SelectorDef{Name: "testonce", Doc: "test only: the best passage, its resolutions counted",
		New: func(_ ctxsel.Spec, deps ctxsel.Deps) (ctxsel.TextSelector, error) {
			c, ok, err := ctxsel.OptionalDep[token.Counter](deps, ctxsel.DepCounter)
			if err != nil {
				return nil, err
			}
			if !ok {
				c = noCounter{}
			}
			testOnce.Lock()
			testOnce.built++
			testOnce.Unlock()
			return onceSelector{counter: c}, nil
		}})
}

// TestAskResolvesOnce: ask resolves the user's spec once, before the
// index is opened, and runs that value, whose dependencies on the index
// (here the token counter of its encoding) are bound when it is open.
func TestAskResolvesOnce(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "volcano.txt"), []byte("Mount Etna is an active volcano on Sicily. Its eruptions are frequent."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--encoding", "o200k_base", "--index", idx, docs); code != 0 {
		t.Fatalf("add: exit %d: %s", code, errs)
	}
	testOnce.Lock()
	testOnce.built, testOnce.encoding = 0, ""
	testOnce.Unlock()
	code, out, errs := runCLI(t, "", "ask", "--index", idx, "--llm=false", "--strategy", "testonce", "Which volcano erupts?")
	if code != 0 || !strings.Contains(out, "Etna") {
		t.Fatalf("ask: exit %d\n%s%s", code, out, errs)
	}
	testOnce.Lock()
	defer testOnce.Unlock()
	if testOnce.built != 1 || testOnce.encoding != "o200k_base" {
		t.Errorf("the spec was resolved %d times (want 1) and counted in %q (want the index's o200k_base)", testOnce.built, testOnce.encoding)
	}
}
