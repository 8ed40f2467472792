package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
)

// SourceDoc is one document read from a file, before chunking.
type SourceDoc struct {
	ID   string
	Text string
}

// SourceFile is a file Walk found.
type SourceFile struct {
	// Path is the path to read; ID is the document id its text gets (the
	// path as given, cleaned, with forward slashes); Abs identifies it
	// across working directories.
	Path, ID, Abs string
	Size          int64
}

// Extensions lists the file types Walk picks up and ReadFile reads.
var Extensions = []string{".txt", ".md", ".markdown", ".html", ".htm", ".jsonl", ".jsonl.gz"}

func supported(name string) bool {
	n := strings.ToLower(name)
	for _, e := range Extensions {
		if strings.HasSuffix(n, e) {
			return true
		}
	}
	return false
}

// WalkResult is what Walk found.
type WalkResult struct {
	Files []SourceFile
	// Skipped counts files of unsupported types inside folders.
	Skipped int
	// Problems lists the files and folders inside folders that could not
	// be read (permissions, vanished while walking); the walk goes on.
	Problems []FileProblem
}

// Walk expands paths (files or folders, walked recursively; hidden files and
// folders such as .git or .ctxsel-index are skipped) into the supported files
// they hold, sorted, each once. A file named explicitly must be of a
// supported type. Only regular files are read: a supported name on a device,
// FIFO, socket or folder (a symlink counts as its target) is listed in
// Problems.
func Walk(paths []string) (WalkResult, error) {
	var res WalkResult
	seen := map[string]bool{}
	add := func(path string, size int64) error {
		abs, err := filepath.Abs(path)
		if err != nil {
			return err
		}
		if seen[abs] {
			return nil
		}
		seen[abs] = true
		res.Files = append(res.Files, SourceFile{Path: path, ID: filepath.ToSlash(filepath.Clean(path)), Abs: abs, Size: size})
		return nil
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return res, fmt.Errorf("%w: %v", errInput, err)
		}
		if !st.IsDir() {
			if !supported(p) {
				return res, fmt.Errorf("%w: %s: unsupported file type (supported: %s)", errInput, p, strings.Join(Extensions, " "))
			}
			if !st.Mode().IsRegular() {
				res.Problems = append(res.Problems, notRegular(p, st.Mode()))
				continue
			}
			if err := add(p, st.Size()); err != nil {
				return res, err
			}
			continue
		}
		root := p
		if lst, err := os.Lstat(p); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
			// a folder named through a symlink: WalkDir follows the root
			// only when it ends in a separator
			root = p + string(filepath.Separator)
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil && path != root {
				res.Problems = append(res.Problems, FileProblem{Path: path, Reason: err.Error()})
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if err != nil {
				return err
			}
			if path != root && strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if !supported(path) {
				if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 {
					res.Skipped++
				}
				return nil
			}
			// a symlink counts as what it points to (not followed into
			// folders, which could loop)
			info, err := os.Stat(path)
			if err != nil {
				res.Problems = append(res.Problems, FileProblem{Path: path, Reason: problemReason(SourceFile{Path: path}, err)})
				return nil
			}
			if !info.Mode().IsRegular() {
				res.Problems = append(res.Problems, notRegular(path, info.Mode()))
				return nil
			}
			return add(path, info.Size())
		})
		if err != nil {
			return res, fmt.Errorf("walk %s: %w", p, err)
		}
	}
	return res, nil
}

// notRegular is the problem of a path whose file (a symlink's target) is
// not a regular file: a device, a FIFO, a socket or a folder is never read.
func notRegular(path string, mode fs.FileMode) FileProblem {
	lst, err := os.Lstat(path)
	return FileProblem{Path: path, Reason: (&notRegularError{mode: mode, link: err == nil && lst.Mode()&fs.ModeSymlink != 0}).Error()}
}

// errInput wraps problems with what the user asked to read.
var errInput = ctxsel.ErrInvalidInput

// ErrNoDocuments marks a file that holds no documents, such as a LaRA query
// file (questions and answers, no text to index).
var ErrNoDocuments = errors.New("no documents in file")

// ReadFile reads the documents of one file:
//
//   - .txt, .md, .markdown: the whole file is one document;
//   - .html, .htm: the visible text (scripts, styles and markup dropped,
//     block elements on their own lines), one document;
//   - .jsonl (optionally .jsonl.gz): one document per line with "id" and
//     "text"; lines in ctxsel's evaluation format ("id", "passages":
//     [{"id","text"}]) give one document per passage, "RECORD/PASSAGE".
//
// LaRA (Alibaba-NLP/LaRA, datasets/): its documents are the .txt files under
// datasets/{32k,128k}/{book,financial,paper}; its query files
// (datasets/query/*.jsonl: "question", "answer", "file") hold no document
// text and give ErrNoDocuments.
//
// The text of a .txt or .md document is the file's bytes, unchanged (a
// byte-order mark and "\r\n" line ends included), so that chunk offsets
// point into the file as it is on disk; such a file must be UTF-8. A .jsonl
// document's text is its decoded "text" string, unchanged. An HTML
// document's text is the extracted visible text, cleaned by CleanText:
// offsets point into that text, not into the markup.
//
// Reading is bounded by the default Limits (ReadFileWithin).
func ReadFile(f SourceFile) ([]SourceDoc, error) { return ReadFileWithin(f, Limits{}) }

// ReadFileWithin is ReadFile within read limits: a file that is not a
// regular file, or is over a limit (a *LimitError), is an error.
func ReadFileWithin(f SourceFile, lim Limits) ([]SourceDoc, error) {
	lim = lim.resolved()
	raw, err := readRegular(f.Path, lim.File)
	if err != nil {
		return nil, err
	}
	return parse(f, raw, lim)
}

