// Package ingest reads files into an index: walking folders, parsing
// .txt, .md, .html and .jsonl files (LaRA's folders included), chunking,
// embedding, and committing batches to any index.Store — what `ctxsel
// index add` does. The storage engine (package index) knows nothing of
// files; this package knows nothing of how they are stored.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index"
)

// Ingester reads files, chunks and embeds their documents and adds them to
// an index.Store — what `ctxsel index add` does. Files whose content hash matches
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
// A file that cannot be indexed (unreadable, binary, not UTF-8, malformed,
// not a regular file, over a read limit) does not stop the run: it is
// skipped and listed in Report.Problems.
type Ingester struct {
	Store    index.Store
	Embedder embed.Embedder
	Chunker  chunk.Chunker
	// Encoding names the chunker's token encoding (recorded in the config).
	Encoding string
	// Sentences, when set, embeds every chunk's sentences — the spans
	// evidence.Split gives, the units the evidence selector scores — to be
	// stored beside the chunk's vector (index.Config.SentenceModel is its
	// ModelID): a per-index choice, so that `ask` embeds no passage
	// sentence at query time. It must be the embedder the selector will
	// use (ask.SentenceEmbedder), or the vectors are never read.
	Sentences embed.Embedder
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
	// Limits bound what one file may cost to read (zero fields: the
	// defaults); a file over one is skipped and listed in Report.Problems.
	Limits Limits
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
	// Limit names the read limit the file is over (LimitFile,
	// LimitDecompressed), or is empty.
	Limit string `json:"limit,omitempty"`
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

type docState struct {
	doc     index.Document
	pending int   // chunks still to embed
	weight  int64 // progress bytes credited when embedded
}

type chunkRef struct {
	st *docState
	i  int
}

// run is one Add call: what it has read, embedded and committed so far.
// Its methods are Add's steps.
type run struct {
	in    *Ingester
	ctx   context.Context
	start time.Time
	rep   Report
	prog  Progress
	cfg   index.Config
	lim   Limits

	batch, commitChunks int
	interval            time.Duration

	// what the store held when the run began
	existing []index.DocInfo
	byID     map[string]index.DocInfo
	bySource map[string][]index.DocInfo

	inRun          map[string]string // ids of the documents read this run: their file
	stale          []string          // ids no longer in their re-read file
	questionFiles  []string          // files of questions only (LaRA query files), the first few
	questionFilesN int

	// the pipeline: documents being embedded (in order), chunks waiting
	// for the embedder, documents embedded and waiting for a commit
	embedding   []*docState
	queue       []chunkRef
	ready       []index.Document
	readyChunks int
	lastCommit  time.Time
}

// Add ingests paths (files or folders).
func (in *Ingester) Add(ctx context.Context, paths []string) (Report, error) {
	r, err := in.begin(ctx)
	if err != nil {
		return r.rep, err
	}
	files, err := r.walk(paths)
	if err != nil {
		return r.rep, err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return r.fail(err)
		}
		if err := r.file(f); err != nil {
			return r.fail(err)
		}
	}
	if err := r.flush(); err != nil {
		return r.fail(err)
	}
	if err := r.commit(true); err != nil {
		return r.failed(err)
	}
	if err := r.removeStale(); err != nil {
		return r.failed(err)
	}
	if in.Sync {
		n, err := in.removeGone(ctx, paths, files, r.existing, r.inRun)
		r.rep.Gone = n
		if err != nil {
			return r.failed(err)
		}
	}
	return r.done(), nil
}

