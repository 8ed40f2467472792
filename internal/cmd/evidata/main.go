// Command evidata converts public question-answering sets with
// sentence-level evidence into ctxsel's common JSONL format (see
// ../shared/data/README.md), with gold_spans: the UTF-8 byte offsets of each
// gold sentence in its passage. It reads a raw file of the source and writes
// a gzip-compressed JSONL file (no timestamp in the gzip header, so the same
// input always gives the same bytes).
//
//	go run ./internal/cmd/evidata hotpotqa --in hotpot.json --out data/evidence/x.jsonl.gz [--exclude FILE] [--limit N]
//	go run ./internal/cmd/evidata 2wiki    --in dev.json    --out data/evidence/w.jsonl.gz [--id-field _1]
//	go run ./internal/cmd/evidata musique  --in musique.json --out data/evidence/m.jsonl.gz
//	go run ./internal/cmd/evidata squad    --in dev.json    --out data/evidence/y.jsonl.gz [--per-paragraph 2] [--limit N]
//	go run ./internal/cmd/evidata merge OUT.jsonl.gz IN.jsonl.gz...
//	go run ./internal/cmd/evidata regroup --tokens 600 [--order shuffle|document] [--sep S] --in X.jsonl.gz --out Y.jsonl.gz
//	go run ./internal/cmd/evidata chunk [--chunker SPEC] [--sep S] [--title T | --title-meta KEY] --in X.jsonl.gz --out Y.jsonl.gz
//	go run ./internal/cmd/evidata report [--strategies A,B] REPORT.json...
//
// regroup emulates an index's long chunks: each question's passages, in a
// seeded shuffled order (--order shuffle, for independent paragraphs) or in
// the order given (--order document: a transcript's turns, a report's
// paragraphs and table), are joined (--sep, "\n\n" by default) into chunks
// of at most --tokens tokens (cl100k_base; a longer passage stays alone),
// gold spans shifted with them. Chunks never cut a passage, so a unit the
// converter made a passage (a turn, a table) is never split; index
// add's token chunker (600 tokens, 100 overlap) may cut one: chunk cuts
// the document with it instead (chunk.go).
//
// hotpotqa reads HotpotQA's distractor format (a JSON array, or one record a
// line) in any of three shapes seen in public copies: context and
// supporting_facts as JSON lists ([[title, [sentences]]], [[title, id]]), as
// Hugging Face dicts ({"title": [...], "sentences": [...]}), or as Python
// literals in strings. A passage is "title\n" + its sentences concatenated
// (HotpotQA's sentences carry their own leading spaces); a supporting fact
// is the sentence's span, trimmed of white space. Facts naming a sentence
// the context lacks (a known glitch of the data) are dropped and counted.
//
// 2wiki reads 2WikiMultihopQA, HotpotQA's format whose sentences carry no
// leading space (joined by one). musique reads MuSiQue's answerable format
// and derives sentence labels per hop (see convertMuSiQue). Any of them may
// come as a JSON array, JSON lines or pandas' column layout (jsonRows).
//
// squad reads SQuAD v1.1 / v2.0 JSON. Each question's passages are all the
// paragraphs of its article; its gold passage is the paragraph it was asked
// on, and its gold span is the sentence (chunk.SplitSentences) holding the
// first answer's start (more sentences if the answer runs across them).
// Unanswerable (v2.0) questions are skipped; --per-paragraph keeps the first
// N questions of each paragraph.
//
// Genres beyond encyclopedic prose, each record's genre set (dataset.Record.Genre),
// each question's passages its whole document's units in document order (regroup
// them with --order document):
//
//	go run ./internal/cmd/evidata friendsqa --in friendsqa_dev.json --out f.jsonl.gz   # dialogue: gold turns
//	go run ./internal/cmd/evidata qmsum     --in val.jsonl          --out q.jsonl.gz   # meeting: gold turn ranges
//	go run ./internal/cmd/evidata policyqa  --in dev.json           --out p.jsonl.gz   # policy: the answer's sentence
//	go run ./internal/cmd/evidata tatqa     --in tatqa_dev.json     --out t.jsonl.gz   # finance-table: gold rows, sentences
//	go run ./internal/cmd/evidata molweni   --in mrc_test.json      --out m.jsonl.gz   # chat: one multi-session log, gold turns (held out)
//
// policyqa reads PolicyQA, SQuAD's format over privacy policies, as squad
// does (passages: every segment of the policy). friendsqa, qmsum, tatqa and
// molweni are described at their converters (dialogue.go, table.go,
// molweni.go). molweni is a held-out report set: its questions fall in
// validation and test halves only (never train).
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/token"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "evidata:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: evidata hotpotqa|2wiki|musique|squad|policyqa|friendsqa|qmsum|tatqa|molweni --in FILE --out FILE.jsonl.gz [flags], evidata merge OUT IN..., evidata regroup --in X --out Y, evidata chunk --in X --out Y")
	}
	kind := args[0]
	if kind == "merge" {
		return merge(args[1:], stdout)
	}
	if kind == "regroup" {
		return regroup(args[1:], stdout)
	}
	if kind == "chunk" {
		return chunkDoc(args[1:], stdout)
	}
	if kind == "report" {
		return report(args[1:], stdout)
	}
	fs := flag.NewFlagSet("evidata "+kind, flag.ContinueOnError)
	in := fs.String("in", "", "raw source file")
	out := fs.String("out", "", "output .jsonl.gz")
	limit := fs.Int("limit", 0, "keep at most N questions (0 = all)")
	exclude := fs.String("exclude", "", "common-format files (comma-separated) whose questions (by id or text) are left out")
	perParagraph := fs.Int("per-paragraph", 2, "squad, policyqa: questions kept per paragraph")
	source := fs.String("source", "", "provenance written into each record's meta (repo · path · commit)")
	idPrefix := fs.String("id-prefix", "", "hotpotqa: for records without an id, this prefix and a hash of the question")
	idField := fs.String("id-field", "", "read each record's id from this field (a copy that renamed _id)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *in == "" || *out == "" {
		return errors.New("--in and --out are required")
	}
	raw, err := os.ReadFile(*in)
	if err != nil {
		return err
	}
	if raw, err = jsonRows(raw, *idField); err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	skip := map[string]bool{}
	for _, path := range strings.Split(*exclude, ",") {
		if path == "" {
			continue
		}
		recs, err := dataset.LoadFile(path)
		if err != nil {
			return err
		}
		for _, r := range recs {
			skip[r.ID] = true
			skip[questionKey(r.Question)] = true
		}
	}
	var recs []dataset.Record
	var notes []string
	switch kind {
	case "hotpotqa", "2wiki":
		recs, notes, err = convertHotpot(raw, skip, *source, *idPrefix, kind)
	case "musique":
		recs, notes, err = convertMuSiQue(raw, skip, *source)
	case "squad":
		recs, notes, err = convertSQuAD(raw, skip, *perParagraph, *source, "squad", "")
	case "policyqa":
		recs, notes, err = convertSQuAD(raw, skip, *perParagraph, *source, "policyqa", "policy")
	case "friendsqa":
		recs, notes, err = convertFriendsQA(raw, skip, *source)
	case "qmsum":
		recs, notes, err = convertQMSum(raw, skip, *source)
	case "tatqa":
		recs, notes, err = convertTATQA(raw, skip, *source)
	case "molweni":
		recs, notes, err = convertMolweni(raw, skip, *source)
	default:
		return fmt.Errorf("unknown source kind %q (want hotpotqa, 2wiki, musique, squad, policyqa, friendsqa, qmsum, tatqa or molweni)", kind)
	}
	if err != nil {
		return err
	}
	if *limit > 0 && len(recs) > *limit {
		recs = recs[:*limit]
	}
	if err := write(*out, recs); err != nil {
		return err
	}
	counts := map[dataset.Split]int{}
	spans := 0
	for _, r := range recs {
		counts[dataset.SplitOf(r.ID, 1)]++
		spans += r.SpanCount()
	}
	fmt.Fprintf(stdout, "%s: %d questions (%d train, %d validation, %d test at split seed 1), %d gold spans\n",
		*out, len(recs), counts[dataset.SplitTrain], counts[dataset.SplitValidation], counts[dataset.SplitTest], spans)
	for _, n := range notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	return nil
}

