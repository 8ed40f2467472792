package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// /v1/strategies, the MCP strategies tool and the MCP ask tool's schema
// all report the default that /v1/ask (and ctxsel ask) use:
// ctxsel.DefaultStrategy.
func TestAdvertisedDefaultIsAsksDefault(t *testing.T) {
	var seen AskRequest
	s := newTestServer(t, nil, Options{Asker: fakeAsker{seen: &seen}})
	var cat struct{ Default string }
	if err := json.Unmarshal(call(t, s, "GET", "/v1/strategies", "").Body.Bytes(), &cat); err != nil || cat.Default != ctxsel.DefaultStrategy {
		t.Errorf("/v1/strategies default %q, want %q (%v)", cat.Default, ctxsel.DefaultStrategy, err)
	}
	cs := connectMemory(t, s)
	cat.Default = ""
	callTool(t, cs, "strategies", map[string]any{}, &cat)
	if cat.Default != ctxsel.DefaultStrategy {
		t.Errorf("MCP strategies default %q, want %q", cat.Default, ctxsel.DefaultStrategy)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "ask" {
			continue
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(schema), "default "+ctxsel.DefaultStrategy) || strings.Contains(string(schema), "default adaptivek") {
			t.Errorf("MCP ask schema: %s", schema)
		}
	}
	// And it is what /v1/ask uses when a request names none: this server,
	// without SelectorDeps, leaves it to the Asker (the zero Strategy),
	// which builds ctxsel.DefaultStrategy (askserve.Asker: TestAskerServesAsk).
	call(t, s, "POST", "/v1/ask", `{"query":"q"}`)
	if seen.Strategy.Kind != 0 {
		t.Errorf("/v1/ask resolved %q itself", seen.Strategy.Spec)
	}
}
