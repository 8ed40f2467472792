package all_test

import (
	"slices"
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
