// Package weaviate stores ctxsel's chunks in a Weaviate collection, for
// corpora that outgrow one machine, behind the same index.Store interface as
// the embedded index. Importing it registers the location schemes
//
//	weaviate://host[:port]/Collection    (HTTP, port 8080 by default)
//	weaviates://host[:port]/Collection   (HTTPS, port 443 by default)
//
// with index.Open, so `ctxsel index add --index weaviate://localhost:8080/Docs`
// and `ctxsel ask --index weaviate://localhost:8080/Docs` work unchanged. An
// API key, when the server needs one, comes from $CTXSEL_WEAVIATE_API_KEY.
//
// The collection holds one object per chunk: the chunk text and provenance
// as properties, its vector, and a UUID derived from "doc#index" so writes
// are idempotent. A new collection uses no vectorizer, the cosine distance
// and the flat (exact, brute-force) vector index, so results match the
// embedded index's exact scan; ctxsel's config (model, dimension, chunker,
// encoding) is kept in the collection's description. Search asks for
// nearVector with the requested limit and converts Weaviate's cosine
// distance to a similarity, 1 − distance; ctxsel then applies its own
// selection. Weaviate is not transactional: a document interrupted while
// being added is detected by List (fewer chunks than it should have) and
// replaced by the next add.
//
// The Weaviate client does not build on 32-bit platforms; there the package
// is empty and the weaviate:// schemes are not registered.
package weaviate
