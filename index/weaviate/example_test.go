//go:build !(386 || arm || mips || mipsle)

package weaviate_test

import (
	"fmt"

	"github.com/ctxsel/ctxsel/index/weaviate"
)

// Locations name the server and the collection; index.Open accepts them once
// this package is imported, e.g.
//
//	store, err := index.Open(ctx, "weaviate://localhost:8080/Docs", index.OpenOptions{Create: true})
func ExampleParseLocation() {
	for _, loc := range []string{"weaviate://localhost:8080/Docs", "weaviate://db.internal/Papers", "weaviates://example.cloud/Docs"} {
		scheme, host, class, err := weaviate.ParseLocation(loc)
		fmt.Println(scheme, host, class, err)
	}
	_, _, _, err := weaviate.ParseLocation("weaviate://localhost:8080/docs")
	fmt.Println(err != nil)
	// Output:
	// http localhost:8080 Docs <nil>
	// http db.internal:8080 Papers <nil>
	// https example.cloud:443 Docs <nil>
	// true
}