// begin checks the ingester against the store and reads what it holds.
func (in *Ingester) begin(ctx context.Context) (*run, error) {
	r := &run{in: in, ctx: ctx, start: time.Now(), batch: in.EmbedBatch, commitChunks: in.CommitChunks, interval: in.CommitInterval,
		inRun: map[string]string{}, lastCommit: time.Now(), lim: in.Limits.resolved()}
	if in.Store == nil || in.Embedder == nil || in.Chunker == nil {
		return r, fmt.Errorf("%w: ingester needs a store, an embedder and a chunker", ctxsel.ErrInvalidInput)
	}
	if r.batch <= 0 {
		r.batch = 32
	}
	if r.commitChunks <= 0 {
		r.commitChunks = DefaultCommitChunks
	}
	if r.interval <= 0 {
		r.interval = DefaultCommitInterval
	}
	r.cfg = index.Config{Model: in.Embedder.ModelID(), Chunker: in.Chunker.Spec(), Encoding: in.Encoding}
	if in.Sentences != nil {
		if _, ok := in.Store.(ctxsel.SentenceStore); !ok {
			return r, fmt.Errorf("%w: this index keeps no sentence vectors (the embedded index does)", ctxsel.ErrInvalidInput)
		}
		r.cfg.SentenceModel = in.Sentences.ModelID()
	}
	st, err := in.Store.Stats(ctx)
	if err != nil {
		return r, err
	}
	if st.Config != (index.Config{}) {
		if err := r.cfg.Compatible(st.Config); err != nil {
			return r, fmt.Errorf("index %s: %w", st.Location, err)
		}
		r.cfg.Dim = st.Config.Dim
	}
	if r.existing, err = in.Store.List(ctx); err != nil {
		return r, err
	}
	r.byID = make(map[string]index.DocInfo, len(r.existing))
	r.bySource = map[string][]index.DocInfo{}
	for _, d := range r.existing {
		r.byID[d.ID] = d
		if d.Source != "" {
			r.bySource[d.Source] = append(r.bySource[d.Source], d)
		}
	}
	return r, nil
}

// walk finds the files to read. With Sync, a path deleted as a whole is
// synced too: nothing to read, its documents to remove.
func (r *run) walk(paths []string) ([]SourceFile, error) {
	walk := paths
	if r.in.Sync {
		walk = nil
		for _, p := range paths {
			if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
				r.rep.Notices = append(r.rep.Notices, fmt.Sprintf("%s does not exist: the documents read from it are removed", p))
				continue
			}
			walk = append(walk, p)
		}
	}
	walked, err := Walk(walk)
	if err != nil {
		return nil, err
	}
	r.rep.Problems = append(r.rep.Problems, walked.Problems...)
	if walked.Skipped > 0 {
		r.rep.Notices = append(r.rep.Notices, fmt.Sprintf("skipped %d files of unsupported types (supported: %v)", walked.Skipped, Extensions))
	}
	r.prog.TotalFiles = len(walked.Files)
	for _, f := range walked.Files {
		r.prog.TotalBytes += f.Size
	}
	r.report()
	return walked.Files, nil
}

func (r *run) report() {
	if r.in.Progress != nil {
		r.in.Progress(r.prog)
	}
}

// skip lists a file that cannot be indexed, and why; the run goes on.
func (r *run) skip(f SourceFile, why error) {
	p := FileProblem{Path: f.Path, Reason: problemReason(f, why)}
	if le := (*LimitError)(nil); errors.As(why, &le) {
		p.Limit = le.Limit
	}
	r.rep.Problems = append(r.rep.Problems, p)
	r.done1(f)
}

// done1 credits a file's bytes as read with nothing to embed.
func (r *run) done1(f SourceFile) {
	r.prog.Bytes += f.Size
	r.report()
}

// file reads one file and queues its new or changed documents. Only a
// failure to chunk or embed is an error; a file that cannot be indexed is
// skipped and listed.
func (r *run) file(f SourceFile) error {
	r.rep.Files++
	r.prog.Files++
	prev := r.bySource[f.Abs]
	raw, err := readRegular(f.Path, r.lim.File)
	if err != nil {
		r.skip(f, err)
		return nil
	}
	srcHash := index.Hash(raw)
	if len(prev) > 0 && allHash(prev, srcHash) {
		r.rep.Unchanged++
		r.done1(f)
		return nil
	}
	if problem := fileProblem(f, raw); problem != "" {
		r.skip(f, errors.New(problem))
		return nil
	}
	docs, err := parse(f, raw, r.lim)
	if errors.Is(err, ErrNoDocuments) {
		if len(r.questionFiles) < 3 {
			r.questionFiles = append(r.questionFiles, f.Path)
		}
		r.questionFilesN++
		r.done1(f)
		return nil
	}
	if err != nil {
		r.skip(f, err)
		return nil
	}
	docs = r.claim(f, prev, docs)
	for i, w := range weights(f.Size, docs) {
		if err := r.document(f, srcHash, docs[i], w); err != nil {
			return err
		}
	}
	r.report()
	return nil
}

