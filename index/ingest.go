package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/embed"
)

// Ingester reads files, chunks and embeds their documents and adds them to
// a Store — what `ctxsel index add` does. Files whose content hash matches
// what the store recorded are skipped without being parsed; in a changed
// .jsonl file only the records whose text changed are embedded again, and
// records that disappeared are removed — unless read this run from another
// file (a record moved between files stays, with its new file's text). An
// id read twice in one run keeps its first file's document; the later copy
// is skipped and listed in Report.Problems.
//
// Documents are committed in batches (CommitChunks chunks or CommitInterval,
// whichever comes first; whole documents only), each batch atomically on the
// embedded index, so an interrupted run keeps every batch committed before it.
//
// A file that cannot be indexed (unreadable, binary, not UTF-8, malformed)
// does not stop the run: it is skipped and listed in Report.Problems.
type Ingester struct {
	Store    Store
	Embedder embed.Embedder
	Chunker  chunk.Chunker
	// Encoding names the chunker's token encoding (recorded in the config).
	Encoding string
	// EmbedBatch is how many chunks go to the embedder at once (default 32).
	EmbedBatch int
	// CommitChunks and CommitInterval bound the work an interruption can
	// lose (defaults DefaultCommitChunks, DefaultCommitInterval).
	CommitChunks   int
	CommitInterval time.Duration
	// Sync removes the documents of files that are gone: stored documents
	// read from a file under one of the paths given to Add that no longer
	// exists (Report.Gone counts them).
	Sync bool
	// Progress, when set, is called as work completes.
	Progress func(Progress)
}

// Commit defaults: small enough that a kill early in a run keeps what was
// embedded (a 775-chunk book at 30 s per commit kept nothing), large enough
// that the per-commit cost (a segment file, a manifest, three fsyncs) stays
// small next to embedding; see README for the measured cost.
const (
	DefaultCommitChunks   = 256
	DefaultCommitInterval = 2 * time.Second
)

// FileProblem is a file Add skipped because it could not be indexed.
type FileProblem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Progress reports how far an ingestion is. Bytes count the input files'
// sizes; a file's bytes are credited as its documents are embedded.
type Progress struct {
	Bytes, TotalBytes int64
	Files, TotalFiles int
	Chunks            int
}

// Report summarises an ingestion.
type Report struct {
	Files int `json:"files"`
	// Unchanged counts files skipped because their content hash matched.
	Unchanged int `json:"unchanged_files"`
	// Added and Replaced count documents embedded and stored; Kept those
	// of changed files whose own text had not changed; Removed those that
	// disappeared from a re-read file.
	Added    int      `json:"added"`
	Replaced int      `json:"replaced"`
	Kept     int      `json:"kept"`
	Removed  int      `json:"removed"`
	Chunks   int      `json:"chunks"`
	Tokens   int      `json:"tokens"`
	Commits  int      `json:"commits"`
	Notices  []string `json:"notices,omitempty"`
	Elapsed  time.Duration

	// Committed counts the documents stored by this run's commits, and
	// CommittedIDs names them (what stays in the index if the run fails).
	Committed    int      `json:"committed"`
	CommittedIDs []string `json:"-"`
	// Gone counts documents removed because their file no longer exists
	// (Ingester.Sync).
	Gone int `json:"gone"`
	// Problems lists the files skipped because they could not be indexed;
	// everything else was.
	Problems []FileProblem `json:"problems,omitempty"`
}

// Hash is the content hash ctxsel records for files and document texts.
func Hash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

type docState struct {
	doc     Document
	pending int   // chunks still to embed
	weight  int64 // progress bytes credited when embedded
}

