package server

import (
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// jsonschema.For writes a Go pointer, slice or map field as a nullable type
// array ("type": ["null", "array"]). Consumers that read one type per
// schema reject that: Gemini's function declarations (the OpenAPI subset
// of its Schema type, "type" a single string) and the clients that convert
// MCP tools for them, which is what the MCP Inspector warns about. No tool
// here gives null a meaning: an optional field is one left out of
// "required" (and our decoder refuses null where a value is expected, naming
// the field), so the null member is dropped and every schema has a single
// type.

// singleTyped rewrites sc and every schema below it in place: a type array
// of "null" and one other type becomes that type.
func singleTyped(sc *jsonschema.Schema) *jsonschema.Schema {
	if sc == nil {
		return nil
	}
	if len(sc.Types) > 0 {
		rest := slices.DeleteFunc(slices.Clone(sc.Types), func(t string) bool { return t == "null" })
		if len(rest) == 1 {
			sc.Type, sc.Types = rest[0], nil
		} else {
			sc.Types = rest
		}
	}
	for _, p := range sc.Properties {
		singleTyped(p)
	}
	for _, d := range sc.Defs {
		singleTyped(d)
	}
	for _, list := range [][]*jsonschema.Schema{sc.AnyOf, sc.OneOf, sc.AllOf, sc.PrefixItems, sc.ItemsArray} {
		for _, s := range list {
			singleTyped(s)
		}
	}
	singleTyped(sc.Items)
	singleTyped(sc.AdditionalProperties)
	return sc
}