// claim keeps the documents of f whose ids no earlier file of this run
// had (one id, one document: storing both in one batch would fail the
// batch, in two would keep the last), and marks stale the stored
// documents of f that it no longer holds.
func (r *run) claim(f SourceFile, prev []index.DocInfo, docs []SourceDoc) []SourceDoc {
	present := make(map[string]bool, len(docs))
	kept := docs[:0]
	for _, d := range docs {
		present[d.ID] = true
		if other, dup := r.inRun[d.ID]; dup {
			r.rep.Problems = append(r.rep.Problems, FileProblem{Path: f.Path,
				Reason: fmt.Sprintf("its document %q was not indexed: %s, read first, has one with the same id", d.ID, other)})
			continue
		}
		r.inRun[d.ID] = f.Path
		kept = append(kept, d)
	}
	for _, p := range prev {
		if !present[p.ID] {
			r.stale = append(r.stale, p.ID)
		}
	}
	return kept
}

// weights shares a file's bytes among its documents by text length, for
// progress.
func weights(size int64, docs []SourceDoc) []int64 {
	total := int64(0)
	for _, d := range docs {
		total += int64(len(d.Text))
	}
	out := make([]int64, len(docs))
	credited := int64(0)
	for i, d := range docs {
		w := size / int64(len(docs))
		if total > 0 {
			w = size * int64(len(d.Text)) / total
		}
		if i == len(docs)-1 {
			w = size - credited
		}
		credited += w
		out[i] = w
	}
	return out
}

// document chunks a new or changed document and queues its chunks for the
// embedder; one the store holds unchanged from the same file is kept.
func (r *run) document(f SourceFile, srcHash string, sd SourceDoc, weight int64) error {
	h := index.Hash([]byte(sd.Text))
	if old, ok := r.byID[sd.ID]; ok && old.Hash == h && old.Source == f.Abs {
		r.rep.Kept++
		r.prog.Bytes += weight
		return nil
	}
	chunks, err := chunkText(r.ctx, r.in.Chunker, sd.ID, sd.Text)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	if _, ok := r.byID[sd.ID]; ok {
		r.rep.Replaced++
	} else {
		r.rep.Added++
	}
	st := &docState{
		doc: index.Document{ID: sd.ID, Source: f.Abs, SourceHash: srcHash, Hash: h, Text: sd.Text,
			Chunks: chunks, Vectors: make([][]float32, len(chunks))},
		pending: len(chunks), weight: weight,
	}
	for _, c := range chunks {
		r.rep.Tokens += c.Tokens
	}
	r.rep.Chunks += len(chunks)
	r.embedding = append(r.embedding, st)
	for ci := range chunks {
		r.queue = append(r.queue, chunkRef{st, ci})
		if len(r.queue) >= r.batch {
			if err := r.flush(); err != nil {
				return err
			}
		}
	}
	r.promote() // documents without chunks
	return nil
}

// flush embeds the queued chunks, moves the documents that are whole to
// ready and commits when a batch is due.
func (r *run) flush() error {
	if len(r.queue) == 0 {
		return nil
	}
	texts := make([]string, len(r.queue))
	for i, q := range r.queue {
		// stored chunks keep the file's bytes; the embedder sees them
		// normalised, as it did before offsets kept them
		texts[i] = CleanText(q.st.doc.Chunks[q.i].Text)
	}
	vecs, err := r.in.Embedder.Embed(r.ctx, texts)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	dim, err := embed.CheckVectors(vecs, len(texts))
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	if r.cfg.Dim != 0 && dim != r.cfg.Dim {
		return fmt.Errorf("embed: %w: vectors of dimension %d, the index uses %d", index.ErrMismatch, dim, r.cfg.Dim)
	}
	if r.in.Sentences != nil {
		if err := r.embedSentences(); err != nil {
			return err
		}
	}
	for i, q := range r.queue {
		q.st.doc.Vectors[q.i] = vecs[i]
		q.st.pending--
	}
	r.queue = r.queue[:0]
	r.promote()
	r.report()
	return r.commit(false)
}

