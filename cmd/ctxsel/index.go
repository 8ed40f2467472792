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

	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/ingest"
	_ "github.com/ctxsel/ctxsel/index/weaviate" // weaviate://host:port/Collection
	"github.com/ctxsel/ctxsel/internal/progress"
	"github.com/ctxsel/ctxsel/internal/termtext"
	"github.com/ctxsel/ctxsel/token"
)

const (
	envIndex     = "CTXSEL_INDEX"
	defaultIndex = ".ctxsel-index"
)

// openEmbedder builds the named embedder for an index built with
// indexModel ("" for none); name "" opens the index's (embedders.ForIndex).
// Tests replace it.
var openEmbedder = embedders.OpenFromEnv

const indexUsage = `Usage:
  ctxsel index add [flags] PATH...   add files or folders (.txt .md .html .jsonl, LaRA's datasets)
  ctxsel index sync [flags] PATH...  add, and remove the documents of files deleted under PATH
  ctxsel index rm [flags] ID|PATH... remove documents by id, or every document read from a file or folder
  ctxsel index ls [flags]            list the documents
  ctxsel index stats [flags]         summarise the index
  ctxsel index verify [flags]        check every byte of the index's files (exit 1 on damage)
  ctxsel index repair [flags]        drop damaged files and list the documents to add again

The index is a directory (default ./` + defaultIndex + `, or $` + envIndex + `) or
weaviate://host:port/Collection for a Weaviate server. Run 'ctxsel index SUBCOMMAND -h'
for flags.`

func cmdIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, indexUsage)
		return usageError{errors.New("index: missing subcommand (add, sync, rm, ls, stats, verify or repair)")}
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "add":
		return cmdIndexAdd(ctx, rest, stdout, stderr, false)
	case "sync":
		return cmdIndexAdd(ctx, rest, stdout, stderr, true)
	case "verify":
		return cmdIndexVerify(ctx, rest, stdout, stderr)
	case "repair":
		return cmdIndexRepair(ctx, rest, stdout, stderr)
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

// sentencesFlagHelp is what --sentences does and costs (measured on
// LaRA's A Christmas Carol, 600-token chunks, use-lite's 512 dimensions:
// docs/embedding.md).
const sentencesFlagHelp = "also store each chunk's sentence vectors (the evidence selector's units), so that ask embeds no passage text at query time; " +
	"a per-index choice made when the index is created. Costs about 60 KB per 600-token chunk with --vectors f32 (the index grows about 11x), " +
	"16 KB with --vectors i8 (about 4.5x); indexing takes about 1.6x the CPU"

// sentenceEmbedderFor is the embedder whose sentence vectors ask reads
// (ask.SentenceEmbedder), through the embedding cache: e itself when it is
// the embedded model, else the embedded model opened here.
func sentenceEmbedderFor(e embed.Embedder) (embed.Embedder, func() error, error) {
	se, err := ask.SentenceEmbedder(e)
	if err != nil {
		return nil, nil, err
	}
	if se == e {
		return e, func() error { return nil }, nil
	}
	return openEmbedder(embedders.Default, "")
}

const indexAddHelp = `Reads every .txt, .md, .html and .jsonl file under the given files and folders
(hidden ones skipped), cuts each document into chunks, embeds them and stores
them in the index. Files whose content did not change since they were added
are skipped without being read twice; documents that changed are replaced.
LaRA: point it at ../shared/data/lara/datasets/32k (or a sub-folder); its
query files hold questions, not documents, and are skipped with a note.

Text must be UTF-8 (chunk offsets are byte offsets into the file as on disk):
binary files, files in another charset (Latin-1, UTF-16: convert them with
iconv), unreadable and malformed files are skipped, each named in a note, and
the run ends with exit code 3 after indexing everything else. So are what is
not a regular file (a symlink counts as its target: devices, FIFOs, sockets
are never read), files over --max-file-bytes (default 256 MiB) and .jsonl.gz
files that decompress to more than --max-decompressed-bytes (default 256 MiB).

Chunkers: tokens:size=600,overlap=100 (default; the LaRA/LDAR setting),
sentences:max_tokens=600, semantic:threshold=0.75,max_tokens=600.
Documents are committed every 256 chunks or 2 s (whole documents only): an
interrupted run keeps every batch it committed; run it again to finish.

--sentences (a new index only; kept for every later add) also stores each
chunk's sentence vectors, so that ask's evidence selector reads them instead
of embedding the ~600 sentences of its 20 best chunks per question: the
evidence step then takes milliseconds instead of seconds cold
(docs/embedding.md). It costs disk and indexing time: about 60 KB per
600-token chunk with f32 vectors (the index about 11x larger; 1M chunks:
60 GB), 30 KB with f16 (7x), 16 KB with --vectors i8 (4.5x; 1M chunks:
15 GB), and each chunk's text is embedded twice, whole and sentence by
sentence (about 1.6x the CPU).
`

