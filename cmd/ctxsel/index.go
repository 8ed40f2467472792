package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index"
	_ "github.com/ctxsel/ctxsel/index/weaviate" // weaviate://host:port/Collection
	"github.com/ctxsel/ctxsel/internal/progress"
	"github.com/ctxsel/ctxsel/token"
)

const (
	envIndex     = "CTXSEL_INDEX"
	defaultIndex = ".ctxsel-index"
)

// openEmbedder builds the named embedder; tests replace it.
var openEmbedder = newEmbedder

const indexUsage = `Usage:
  ctxsel index add [flags] PATH...   add files or folders (.txt .md .html .jsonl, LaRA's datasets)
  ctxsel index rm [flags] ID|PATH... remove documents by id, or every document read from a file or folder
  ctxsel index ls [flags]            list the documents
  ctxsel index stats [flags]         summarise the index

The index is a directory (default ./` + defaultIndex + `, or $` + envIndex + `) or
weaviate://host:port/Collection for a Weaviate server. Run 'ctxsel index SUBCOMMAND -h'
for flags.`

func cmdIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, indexUsage)
		return usageError{errors.New("index: missing subcommand (add, rm, ls or stats)")}
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "add":
		return cmdIndexAdd(ctx, rest, stdout, stderr)
	case "rm", "remove":
		return cmdIndexRm(ctx, rest, stdout, stderr)
	case "ls", "list":
		return cmdIndexLs(ctx, rest, stdout, stderr)
	case "stats":
		return cmdIndexStats(ctx, rest, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, indexUsage)
		return nil
	default:
		fmt.Fprintln(stderr, indexUsage)
		return usageError{fmt.Errorf("index: unknown subcommand %q", sub)}
	}
}

// defaultIndexLocation is $CTXSEL_INDEX or ./.ctxsel-index.
func defaultIndexLocation() string {
	if v := os.Getenv(envIndex); v != "" {
		return v
	}
	return defaultIndex
}

// parseInterleaved parses flags that may come before, between or after the
// positional arguments, and returns the positionals.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func openStore(ctx context.Context, location string, create bool, vectors string) (index.Store, error) {
	s, err := index.Open(ctx, location, index.OpenOptions{Create: create, Vectors: vectors})
	if errors.Is(err, index.ErrNotFound) {
		return nil, usageError{err}
	}
	return s, err
}

// embedderFor picks the embedder: the flag when given, else the one the
// index was built with (from its recorded model id), else use-lite.
func embedderFor(name, model string) (embed.Embedder, func() error, error) {
	if name == "" {
		name = "use-lite"
		for _, n := range embedderNames {
			if strings.HasPrefix(model, n+":") || strings.HasPrefix(model, n+"@") {
				name = n
			}
		}
	}
	return openEmbedder(name)
}

func cmdIndexAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("index add", `Usage: ctxsel index add [--index DIR|URL] [--chunker SPEC] [--embedder NAME] PATH...

Reads every .txt, .md, .html and .jsonl file under the given files and folders
(hidden ones skipped), cuts each document into chunks, embeds them and stores
them in the index. Files whose content did not change since they were added
are skipped without being read twice; documents that changed are replaced.
LaRA: point it at ../shared/data/lara/datasets/32k (or a sub-folder); its
query files hold questions, not documents, and are skipped with a note.

Chunkers: tokens:size=600,overlap=100 (default; the LaRA/LDAR setting),
sentences:max_tokens=600, semantic:threshold=0.75,max_tokens=600.
An interrupted run keeps every batch it committed; run it again to finish.`, stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory, or weaviate://host:port/Collection")
	chunker := fs.String("chunker", "", "chunker spec for a new index (default "+chunk.DefaultSpec+"; an existing index keeps its own)")
	embedder := fs.String("embedder", "", "embedding model: "+strings.Join(embedderNames, ", ")+" (default: the index's, else use-lite)")
	vectors := fs.String("vectors", "f32", "vector storage of a new embedded index: f32, f16 (half the memory) or i8 (a quarter)")
	encoding := fs.String("encoding", "", "token encoding for chunk sizes and counts (default: the index's, else "+token.Default+")")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		fs.Usage()
		return usageError{errors.New("index add: no files or folders given")}
	}
	store, err := openStore(ctx, *loc, true, *vectors)
	if err != nil {
		return err
	}
	defer store.Close()
	st, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	spec, enc := *chunker, *encoding
	if st.Config != (index.Config{}) {
		if spec == "" {
			spec = st.Config.Chunker
		}
		if enc == "" {
			enc = st.Config.Encoding
		}
	}
	tk, err := token.New(enc)
	if err != nil {
		return usageError{err}
	}
	e, closeEmb, err := embedderFor(*embedder, st.Config.Model)
	if err != nil {
		return err
	}
	defer closeEmb()
	ch, err := chunk.Parse(spec, tk, e)
	if err != nil {
		return err
	}
	bar := progress.New(stderr, "indexing")
	in := &index.Ingester{Store: store, Embedder: e, Chunker: ch, Encoding: tk.Encoding(),
		Progress: func(p index.Progress) { bar.Update(int(p.Bytes), int(p.TotalBytes)) }}
	rep, err := in.Add(ctx, paths)
	if errors.Is(err, index.ErrMismatch) {
		return usageError{err}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "interrupted: %d batches were committed and stay in the index; run the same command to finish\n", rep.Commits)
		}
		return err
	}
	for _, n := range rep.Notices {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	after, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, struct {
			Report index.Report `json:"report"`
			Index  index.Stats  `json:"index"`
		}{rep, after})
	}
	fmt.Fprintf(stdout, "%d files: %d documents added, %d replaced, %d removed, %d unchanged files skipped (%d chunks, %d tokens embedded) in %s\n",
		rep.Files, rep.Added, rep.Replaced, rep.Removed, rep.Unchanged, rep.Chunks, rep.Tokens, rep.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(stdout, "index %s: %d documents, %d chunks, %d tokens", after.Location, after.Docs, after.Chunks, after.Tokens)
	if after.Config.Model != "" {
		fmt.Fprintf(stdout, " (%s, %s)", after.Config.Model, after.Config.Chunker)
	}
	fmt.Fprintln(stdout)
	return nil
}