// Add ingests paths (files or folders).
func (in *Ingester) Add(ctx context.Context, paths []string) (Report, error) {
	start := time.Now()
	var rep Report
	if in.Store == nil || in.Embedder == nil || in.Chunker == nil {
		return rep, invalidf("ingester needs a store, an embedder and a chunker")
	}
	batch := in.EmbedBatch
	if batch <= 0 {
		batch = 32
	}
	commitChunks := in.CommitChunks
	if commitChunks <= 0 {
		commitChunks = DefaultCommitChunks
	}
	interval := in.CommitInterval
	if interval <= 0 {
		interval = DefaultCommitInterval
	}
	cfg := Config{Model: in.Embedder.ModelID(), Chunker: in.Chunker.Spec(), Encoding: in.Encoding}
	st, err := in.Store.Stats(ctx)
	if err != nil {
		return rep, err
	}
	if st.Config != (Config{}) {
		if err := cfg.Compatible(st.Config); err != nil {
			return rep, fmt.Errorf("index %s: %w", st.Location, err)
		}
		cfg.Dim = st.Config.Dim
	}
	existing, err := in.Store.List(ctx)
	if err != nil {
		return rep, err
	}
	byID := make(map[string]DocInfo, len(existing))
	bySource := map[string][]DocInfo{}
	for _, d := range existing {
		byID[d.ID] = d
		if d.Source != "" {
			bySource[d.Source] = append(bySource[d.Source], d)
		}
	}
	walk := paths
	if in.Sync {
		// a folder deleted as a whole is synced too: nothing to read, its
		// documents to remove
		walk = nil
		for _, p := range paths {
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				rep.Notices = append(rep.Notices, fmt.Sprintf("%s does not exist: the documents read from it are removed", p))
				continue
			}
			walk = append(walk, p)
		}
	}
	walked, err := Walk(walk)
	if err != nil {
		return rep, err
	}
	rep.Problems = append(rep.Problems, walked.Problems...)
	if walked.Skipped > 0 {
		rep.Notices = append(rep.Notices, fmt.Sprintf("skipped %d files of unsupported types (supported: %v)", walked.Skipped, Extensions))
	}
	prog := Progress{TotalFiles: len(walked.Files)}
	for _, f := range walked.Files {
		prog.TotalBytes += f.Size
	}
	report := func() {
		if in.Progress != nil {
			in.Progress(prog)
		}
	}
	report()

	var (
		states     []*docState // documents being embedded, in order
		queue      []chunkRef  // chunks waiting for the embedder
		ready      []Document
		readyN     int
		lastCommit = time.Now()
		stale      []string
		noDocs     []string // files holding only questions (LaRA query files)
		noDocsN    int
		inRun      = map[string]string{} // ids of the documents read this run: their file
	)
	skip := func(f SourceFile, reason string) {
		rep.Problems = append(rep.Problems, FileProblem{Path: f.Path, Reason: reason})
		prog.Bytes += f.Size
		report()
	}
	commit := func(force bool) error {
		if len(ready) == 0 || !force && readyN < commitChunks && time.Since(lastCommit) < interval {
			return nil
		}
		if err := in.Store.Add(ctx, cfg, ready); err != nil {
			return err
		}
		if cfg.Dim == 0 {
			for _, d := range ready {
				if len(d.Vectors) > 0 {
					cfg.Dim = len(d.Vectors[0])
					break
				}
			}
		}
		rep.Commits++
		rep.Committed += len(ready)
		for _, d := range ready {
			rep.CommittedIDs = append(rep.CommittedIDs, d.ID)
		}
		ready, readyN, lastCommit = nil, 0, time.Now()
		return nil
	}
	// promote moves fully embedded documents, in order, to ready.
	promote := func() {
		k := 0
		for k < len(states) && states[k].pending == 0 {
			s := states[k]
			ready = append(ready, s.doc)
			readyN += len(s.doc.Chunks)
			prog.Bytes += s.weight
			prog.Chunks += len(s.doc.Chunks)
			k++
		}
		states = states[k:]
	}
	flush := func() error {
		if len(queue) == 0 {
			return nil
		}
		texts := make([]string, len(queue))
		for i, q := range queue {
			// stored chunks keep the file's bytes; the embedder sees
			// them normalised, as it did before offsets kept them
			texts[i] = CleanText(q.st.doc.Chunks[q.i].Text)
		}
		vecs, err := in.Embedder.Embed(ctx, texts)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		dim, err := embed.CheckVectors(vecs, len(texts))
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		if cfg.Dim != 0 && dim != cfg.Dim {
			return fmt.Errorf("embed: %w: vectors of dimension %d, the index uses %d", ErrMismatch, dim, cfg.Dim)
		}
		for i, q := range queue {
			q.st.doc.Vectors[q.i] = vecs[i]
			q.st.pending--
		}
		queue = queue[:0]
		promote()
		report()
		return commit(false)
	}

	for _, f := range walked.Files {
		if err := ctx.Err(); err != nil {
			return in.finish(&rep, start, commit, err)
		}
		rep.Files++
		prog.Files++
		prev := bySource[f.Abs]
		raw, err := readRaw(f)
		if err != nil {
			skip(f, problemReason(f, err))
			continue
		}
		srcHash := Hash(raw)
		if len(prev) > 0 && allHash(prev, srcHash) {
			rep.Unchanged++
			prog.Bytes += f.Size
			report()
			continue
		}
		if problem := fileProblem(f, raw); problem != "" {
			skip(f, problem)
			continue
		}
		docs, err := parse(f, raw)
		if errors.Is(err, ErrNoDocuments) {
			if len(noDocs) < 3 {
				noDocs = append(noDocs, f.Path)
			}
			noDocsN++
			prog.Bytes += f.Size
			report()
			continue
		}
		if err != nil {
			skip(f, problemReason(f, err))
			continue
		}
		// documents of this file no longer in it
		present := make(map[string]bool, len(docs))
		totalText := int64(0)
		kept := docs[:0]
		for _, d := range docs {
			present[d.ID] = true
			if other, dup := inRun[d.ID]; dup {
				// one id, one document: storing both in one batch
				// would fail the batch, in two would keep the last
				rep.Problems = append(rep.Problems, FileProblem{Path: f.Path,
					Reason: fmt.Sprintf("its document %q was not indexed: %s, read first, has one with the same id", d.ID, other)})
				continue
			}
			inRun[d.ID] = f.Path
			totalText += int64(len(d.Text))
			kept = append(kept, d)
		}
		docs = kept
		for _, p := range prev {
			if !present[p.ID] {
				stale = append(stale, p.ID)
			}
		}
		credited := int64(0)
		for i, sd := range docs {
			w := f.Size / int64(len(docs))
			if totalText > 0 {
				w = f.Size * int64(len(sd.Text)) / totalText
			}
			if i == len(docs)-1 {
				w = f.Size - credited
			}
			credited += w
			h := Hash([]byte(sd.Text))
			if old, ok := byID[sd.ID]; ok && old.Hash == h && old.Source == f.Abs {
				rep.Kept++
				prog.Bytes += w
				continue
			}
			chunks, err := chunkText(ctx, in.Chunker, sd.ID, sd.Text)
			if err != nil {
				return in.finish(&rep, start, commit, fmt.Errorf("%s: %w", f.Path, err))
			}
			if _, ok := byID[sd.ID]; ok {
				rep.Replaced++
			} else {
				rep.Added++
			}
			st := &docState{
				doc: Document{ID: sd.ID, Source: f.Abs, SourceHash: srcHash, Hash: h, Text: sd.Text,
					Chunks: chunks, Vectors: make([][]float32, len(chunks))},
				pending: len(chunks), weight: w,
			}
			for _, c := range chunks {
				rep.Tokens += c.Tokens
			}
			rep.Chunks += len(chunks)
			states = append(states, st)
			for ci := range chunks {
				queue = append(queue, chunkRef{st, ci})
				if len(queue) >= batch {
					if err := flush(); err != nil {
						return in.finish(&rep, start, commit, err)
					}
				}
			}
			promote() // documents without chunks
		}
		report()
	}
	if err := flush(); err != nil {
		return in.finish(&rep, start, commit, err)
	}
	if err := commit(true); err != nil {
		return in.finish(&rep, start, nil, err)
	}
	// a document that left one file for another read in this run is not
	// stale: it was stored again under its new file (and when its new file
	// came first, removing it here would delete the new copy)
	stale = slices.DeleteFunc(stale, func(id string) bool { _, read := inRun[id]; return read })
	if len(stale) > 0 {
		n, err := in.Store.Remove(ctx, stale)
		if err != nil {
			return in.finish(&rep, start, nil, err)
		}
		rep.Removed = n
	}
	if in.Sync {
		n, err := in.removeGone(ctx, paths, walked.Files, existing, inRun)
		rep.Gone = n
		if err != nil {
			return in.finish(&rep, start, nil, err)
		}
	}
	if noDocsN > 0 {
		more := ""
		if noDocsN > len(noDocs) {
			more = fmt.Sprintf(" and %d more", noDocsN-len(noDocs))
		}
		rep.Notices = append(rep.Notices, fmt.Sprintf("skipped %d files of questions without document text (%s%s): LaRA's query files; index the .txt documents they refer to",
			noDocsN, strings.Join(noDocs, ", "), more))
	}
	prog.Bytes = prog.TotalBytes
	report()
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// chunkText chunks a document's text, leaving a leading byte-order mark
// out of every chunk while offsets still count it: they point into the
// text as stored, which for a file is the file as on disk.
func chunkText(ctx context.Context, c chunk.Chunker, id, text string) ([]chunk.Chunk, error) {
	const bom = "\ufeff"
	body, ok := strings.CutPrefix(text, bom)
	chunks, err := c.Chunk(ctx, id, body)
	if err != nil || !ok {
		return chunks, err
	}
	for i := range chunks {
		chunks[i].Start += len(bom)
		chunks[i].End += len(bom)
		chunks[i].CharStart++
		chunks[i].CharEnd++
	}
	return chunks, nil
}