func cmdIndexAdd(ctx context.Context, args []string, stdout, stderr io.Writer, sync bool) error {
	name, synopsis := "index add", `Usage: ctxsel index add [--index DIR|URL] [--sync] [--chunker SPEC] [--embedder NAME] [--vectors F] [--sentences] PATH...

`+indexAddHelp+`
With --sync, documents read earlier from files under PATH that no longer
exist are removed (the same as 'ctxsel index sync PATH...').`
	if sync {
		name, synopsis = "index sync", `Usage: ctxsel index sync [--index DIR|URL] [flags] PATH...

Makes the index match the folders: adds new and changed files as 'index add'
does, and removes the documents of files under PATH that were deleted.

`+indexAddHelp
	}
	fs := newFlags(name, synopsis, stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory, or weaviate://host:port/Collection")
	chunker := fs.String("chunker", "", "chunker spec for a new index (default "+chunk.DefaultSpec+"; an existing index keeps its own)")
	embedder := fs.String("embedder", "", "embedding model: "+strings.Join(embedders.Names(), ", ")+" (default: the index's, else use-lite)")
	vectors := fs.String("vectors", "f32", "vector storage of a new embedded index: f32, f16 (half the memory) or i8 (a quarter)")
	encoding := fs.String("encoding", "", "token encoding for chunk sizes and counts (default: the index's, else "+token.Default+")")
	sentences := fs.Bool("sentences", false, sentencesFlagHelp)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	maxFile := fs.Int64("max-file-bytes", ingest.DefaultMaxFileBytes, "skip, with a note, files larger than this many bytes (a .jsonl.gz: its compressed size)")
	maxUnzipped := fs.Int64("max-decompressed-bytes", ingest.DefaultMaxDecompressedBytes, "skip, with a note, .jsonl.gz files that decompress to more than this many bytes")
	if !sync {
		fs.BoolVar(&sync, "sync", false, "also remove the documents of files under PATH that no longer exist")
	}
	paths, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		fs.Usage()
		return usageError{fmt.Errorf("%s: no files or folders given", name)}
	}
	if *maxFile <= 0 || *maxUnzipped <= 0 {
		return usageError{fmt.Errorf("%s: --max-file-bytes and --max-decompressed-bytes must be positive", name)}
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
	e, closeEmb, err := openEmbedder(*embedder, st.Config.Model)
	if err != nil {
		return err
	}
	defer closeEmb()
	ch, err := chunk.Parse(spec, tk, e)
	if err != nil {
		return err
	}
	bar := progress.New(stderr, "indexing")
	in := &ingest.Ingester{Store: store, Embedder: e, Chunker: ch, Encoding: tk.Encoding(), Sync: sync,
		Limits:   ingest.Limits{File: *maxFile, Decompressed: *maxUnzipped},
		Progress: func(p ingest.Progress) { bar.Update(int(p.Bytes), int(p.TotalBytes)) }}
	if *sentences || st.Config.SentenceModel != "" {
		// the index's choice, once made, holds for every later add
		se, closeSnt, err := sentenceEmbedderFor(e)
		if err != nil {
			return err
		}
		defer closeSnt()
		in.Sentences = se
	}
	rep, err := in.Add(ctx, paths)
	limitHints(rep.Problems)
	for _, p := range rep.Problems {
		fmt.Fprintf(stderr, "note: skipped %s: %s\n", termtext.Line(p.Path), termtext.Line(p.Reason))
	}
	if errors.Is(err, index.ErrMismatch) {
		return usageError{err}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "interrupted: %s; run the same command to finish\n", committed(rep))
		} else {
			fmt.Fprintf(stderr, "%s\n", committed(rep))
		}
		return err
	}
	for _, n := range rep.Notices {
		fmt.Fprintf(stderr, "note: %s\n", termtext.Line(n))
	}
	after, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(stdout, struct {
			Report ingest.Report `json:"report"`
			Index  index.Stats   `json:"index"`
		}{rep, after}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "%d files: %d documents added, %d replaced, %d removed, %d unchanged files skipped (%d chunks, %d tokens embedded) in %s\n",
			rep.Files, rep.Added, rep.Replaced, rep.Removed+rep.Gone, rep.Unchanged, rep.Chunks, rep.Tokens, rep.Elapsed.Round(time.Millisecond))
		if sync {
			// Of the removed: the documents of files that no longer exist.
			fmt.Fprintf(stdout, "sync: %d of the removed documents were of deleted files\n", rep.Gone)
		}
		fmt.Fprintf(stdout, "index %s: %d documents, %d chunks, %d tokens", termtext.Line(after.Location), after.Docs, after.Chunks, after.Tokens)
		if after.Config.Model != "" {
			fmt.Fprintf(stdout, " (%s, %s)", termtext.Line(after.Config.Model), termtext.Line(after.Config.Chunker))
		}
		fmt.Fprintln(stdout)
	}
	if n := len(rep.Problems); n > 0 {
		return partialError{fmt.Errorf("%s: %d files could not be indexed and were skipped (named above); everything else was indexed", name, n)}
	}
	return nil
}

