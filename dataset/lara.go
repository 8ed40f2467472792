package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
)

// LaRA (Li et al., 2025), the benchmark of LDAR, as ctxsel data: each query
// of datasets/query/{length}_{kind}_{level}.jsonl becomes a Record whose
// passages are its document (datasets/{length}/{kind}/{file}) cut into
// chunks (LDAR uses 600 tokens with 100 overlap: about 64 passages at 32k,
// 256 at 128k), and whose answer is the query's reference answer. LaRA has
// no gold passages: it is measured by the answers alone.

// LaRALengths and LaRAKinds are the benchmark's context lengths and
// document kinds.
var (
	LaRALengths = []string{"32k", "128k"}
	LaRAKinds   = []string{"book", "financial", "paper"}
)

// laraQuery is one line of a LaRA query file.
type laraQuery struct {
	Type     string `json:"type"`
	Level    string `json:"level"`
	Length   string `json:"length"`
	File     string `json:"file"`
	Question string `json:"question"`
	Answer   any    `json:"answer"`
}

// ParseLaRA reads a LaRA data spec "LENGTH/KIND[/LEVEL]" (e.g. 32k/book,
// 128k/paper/location). Errors wrap ctxsel.ErrInvalidInput.
func ParseLaRA(spec string) (length, kind, level string, err error) {
	parts := strings.Split(strings.Trim(spec, "/"), "/")
	if len(parts) < 2 || len(parts) > 3 {
		return "", "", "", fmt.Errorf("%w: LaRA data %q: want LENGTH/KIND[/LEVEL], e.g. 32k/book", ctxsel.ErrInvalidInput, spec)
	}
	length, kind = parts[0], parts[1]
	if len(parts) == 3 {
		level = parts[2]
	}
	if !slices.Contains(LaRALengths, length) || !slices.Contains(LaRAKinds, kind) || strings.ContainsAny(level, `/\.`) {
		return "", "", "", fmt.Errorf("%w: LaRA data %q: length %s, kind %s", ctxsel.ErrInvalidInput, spec,
			strings.Join(LaRALengths, "|"), strings.Join(LaRAKinds, "|"))
	}
	return length, kind, level, nil
}

// LoadLaRA reads the queries of one LaRA slice from root (the directory
// holding datasets/) and chunks each query's document with ch (every
// document once). Records are in file order: level files sorted by name,
// lines in order; ids are "LENGTH/KIND/LEVEL/N".
func LoadLaRA(ctx context.Context, root, spec string, ch chunk.Chunker) ([]Record, error) {
	length, kind, level, err := ParseLaRA(spec)
	if err != nil {
		return nil, err
	}
	pattern := filepath.Join(root, "datasets", "query", length+"_"+kind+"_*.jsonl")
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("lara: %w", err)
	}
	sort.Strings(files)
	chunks := map[string][]Passage{}
	var recs []Record
	for _, f := range files {
		lv := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), length+"_"+kind+"_"), ".jsonl")
		if level != "" && lv != level {
			continue
		}
		qs, err := readLaRAQueries(f)
		if err != nil {
			return nil, err
		}
		for i, q := range qs {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if strings.ContainsAny(q.File, `/\`) || q.File == "" || q.File == ".." {
				return nil, fmt.Errorf("lara %s line %d: bad document name %q", f, i+1, q.File)
			}
			ps, ok := chunks[q.File]
			if !ok {
				if ps, err = laraDocument(ctx, filepath.Join(root, "datasets", length, kind, q.File), q.File, ch); err != nil {
					return nil, err
				}
				chunks[q.File] = ps
			}
			answers := laraAnswers(q.Answer)
			recs = append(recs, Record{
				ID: fmt.Sprintf("%s/%s/%s/%d", length, kind, lv, i), Question: q.Question, Answers: answers,
				Passages: ps, Task: lv,
			})
		}
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%w: lara: no queries for %q under %s", ctxsel.ErrInvalidInput, spec, pattern)
	}
	return recs, nil
}

func readLaRAQueries(path string) ([]laraQuery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lara: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	var qs []laraQuery
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var q laraQuery
		if err := json.Unmarshal(b, &q); err != nil {
			return nil, fmt.Errorf("lara %s line %d: %w", path, line, err)
		}
		if strings.TrimSpace(q.Question) == "" {
			return nil, fmt.Errorf("lara %s line %d: empty question", path, line)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("lara %s: %w", path, err)
	}
	return qs, nil
}

// laraAnswers accepts a reference answer given as a string or a list.
func laraAnswers(a any) []string {
	switch v := a.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func laraDocument(ctx context.Context, path, name string, ch chunk.Chunker) ([]Passage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("lara: %w", err)
	}
	cs, err := ch.Chunk(ctx, name, string(b))
	if err != nil {
		return nil, fmt.Errorf("lara: chunk %s: %w", name, err)
	}
	if len(cs) == 0 {
		return nil, fmt.Errorf("lara: document %s is empty", name)
	}
	ps := make([]Passage, len(cs))
	for i, c := range cs {
		ps[i] = Passage{ID: c.ID(), Text: c.Text}
	}
	return ps, nil
}
