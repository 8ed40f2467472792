package ingest_test

import (
	"context"

	"github.com/ctxsel/ctxsel/index/indextest"
)

var ctx = context.Background()

// The shared helpers (indextest), under the names these tests use.
var (
	testChunker = indextest.Chunker
	testConfig  = indextest.Config
	makeDoc     = indextest.Doc
	search      = indextest.Search
	listIDs     = indextest.IDs
	checkBM25   = indextest.CheckBM25
)