// limitHints adds to the reason of each file over a read limit the flag
// that raises it.
func limitHints(problems []ingest.FileProblem) {
	flags := map[string]string{ingest.LimitFile: "--max-file-bytes", ingest.LimitDecompressed: "--max-decompressed-bytes"}
	for i, p := range problems {
		if f := flags[p.Limit]; f != "" {
			problems[i].Reason += " (raise it with " + f + ")"
		}
	}
}

// committed says what a failed or interrupted run left in the index.
func committed(rep ingest.Report) string {
	if rep.Committed == 0 {
		return "nothing from this run was committed"
	}
	ids := rep.CommittedIDs
	more := ""
	if len(ids) > 5 {
		more = fmt.Sprintf(" and %d more", len(ids)-5)
		ids = ids[:5]
	}
	return fmt.Sprintf("%d documents from this run were committed and stay in the index (%s%s)", rep.Committed, termtext.Line(strings.Join(ids, ", ")), more)
}

// openDirIndex opens an embedded index for verify and repair.
func openDirIndex(ctx context.Context, loc string) (*index.Dir, error) {
	store, err := openStore(ctx, loc, false, "")
	if err != nil {
		return nil, err
	}
	d, ok := store.(*index.Dir)
	if !ok {
		store.Close()
		return nil, usageError{fmt.Errorf("index %s: verify and repair work on the embedded index (a directory); a server checks its own storage", loc)}
	}
	return d, nil
}

// checkIndex runs the cheap check of an embedded index (the full one with
// full) and says what is damaged; other back ends pass.
func checkIndex(ctx context.Context, store index.Store, full bool, stderr io.Writer) error {
	d, ok := store.(*index.Dir)
	if !ok {
		return nil
	}
	chk, err := d.Check(ctx, full)
	if err != nil {
		return err
	}
	for _, dm := range chk.Damage {
		fmt.Fprintf(stderr, "damaged: %s: %s (%d documents)\n", termtext.Line(dm.File), termtext.Line(dm.Reason), len(dm.Docs))
	}
	return chk.Err(d.Path())
}

func cmdIndexVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("index verify", `Usage: ctxsel index verify [--index DIR] [--json]

Reads every byte of the embedded index's files and checks their checksums and
structure. Exit code 0: the index is sound; 1: damage, each damaged file listed
with the documents it holds (repair with 'ctxsel index repair').`, stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := openDirIndex(ctx, *loc)
	if err != nil {
		return err
	}
	defer d.Close()
	chk, err := d.Check(ctx, true)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(stdout, chk); err != nil {
			return err
		}
		return chk.Err(d.Path())
	}
	for _, dm := range chk.Damage {
		fmt.Fprintf(stdout, "damaged  %s: %s\n", termtext.Line(dm.File), termtext.Line(dm.Reason))
		for _, doc := range dm.Docs {
			fmt.Fprintf(stdout, "         holds %s%s\n", termtext.Line(doc.ID), sourceNote(doc))
		}
	}
	if chk.OK() {
		fmt.Fprintf(stdout, "ok: %d files, %.1f MB checked\n", chk.Files, float64(chk.Bytes)/1e6)
	}
	return chk.Err(d.Path())
}

func sourceNote(doc index.DocInfo) string {
	if doc.Source == "" {
		return ""
	}
	return " (from " + termtext.Line(doc.Source) + ")"
}