// embedSentences embeds the sentences of the queued chunks: the spans
// evidence.Split gives each chunk's text (the header line left out, as the
// selector leaves it out), each sentence as the selector embeds it — its
// bytes as they are.
func (r *run) embedSentences() error {
	var texts []string
	spans := make([][][2]int, len(r.queue))
	for i, q := range r.queue {
		text := q.st.doc.Chunks[q.i].Text
		spans[i] = evidence.Split(text).Sentences
		for _, sp := range spans[i] {
			texts = append(texts, text[sp[0]:sp[1]])
		}
	}
	var vecs [][]float32
	if len(texts) > 0 {
		var err error
		if vecs, err = r.in.Sentences.Embed(r.ctx, texts); err != nil {
			return fmt.Errorf("embed sentences: %w", err)
		}
		if _, err := embed.CheckVectors(vecs, len(texts)); err != nil {
			return fmt.Errorf("embed sentences: %w", err)
		}
	}
	at := 0
	for i, q := range r.queue {
		d := &q.st.doc
		if d.Sentences == nil {
			d.Sentences = make([]index.ChunkSentences, len(d.Chunks))
		}
		n := len(spans[i])
		d.Sentences[q.i] = index.ChunkSentences{Spans: spans[i], Vectors: vecs[at : at+n : at+n]}
		at += n
	}
	return nil
}

// promote moves fully embedded documents, in order, to ready.
func (r *run) promote() {
	k := 0
	for k < len(r.embedding) && r.embedding[k].pending == 0 {
		s := r.embedding[k]
		r.ready = append(r.ready, s.doc)
		r.readyChunks += len(s.doc.Chunks)
		r.prog.Bytes += s.weight
		r.prog.Chunks += len(s.doc.Chunks)
		k++
	}
	r.embedding = r.embedding[k:]
}

// commit adds the ready documents to the store in one batch: when forced,
// or once CommitChunks chunks or CommitInterval have gathered.
func (r *run) commit(force bool) error {
	if len(r.ready) == 0 || !force && r.readyChunks < r.commitChunks && time.Since(r.lastCommit) < r.interval {
		return nil
	}
	if err := r.in.Store.Add(r.ctx, r.cfg, r.ready); err != nil {
		return err
	}
	if r.cfg.Dim == 0 {
		for _, d := range r.ready {
			if len(d.Vectors) > 0 {
				r.cfg.Dim = len(d.Vectors[0])
				break
			}
		}
	}
	r.rep.Commits++
	r.rep.Committed += len(r.ready)
	for _, d := range r.ready {
		r.rep.CommittedIDs = append(r.rep.CommittedIDs, d.ID)
	}
	r.ready, r.readyChunks, r.lastCommit = nil, 0, time.Now()
	return nil
}

// removeStale removes the documents that left their re-read file. One
// that left it for another file read in this run is not stale: it was
// stored again under its new file (and when its new file came first,
// removing it here would delete the new copy).
func (r *run) removeStale() error {
	stale := slices.DeleteFunc(r.stale, func(id string) bool { _, read := r.inRun[id]; return read })
	if len(stale) == 0 {
		return nil
	}
	n, err := r.in.Store.Remove(r.ctx, stale)
	if err != nil {
		return err
	}
	r.rep.Removed = n
	return nil
}

// done completes the report of a run that went through.
func (r *run) done() Report {
	if r.questionFilesN > 0 {
		more := ""
		if r.questionFilesN > len(r.questionFiles) {
			more = fmt.Sprintf(" and %d more", r.questionFilesN-len(r.questionFiles))
		}
		r.rep.Notices = append(r.rep.Notices, fmt.Sprintf("skipped %d files of questions without document text (%s%s): LaRA's query files; index the .txt documents they refer to",
			r.questionFilesN, strings.Join(r.questionFiles, ", "), more))
	}
	r.prog.Bytes = r.prog.TotalBytes
	r.report()
	r.rep.Elapsed = time.Since(r.start)
	return r.rep
}

// fail ends a run that failed: documents already embedded are committed
// unless the context was cancelled (a user interrupt stops at once).
func (r *run) fail(err error) (Report, error) {
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		if cerr := r.commit(true); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	return r.failed(err)
}

// failed ends a run that failed after its last commit.
func (r *run) failed(err error) (Report, error) {
	r.rep.Elapsed = time.Since(r.start)
	return r.rep, err
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

func allHash(docs []index.DocInfo, h string) bool {
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
func (in *Ingester) removeGone(ctx context.Context, paths []string, files []SourceFile, existing []index.DocInfo, inRun map[string]string) (int, error) {
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