// merge concatenates converted files (ids must stay unique):
// evidata merge OUT IN...
func merge(args []string, stdout io.Writer) error {
	if len(args) < 2 {
		return errors.New("usage: evidata merge OUT.jsonl.gz IN.jsonl.gz...")
	}
	var all []dataset.Record
	for _, in := range args[1:] {
		recs, err := dataset.LoadFile(in)
		if err != nil {
			return err
		}
		all = append(all, recs...)
	}
	if err := write(args[0], all); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d questions\n", args[0], len(all))
	return nil
}

func regroup(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evidata regroup", flag.ContinueOnError)
	in := fs.String("in", "", "common-format file")
	out := fs.String("out", "", "output .jsonl.gz")
	size := fs.Int("tokens", 600, "chunk size in tokens")
	order := fs.String("order", "shuffle", "shuffle: passages in a seeded order per question (independent paragraphs); document: in the order given (turns, rows, sections, where order carries meaning)")
	sep := fs.String("sep", "\n\n", "what joins two passages in a chunk (\"\\n\" for one turn a line)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *order != "shuffle" && *order != "document" {
		return fmt.Errorf("--order %q: want shuffle or document", *order)
	}
	*sep = strings.ReplaceAll(*sep, `\n`, "\n")
	recs, tok, err := loadCounting(*in)
	if err != nil {
		return err
	}
	n := 0
	for ri, r := range recs {
		ps := slices.Clone(r.Passages)
		if *order == "shuffle" {
			sum := sha256.Sum256([]byte(r.ID))
			rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), 1))
			rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
		}
		var chunks []dataset.Passage
		cur, curTok := dataset.Passage{}, 0
		flush := func() {
			if cur.Text != "" {
				cur.ID = fmt.Sprintf("c%d", len(chunks))
				chunks = append(chunks, cur)
			}
			cur, curTok = dataset.Passage{}, 0
		}
		for _, p := range ps {
			t := tok.Count(p.Text)
			if cur.Text != "" && curTok+t > *size {
				flush()
			}
			off := 0
			if cur.Text != "" {
				cur.Text += *sep
				off = len(cur.Text)
			}
			cur.Text += p.Text
			curTok = tok.Count(cur.Text)
			cur.Gold = cur.Gold || p.Gold
			for _, g := range p.GoldSpans {
				cur.GoldSpans = append(cur.GoldSpans, [2]int{g[0] + off, g[1] + off})
			}
		}
		flush()
		recs[ri].Passages = chunks
		n += len(chunks)
	}
	if err := write(*out, recs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d questions, %.1f chunks of at most %d tokens each\n", *out, len(recs), float64(n)/float64(len(recs)), *size)
	return nil
}