func cmdIndexRepair(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("index repair", `Usage: ctxsel index repair [--index DIR] [--json]

Runs the full check of 'ctxsel index verify' under the writer lock and drops
every damaged file with the documents it holds, leaving a consistent index.
The dropped documents are listed with the files they came from: add those
again with 'ctxsel index add'. A damaged MANIFEST cannot be repaired (it alone
says what the index holds): move the directory away and add the files again.`, stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := openDirIndex(ctx, *loc)
	if errors.Is(err, index.ErrCorrupt) {
		return fmt.Errorf("%w; the manifest alone says what the index holds, so it cannot be repaired: move %s away and add the files again", err, *loc)
	}
	if err != nil {
		return err
	}
	defer d.Close()
	rep, err := d.Repair(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, rep)
	}
	if len(rep.Dropped) == 0 {
		fmt.Fprintln(stdout, "nothing to repair: no damage found")
		return nil
	}
	var sources []string
	for _, dm := range rep.Dropped {
		fmt.Fprintf(stdout, "dropped  %s (%s)\n", termtext.Line(dm.File), termtext.Line(dm.Reason))
		for _, doc := range dm.Docs {
			fmt.Fprintf(stdout, "         %s%s\n", termtext.Line(doc.ID), sourceNote(doc))
			if doc.Source != "" {
				sources = append(sources, doc.Source)
			}
		}
	}
	slices.Sort(sources)
	sources = slices.Compact(sources)
	fmt.Fprintf(stdout, "%d documents dropped; the index is consistent again\n", rep.Docs)
	if len(sources) > 0 {
		fmt.Fprintf(stdout, "add them again with: ctxsel index add --index %s %s\n", quoteArgs([]string{d.Path()})[0], strings.Join(quoteArgs(sources), " "))
	}
	return nil
}

// quoteArgs quotes arguments holding shell-special characters. One holding
// a character the terminal must not get raw (a newline, ESC) is written in
// bash's and zsh's $'…' quoting, whose escapes are termtext's: it prints
// safely and pastes back as the same bytes.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if esc := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(a); termtext.Line(esc) != esc {
			a = "$'" + termtext.Line(esc) + "'"
		} else if strings.ContainsAny(a, " \t'\"\\$`!*?[](){};&|<>#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return out
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
	fs := newFlags("index ls", "Usage: ctxsel index ls [--index DIR|URL] [--json] [--verify]\n\nLists the documents with their chunks, tokens and source. Exit code 1 when\nthe embedded index is damaged (a cheap check of every file's size, header\nand checksum trailer; --verify reads every byte).", stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory, or weaviate://host:port/Collection")
	asJSON := fs.Bool("json", false, "print JSON")
	verify := fs.Bool("verify", false, "check every byte of the index's files, not only sizes, headers and trailers")
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
		if err := writeJSON(stdout, docs); err != nil {
			return err
		}
		return checkIndex(ctx, store, *verify, stderr)
	}
	fmt.Fprintf(stdout, "%7s %9s %11s  %s\n", "chunks", "tokens", "bytes", "document")
	for _, d := range docs {
		fmt.Fprintf(stdout, "%7d %9d %11d  %s\n", d.Chunks, d.Tokens, d.Bytes, termtext.Line(d.ID))
	}
	fmt.Fprintf(stdout, "%d documents\n", len(docs))
	return checkIndex(ctx, store, *verify, stderr)
}

func cmdIndexStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("index stats", "Usage: ctxsel index stats [--index DIR|URL] [--json] [--verify]\n\nPrints what the index holds and how it was built: documents, chunks, tokens,\nthe embedding model and its dimension, the chunker, the token encoding and\nthe vector format. Exit code 1 when the embedded index is damaged (a cheap\ncheck of every file's size, header and checksum trailer; --verify reads\nevery byte).", stderr)
	loc := fs.String("index", defaultIndexLocation(), "index directory, or weaviate://host:port/Collection")
	asJSON := fs.Bool("json", false, "print JSON")
	verify := fs.Bool("verify", false, "check every byte of the index's files, not only sizes, headers and trailers")
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
		if err := writeJSON(stdout, st); err != nil {
			return err
		}
		return checkIndex(ctx, store, *verify, stderr)
	}
	fmt.Fprintf(stdout, "index      %s (%s)\n", termtext.Line(st.Location), st.Backend)
	fmt.Fprintf(stdout, "documents  %d\nchunks     %d\ntokens     %d\n", st.Docs, st.Chunks, st.Tokens)
	fmt.Fprintf(stdout, "model      %s (dimension %d)\nchunker    %s\nencoding   %s\n", termtext.Line(st.Config.Model), st.Config.Dim, termtext.Line(st.Config.Chunker), termtext.Line(st.Config.Encoding))
	if st.Backend == "dir" {
		fmt.Fprintf(stdout, "vectors    %s\nsegments   %d (%d dead chunks awaiting compaction)\non disk    %.1f MB\n",
			st.Vectors, st.Segments, st.DeadChunks, float64(st.DiskBytes)/1e6)
	}
	if st.Config.SentenceModel != "" {
		fmt.Fprintf(stdout, "sentences  %s (%.1f MB of vectors)\n", termtext.Line(st.Config.SentenceModel), float64(st.SentenceBytes)/1e6)
	}
	return checkIndex(ctx, store, *verify, stderr)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