func parse(f SourceFile, raw []byte, lim Limits) ([]SourceDoc, error) {
	name := strings.ToLower(f.Path)
	switch {
	case strings.HasSuffix(name, ".jsonl.gz"):
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errInput, f.Path, err)
		}
		// streamed: the decompressed bytes are never held whole, and a
		// small file that decompresses to gigabytes stops at the limit
		return parseJSONL(f, &cappedReader{r: zr, left: lim.Decompressed, max: lim.Decompressed})
	case strings.HasSuffix(name, ".jsonl"):
		return parseJSONL(f, bytes.NewReader(raw))
	case strings.HasSuffix(name, ".html"), strings.HasSuffix(name, ".htm"):
		text, err := HTMLText(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		return []SourceDoc{{ID: f.ID, Text: CleanText(text)}}, nil
	}
	if !utf8.Valid(raw) {
		// replacing bad bytes would move every later offset
		return nil, fmt.Errorf("%w: %s: %s", errInput, f.Path, textProblem(raw, true))
	}
	return []SourceDoc{{ID: f.ID, Text: string(raw)}}, nil
}

// CleanText makes text safe to chunk and embed: valid UTF-8 (bad bytes
// become U+FFFD), "\n" line ends, no leading byte-order mark. It is what
// the embedder sees of every chunk; stored texts of files keep their bytes
// (see ReadFile).
func CleanText(s string) string {
	s = strings.TrimPrefix(s, "\ufeff")
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\ufffd")
	}
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s
}

type jsonlLine struct {
	ID       json.RawMessage `json:"id"`
	Text     *string         `json:"text"`
	Question *string         `json:"question"`
	Passages []struct {
		ID   json.RawMessage `json:"id"`
		Text string          `json:"text"`
	} `json:"passages"`
}

// parseJSONL reads the records of r, one a line. Each byte is scanned
// once (a line as long as the file costs its length, not its length
// squared), and a failed read (over a limit, a damaged stream) ends the
// parse before the line it cut is parsed.
func parseJSONL(f SourceFile, r io.Reader) ([]SourceDoc, error) {
	var docs []SourceDoc
	seen := map[string]int{}
	queries := 0
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	for line, eof := 1, false; !eof; line++ {
		var err error
		buf, err = readLine(br, buf)
		if errors.Is(err, io.EOF) {
			eof = true
		} else if err != nil {
			return nil, readError(f, err)
		}
		b := bytes.TrimSpace(buf)
		if len(b) == 0 {
			continue
		}
		var l jsonlLine
		if err := json.Unmarshal(b, &l); err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %v", errInput, f.Path, line, err)
		}
		id, err := jsonID(l.ID)
		addDoc := func(id, text string) error {
			if prev, dup := seen[id]; dup {
				return fmt.Errorf("%w: %s line %d: document id %q already on line %d", errInput, f.Path, line, id, prev)
			}
			seen[id] = line
			docs = append(docs, SourceDoc{ID: id, Text: text})
			return nil
		}
		switch {
		case l.Text != nil:
			if err != nil {
				return nil, fmt.Errorf("%w: %s line %d: %v", errInput, f.Path, line, err)
			}
			if err := addDoc(id, *l.Text); err != nil {
				return nil, err
			}
		case len(l.Passages) > 0:
			if err != nil {
				return nil, fmt.Errorf("%w: %s line %d: %v", errInput, f.Path, line, err)
			}
			for i, p := range l.Passages {
				pid, err := jsonID(p.ID)
				if err != nil {
					pid = fmt.Sprint(i)
				}
				if err := addDoc(id+"/"+pid, p.Text); err != nil {
					return nil, err
				}
			}
		case l.Question != nil:
			queries++
		default:
			return nil, fmt.Errorf("%w: %s line %d: want {\"id\": ..., \"text\": ...}", errInput, f.Path, line)
		}
	}
	if len(docs) == 0 && queries > 0 {
		return nil, fmt.Errorf("%s: %w: %d questions without document text (a LaRA query file? index the .txt documents it refers to)", f.Path, ErrNoDocuments, queries)
	}
	return docs, nil
}

// readLine returns the next line of br, its newline included, in buf's
// memory when it fits; io.EOF comes with the last line when it has none. A
// long line is gathered in pieces and joined once at its end, so that a
// read that fails on it (over a limit) has cost its length once, not the
// copies a growing slice makes.
func readLine(br *bufio.Reader, buf []byte) ([]byte, error) {
	var pieces [][]byte
	n := 0
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			pieces = append(pieces, bytes.Clone(frag))
			n += len(frag)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if pieces == nil {
			return append(buf[:0], frag...), err
		}
		line := make([]byte, 0, n+len(frag))
		for _, p := range pieces {
			line = append(line, p...)
		}
		return append(line, frag...), err
	}
}

// readError is a failure reading a .jsonl's lines: over a limit (the
// *LimitError itself), or bad input.
func readError(f SourceFile, err error) error {
	if le := (*LimitError)(nil); errors.As(err, &le) {
		return fmt.Errorf("%s: %w", f.Path, le)
	}
	return fmt.Errorf("%w: %s: %v", errInput, f.Path, err)
}

func jsonID(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New(`missing "id"`)
	}
	if !utf8.Valid(raw) {
		// encoding/json would turn the bad bytes into U+FFFD: an id the
		// caller could never match
		return "", fmt.Errorf(`"id" is not valid UTF-8: %q`, shorten(string(raw), 40))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return "", errors.New(`empty "id"`)
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf(`"id" must be a string or a number, got %s`, shorten(string(raw), 40))
}

// shorten cuts s to n bytes for a message.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