type chunkRef struct {
	st *docState
	i  int
}

// finish ends a run that failed: documents already embedded are committed
// unless the context was cancelled (a user interrupt stops at once).
// rep is the run's report, which commit updates.
func (in *Ingester) finish(rep *Report, start time.Time, commit func(bool) error, err error) (Report, error) {
	if commit != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		if cerr := commit(true); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	rep.Elapsed = time.Since(start)
	return *rep, err
}

func allHash(docs []DocInfo, h string) bool {
	for _, d := range docs {
		if d.SourceHash != h {
			return false
		}
	}
	return true
}

// problemReason is err without what the note says anyway: the file's
// path and "invalid input".
func problemReason(f SourceFile, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	msg := strings.TrimPrefix(err.Error(), errInput.Error()+": ")
	if rest, ok := strings.CutPrefix(msg, f.Path); ok {
		msg = strings.TrimLeft(rest, ": ")
	}
	return msg
}

// fileProblem says why a file read whole cannot be indexed, or "".
func fileProblem(f SourceFile, raw []byte) string {
	if !utf8.ValidString(f.ID) {
		return fmt.Sprintf("the file name is not valid UTF-8 (%q): document ids must be; rename the file", f.ID)
	}
	name := strings.ToLower(f.Path)
	if strings.HasSuffix(name, ".gz") {
		return "" // compressed; its records are checked when parsed
	}
	// a .jsonl's offsets point into its decoded JSON strings, not the file:
	// only binary is refused here, bad ids when parsed
	return textProblem(raw, !strings.HasSuffix(name, ".jsonl"))
}

// removeGone removes the stored documents read from files under paths that
// no longer exist, except ids read again this run (from another file).
func (in *Ingester) removeGone(ctx context.Context, paths []string, files []SourceFile, existing []DocInfo, inRun map[string]string) (int, error) {
	var roots []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return 0, fmt.Errorf("sync %s: %w", p, err)
		}
		roots = append(roots, abs)
	}
	found := make(map[string]bool, len(files))
	for _, f := range files {
		found[f.Abs] = true
	}
	var gone []string
	for _, d := range existing {
		if _, read := inRun[d.ID]; d.Source == "" || found[d.Source] || read || !under(d.Source, roots) {
			continue
		}
		if _, err := os.Lstat(d.Source); errors.Is(err, fs.ErrNotExist) {
			gone = append(gone, d.ID)
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	n, err := in.Store.Remove(ctx, gone)
	if err != nil {
		return 0, fmt.Errorf("sync: remove %d documents of deleted files: %w", len(gone), err)
	}
	return n, nil
}

// under reports whether path is one of roots or inside one of them.
func under(path string, roots []string) bool {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

func readRaw(f SourceFile) ([]byte, error) {
	raw, err := os.ReadFile(f.Path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.Path, err)
	}
	return raw, nil
}
