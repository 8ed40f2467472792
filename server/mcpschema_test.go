package server

import (
	"encoding/json"
	"slices"
	"testing"
)

// geminiSchema is how a single-type consumer reads a tool's input schema:
// the fields of Gemini's function-declaration Schema (an OpenAPI 3.0
// subset; google.golang.org/genai's Schema has these JSON names), "type"
// one string. encoding/json refuses a type array where a string goes, as
// such a consumer does.
type geminiSchema struct {
	Type        string                   `json:"type"`
	Format      string                   `json:"format"`
	Description string                   `json:"description"`
	Nullable    *bool                    `json:"nullable"`
	Enum        []string                 `json:"enum"`
	Properties  map[string]*geminiSchema `json:"properties"`
	Required    []string                 `json:"required"`
	Items       *geminiSchema            `json:"items"`
	AnyOf       []*geminiSchema          `json:"anyOf"`
}

// TestMCPSchemasSingleTyped: every tool's input schema loads as a
// single-type consumer loads it, every schema in it names its one type,
// and what was optional stays optional.
func TestMCPSchemasSingleTyped(t *testing.T) {
	cs := connectMemory(t, newTestServer(t, nil, Options{Asker: fakeAsker{}, Embedder: fakeEmbedder{}}))
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var check func(tool, at string, s *geminiSchema)
	check = func(tool, at string, s *geminiSchema) {
		if s.Type == "" && len(s.AnyOf) == 0 {
			t.Errorf("%s %s: no type", tool, at)
		}
		for name, p := range s.Properties {
			check(tool, at+"."+name, p)
		}
		if s.Items != nil {
			check(tool, at+"[]", s.Items)
		}
		for _, a := range s.AnyOf {
			check(tool, at+"|", a)
		}
	}
	for _, tool := range tools.Tools {
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s geminiSchema
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Errorf("%s: a single-type consumer cannot load the schema: %v\n%s", tool.Name, err, raw)
			continue
		}
		check(tool.Name, tool.Name, &s)
		if tool.Name == "select_context" {
			if !slices.Equal(s.Required, []string{"candidates"}) || s.Properties["candidates"].Type != "array" ||
				!slices.Equal(s.Properties["candidates"].Items.Required, []string{"id"}) ||
				s.Properties["candidates"].Items.Properties["score"].Type != "number" || s.Properties["query_vector"].Type != "array" {
				t.Errorf("select_context's schema lost its shape: %s", raw)
			}
		}
	}
}