func cmdIndexRm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("index rm", `Usage: ctxsel index rm [--index DIR|URL] ID|PATH...

Removes documents: an argument that is a document id removes that document;
a file or folder path removes every document read from it.`, stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory, or weaviate://host:port/Collection")
	targets, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(targets) == 0 {
		fs.Usage()
		return usageError{errors.New("index rm: nothing to remove")}
	}
	store, err := openStore(ctx, *loc, false, "")
	if err != nil {
		return err
	}
	defer store.Close()
	docs, err := store.List(ctx)
	if err != nil {
		return err
	}
	var ids []string
	for _, t := range targets {
		n := len(ids)
		abs, _ := filepath.Abs(t)
		for _, d := range docs {
			if d.ID == t || d.Source != "" && (d.Source == abs || strings.HasPrefix(d.Source, abs+string(filepath.Separator))) {
				ids = append(ids, d.ID)
			}
		}
		if len(ids) == n {
			return usageError{fmt.Errorf("index rm: no document has id %q or was read from it", t)}
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	n, err := store.Remove(ctx, ids)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %d documents\n", n)
	return nil
}

func cmdIndexLs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("index ls", "Usage: ctxsel index ls [--index DIR|URL] [--json]\n\nLists the documents with their chunks, tokens and source.", stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory, or weaviate://host:port/Collection")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	store, err := openStore(ctx, *loc, false, "")
	if err != nil {
		return err
	}
	defer store.Close()
	docs, err := store.List(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		if docs == nil {
			docs = []index.DocInfo{}
		}
		return writeJSON(stdout, docs)
	}
	fmt.Fprintf(stdout, "%7s %9s %11s  %s\n", "chunks", "tokens", "bytes", "document")
	for _, d := range docs {
		fmt.Fprintf(stdout, "%7d %9d %11d  %s\n", d.Chunks, d.Tokens, d.Bytes, d.ID)
	}
	fmt.Fprintf(stdout, "%d documents\n", len(docs))
	return nil
}

func cmdIndexStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("index stats", "Usage: ctxsel index stats [--index DIR|URL] [--json]\n\nPrints what the index holds and how it was built: documents, chunks, tokens,\nthe embedding model and its dimension, the chunker, the token encoding and\nthe vector format.", stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory, or weaviate://host:port/Collection")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	store, err := openStore(ctx, *loc, false, "")
	if err != nil {
		return err
	}
	defer store.Close()
	st, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, st)
	}
	fmt.Fprintf(stdout, "index      %s (%s)\n", st.Location, st.Backend)
	fmt.Fprintf(stdout, "documents  %d\nchunks     %d\ntokens     %d\n", st.Docs, st.Chunks, st.Tokens)
	fmt.Fprintf(stdout, "model      %s (dimension %d)\nchunker    %s\nencoding   %s\n", st.Config.Model, st.Config.Dim, st.Config.Chunker, st.Config.Encoding)
	if st.Backend == "dir" {
		fmt.Fprintf(stdout, "vectors    %s\nsegments   %d (%d dead chunks awaiting compaction)\non disk    %.1f MB\n",
			st.Vectors, st.Segments, st.DeadChunks, float64(st.DiskBytes)/1e6)
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
