package ctxsel_test

import (
	"context"
	"errors"
	"hash/fnv"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff"
	_ "github.com/ctxsel/ctxsel/evidence" // registers the default
)

// wordHash embeds a text as counts of its words hashed into 64 buckets:
// enough for a test of plumbing.
type wordHash struct{}

func (wordHash) ModelID() string { return "wordhash" }
func (wordHash) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(w, ".,?!")))
			v[h.Sum32()%64]++
		}
		out[i] = v
	}
	return out, nil
}

// "default" is DefaultStrategy (the evidence selector), its own
// parameters winning; it answers to "default" and selects as its spec.
func TestDefaultStrategyName(t *testing.T) {
	if !strings.HasPrefix(ctxsel.DefaultStrategy, "evidence:") {
		t.Fatalf("DefaultStrategy %q: this test checks the evidence default", ctxsel.DefaultStrategy)
	}
	r := ctxsel.Resolver{Deps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: wordHash{}})}
	c, texts := textCurve(t)
	q := ctxsel.TextQuery{Question: "Which passage is about the second topic?", Curve: c, Texts: texts}
	def, err := r.Resolve(ctxsel.DefaultName)
	if err != nil {
		t.Fatal(err)
	}
	want, err := r.Resolve(ctxsel.DefaultStrategy)
	if err != nil {
		t.Fatal(err)
	}
	if def.Kind != ctxsel.SelectorKind || def.Spec != "default" || def.Selector.Name() != "default" {
		t.Fatalf("default resolved to %+v (name %q)", def, def.Selector.Name())
	}
	a, err := def.Selector.SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	b, err := want.Selector.SelectTexts(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("default selected %+v\n%s selected %+v", a, ctxsel.DefaultStrategy, b)
	}
	// its own parameters win, and are checked like any others
	small, err := r.Resolve("default:budget=20")
	if err != nil {
		t.Fatal(err)
	}
	if sel, err := small.Selector.SelectTexts(context.Background(), q); err != nil || sel.Tokens > 20 {
		t.Fatalf("default:budget=20 sent %d tokens (%v)", sel.Tokens, err)
	}
	if _, err := r.Resolve("default:nonsense=1"); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "nonsense") {
		t.Fatalf("default:nonsense=1: %v", err)
	}
	// Without dependencies, or where only strategies are taken, it says why.
	if _, err := ctxsel.Resolve("default"); err == nil || !strings.Contains(err.Error(), ctxsel.DefaultStrategy) {
		t.Fatalf("default without an embedder: %v", err)
	}
	if _, err := (ctxsel.Resolver{Deps: r.Deps, Kinds: ctxsel.StrategyKind}).Resolve("default"); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("default where only strategies are taken: %v", err)
	}
	if _, _, err := ctxsel.Parse("default"); !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), "text selector") {
		t.Fatalf("Parse(default): %v", err)
	}
}