// loadCounting reads a common-format file and the tokenizer that counts
// its chunks (cl100k_base).
func loadCounting(path string) ([]dataset.Record, *token.Tiktoken, error) {
	recs, err := dataset.LoadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--in: %w", err)
	}
	tok, err := token.New("")
	if err != nil {
		return nil, nil, fmt.Errorf("tokenizer: %w", err)
	}
	return recs, tok, nil
}

// write stores records as gzip JSONL and checks they load back.
func write(path string, recs []dataset.Record) error {
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(gz)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	if err := gz.Close(); err != nil {
		return err
	}
	if _, err := dataset.Load(bytes.NewReader(buf.Bytes())); err != nil {
		return fmt.Errorf("converted data does not load: %w", err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// hotRecord is one HotpotQA record; context and supporting_facts come in
// several shapes, decoded by hand.
type hotRecord struct {
	ID       string          `json:"_id"`
	AltID    string          `json:"id"` // the Hugging Face copies' name
	Question string          `json:"question"`
	Answer   string          `json:"answer"`
	Type     string          `json:"type"`
	Level    string          `json:"level"`
	Context  json.RawMessage `json:"context"`
	Facts    json.RawMessage `json:"supporting_facts"`
}

type paragraph struct {
	title string
	sents []string
}

// convertHotpot converts HotpotQA's distractor format; kind "2wiki" is
// 2WikiMultihopQA's copy of that format, whose sentences carry no leading
// space: a passage's sentences are then joined by one space.
func convertHotpot(raw []byte, skip map[string]bool, source, idPrefix, kind string) ([]dataset.Record, []string, error) {
	var hs []hotRecord
	if err := json.Unmarshal(raw, &hs); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", kind, err)
	}
	task := "hotpotqa"
	if kind == "2wiki" {
		task = "2wikimultihopqa"
	}
	var out []dataset.Record
	dropped, skipped, noGold, incomplete, noContext := 0, 0, 0, 0, 0
	for i, h := range hs {
		if h.ID == "" {
			h.ID = h.AltID
		}
		if h.ID == "" && idPrefix != "" {
			sum := sha256.Sum256([]byte(questionKey(h.Question)))
			h.ID = idPrefix + hex.EncodeToString(sum[:8])
		}
		if h.ID == "" {
			return nil, nil, fmt.Errorf("hotpotqa: record %d has no _id", i)
		}
		if skip[h.ID] || skip[questionKey(h.Question)] {
			skipped++
			continue
		}
		if len(h.Context) == 0 {
			noContext++
			continue
		}
		paras, err := hotContext(h.Context)
		if err != nil {
			return nil, nil, fmt.Errorf("hotpotqa %s: context: %w", h.ID, err)
		}
		facts, err := hotFacts(h.Facts)
		if err != nil {
			return nil, nil, fmt.Errorf("hotpotqa %s: supporting_facts: %w", h.ID, err)
		}
		rec := dataset.Record{ID: h.ID, Question: strings.TrimSpace(h.Question), Answers: []string{h.Answer}, Task: task}
		meta := map[string]string{"type": h.Type, "level": h.Level}
		if source != "" {
			meta["source"] = source
		}
		rec.Meta, _ = json.Marshal(meta)
		byTitle := map[string]int{}
		for pi, p := range paras {
			var b strings.Builder
			b.WriteString(p.title)
			b.WriteByte('\n')
			var starts []int
			for si, s := range p.sents {
				if kind == "2wiki" && si > 0 && !startsWithSpace(s) {
					b.WriteByte(' ')
				}
				starts = append(starts, b.Len())
				b.WriteString(s)
			}
			text := b.String()
			pass := dataset.Passage{ID: fmt.Sprintf("p%d", pi), Text: text}
			for _, f := range facts {
				if f.title != p.title {
					continue
				}
				if f.sent < 0 || f.sent >= len(p.sents) {
					dropped++
					continue
				}
				s, e := starts[f.sent], starts[f.sent]+len(p.sents[f.sent])
				s, e = trim(text, s, e)
				if e > s {
					pass.GoldSpans = append(pass.GoldSpans, [2]int{s, e})
					pass.Gold = true
				}
			}
			if _, dup := byTitle[p.title]; !dup {
				byTitle[p.title] = pi
			}
			rec.Passages = append(rec.Passages, pass)
		}
		if rec.SpanCount() == 0 {
			noGold++
			continue
		}
		if missing := missingTitles(facts, paras); len(missing) > 0 {
			incomplete++
			continue
		}
		out = append(out, rec)
	}
	notes := []string{fmt.Sprintf("%d records read, %d excluded (--exclude), %d without a context, %d without any usable fact and %d whose context lacks a supporting paragraph left out, %d facts naming a missing sentence dropped",
		len(hs), skipped, noContext, noGold, incomplete, dropped)}
	return out, notes, nil
}

// missingTitles lists the supporting facts' titles that no paragraph of
// the context has: such a record's context was altered (one public copy
// swaps gold paragraphs for others), so its evidence is incomplete.
func missingTitles(facts []fact, paras []paragraph) []string {
	have := map[string]bool{}
	for _, p := range paras {
		have[p.title] = true
	}
	var out []string
	for _, f := range facts {
		if !have[f.title] {
			out = append(out, f.title)
		}
	}
	return out
}

// questionKey identifies a question by its text, for --exclude against
// copies without ids.
func questionKey(q string) string {
	return "q:" + strings.Join(strings.Fields(strings.ToLower(q)), " ")
}

// trim narrows [s, e) of text to exclude white space at both ends.
func trim(text string, s, e int) (int, int) {
	for s < e {
		r, w := utf8.DecodeRuneInString(text[s:e])
		if !unicode.IsSpace(r) {
			break
		}
		s += w
	}
	for e > s {
		r, w := utf8.DecodeLastRuneInString(text[s:e])
		if !unicode.IsSpace(r) {
			break
		}
		e -= w
	}
	return s, e
}

type fact struct {
	title string
	sent  int
}

// literal decodes a JSON value, or a JSON string holding a Python literal.
func literal(raw json.RawMessage) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok {
		return parsePython(s)
	}
	return v, nil
}

func hotContext(raw json.RawMessage) ([]paragraph, error) {
	v, err := literal(raw)
	if err != nil {
		return nil, err
	}
	var out []paragraph
	switch c := v.(type) {
	case []any: // [[title, [sentences]], ...]
		for _, item := range c {
			pair, ok := item.([]any)
			if !ok || len(pair) != 2 {
				return nil, fmt.Errorf("want [title, sentences], got %T", item)
			}
			title, ok1 := pair[0].(string)
			sents, ok2 := strings_(pair[1])
			if !ok1 || !ok2 {
				return nil, errors.New("want [title, [sentences]]")
			}
			out = append(out, paragraph{title, sents})
		}
	case map[string]any: // {"title": [...], "sentences": [[...], ...]}
		titles, ok1 := strings_(c["title"])
		lists, ok2 := c["sentences"].([]any)
		if !ok1 || !ok2 || len(titles) != len(lists) {
			return nil, errors.New("want {title: [...], sentences: [[...]]} of one length")
		}
		for i, t := range titles {
			sents, ok := strings_(lists[i])
			if !ok {
				return nil, errors.New("sentences: want lists of strings")
			}
			out = append(out, paragraph{t, sents})
		}
	default:
		return nil, fmt.Errorf("unexpected %T", v)
	}
	return out, nil
}

func hotFacts(raw json.RawMessage) ([]fact, error) {
	v, err := literal(raw)
	if err != nil {
		return nil, err
	}
	var out []fact
	switch c := v.(type) {
	case []any: // [[title, id], ...]
		for _, item := range c {
			pair, ok := item.([]any)
			if !ok || len(pair) < 2 {
				return nil, fmt.Errorf("want [title, id], got %v", item)
			}
			t, ok1 := pair[0].(string)
			id, ok2 := pair[1].(float64)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("want [title, id], got %v", item)
			}
			out = append(out, fact{t, int(id)})
		}
	case map[string]any: // {"title": [...], "sent_id": [...]}
		titles, ok1 := strings_(c["title"])
		ids, ok2 := c["sent_id"].([]any)
		if !ok1 || !ok2 || len(titles) != len(ids) {
			return nil, errors.New("want {title: [...], sent_id: [...]} of one length")
		}
		for i, t := range titles {
			id, ok := ids[i].(float64)
			if !ok {
				return nil, errors.New("sent_id: want numbers")
			}
			out = append(out, fact{t, int(id)})
		}
	default:
		return nil, fmt.Errorf("unexpected %T", v)
	}
	return out, nil
}

func strings_(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, len(l))
	for i, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// squadQA is a question of a SQuAD-format file (SQuAD 2.0, Molweni): its
// answers' Start counts characters of the context it belongs to.
type squadQA struct {
	ID           string `json:"id"`
	Question     string `json:"question"`
	IsImpossible bool   `json:"is_impossible"`
	Answers      []struct {
		Text  string `json:"text"`
		Start int    `json:"answer_start"`
	} `json:"answers"`
}

type squadFile struct {
	Version string `json:"version"`
	Data    []struct {
		Title      string `json:"title"`
		Paragraphs []struct {
			Context string    `json:"context"`
			QAs     []squadQA `json:"qas"`
		} `json:"paragraphs"`
	} `json:"data"`
}

func convertSQuAD(raw []byte, skip map[string]bool, perParagraph int, source, task, genre string) ([]dataset.Record, []string, error) {
	var f squadFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", task, err)
	}
	var out []dataset.Record
	impossible, unlocated := 0, 0
	for _, art := range f.Data {
		var passages []dataset.Passage
		for pi, p := range art.Paragraphs {
			passages = append(passages, dataset.Passage{ID: fmt.Sprintf("p%d", pi), Text: p.Context})
		}
		for pi, p := range art.Paragraphs {
			kept := 0
			sents := chunk.SplitSentences(p.Context)
			for _, qa := range p.QAs {
				if kept >= perParagraph {
					break
				}
				if qa.IsImpossible || len(qa.Answers) == 0 {
					impossible++
					continue
				}
				if skip[qa.ID] {
					continue
				}
				a := qa.Answers[0]
				s, e, ok := answerBytes(p.Context, a.Start, a.Text)
				if !ok {
					unlocated++
					continue
				}
				var spans [][2]int
				for _, sp := range sents {
					if sp[0] < e && s < sp[1] {
						spans = append(spans, sp)
					}
				}
				if len(spans) == 0 {
					unlocated++
					continue
				}
				rec := dataset.Record{ID: qa.ID, Question: strings.TrimSpace(qa.Question), Task: task, Genre: genre}
				seen := map[string]bool{}
				for _, ans := range qa.Answers {
					if t := strings.TrimSpace(ans.Text); t != "" && !seen[t] {
						seen[t] = true
						rec.Answers = append(rec.Answers, t)
					}
				}
				meta := map[string]string{"title": art.Title, "version": f.Version}
				if source != "" {
					meta["source"] = source
				}
				rec.Meta, _ = json.Marshal(meta)
				rec.Passages = make([]dataset.Passage, len(passages))
				copy(rec.Passages, passages)
				rec.Passages[pi].Gold = true
				rec.Passages[pi].GoldSpans = spans
				out = append(out, rec)
				kept++
			}
		}
	}
	notes := []string{fmt.Sprintf("%d unanswerable questions skipped, %d answers not found at their offset skipped", impossible, unlocated)}
	return out, notes, nil
}

// answerBytes converts SQuAD's answer offset (in code points, as Python
// indexes str) into byte offsets, checking the answer text is there.
func answerBytes(text string, start int, answer string) (int, int, bool) {
	if start < 0 {
		return 0, 0, false
	}
	b, n := 0, 0
	for b < len(text) && n < start {
		_, w := utf8.DecodeRuneInString(text[b:])
		b += w
		n++
	}
	if n != start || !strings.HasPrefix(text[b:], answer) {
		return 0, 0, false
	}
	return b, b + len(answer), true
}
