package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/score"
)

// /v1/rerank (and /v2/rerank) speak the rerank wire format that Cohere's v1
// and v2 APIs and Jina's share, so LangChain, LlamaIndex, Haystack and
// LiteLLM rerank components work unchanged. The difference from a reranker
// is the point: only the documents the strategy selects come back, and
// "ctxsel" says how many and why.
//
// The strategy is named by "model" ("ctxsel-adaptivek", "ctxsel-topk", ...)
// or by the extension field "strategy" (a spec string); any other model name
// (clients often hard-code "rerank-english-v3.0") gets the default strategy.
// top_n caps max_k.

// modelPrefix marks a model name that names a strategy.
const modelPrefix = "ctxsel-"

// Scoring modes of a rerank request.
const (
	scoringDense  = "dense"  // cosine of the embedded model
	scoringHybrid = "hybrid" // z-score fusion of dense and BM25 over the given documents
	scoringBM25   = "bm25"   // BM25 over the given documents alone
)

// defaultRerankScoring is what a rerank request without "scoring" gets when
// an embedder is configured. Dense, not hybrid: on HotpotQA dev (500
// questions, their own ~10 passages each, USE-Lite) hybrid ranks better at
// every fixed k (top-2 recall 0.68 vs 0.47), but the default strategy,
// adaptivek, cuts the fused curve earlier and the recall of what it selects
// falls from 0.969 to 0.948 (paired −0.021 ± 0.007, k 8.75 → 7.24). A
// caller who wants the better ranking asks for "scoring": "hybrid".
const defaultRerankScoring = scoringDense

type rerankRequest struct {
	commonRequest
	model      string
	docs       []string // the text each document is scored on
	raw        []string // the JSON of object documents, "" for strings
	topN       int
	returnDocs *bool // nil: the endpoint's default (see handleRerank)
	rankFields []string
	scoring    string
	seen       uint16
}

// ignoredRerankFields are Cohere and Jina options with no meaning here
// (chunking, truncation, queue priority); they are accepted so clients that
// always send them work.
var ignoredRerankFields = map[string]bool{
	"max_chunks_per_doc": true, "max_tokens_per_doc": true, "priority": true, "truncation": true,
}

// decodeRerank decodes a rerank body into r, enforcing the select limits.
func decodeRerank(body string, r *rerankRequest, lim limits) error {
	d := decoder{s: body}
	return d.object(func(key string) error {
		if known, err := d.common(key, &r.commonRequest, lim); known {
			return err
		}
		if ignoredRerankFields[key] {
			return d.skip(top(key), 0)
		}
		var bit uint16
		switch key {
		case "documents":
			bit = 1
		case "top_n":
			bit = 2
		case "return_documents":
			bit = 4
		case "model":
			bit = 8
		case "rank_fields":
			bit = 16
		case "scoring":
			bit = 32
		default:
			return badField(key, "unknown field (known: query, documents, top_n, return_documents, model, rank_fields, "+
				"strategy, params, scoring; ignored: max_chunks_per_doc, max_tokens_per_doc, priority, truncation)")
		}
		read, err := d.given(&r.seen, bit, key)
		if !read {
			return err
		}
		p := top(key)
		switch key {
		case "documents":
			err = d.rerankDocuments(r, lim)
		case "top_n":
			r.topN, err = d.count(p)
			if err == nil && r.topN == 0 {
				err = badField(key, "must be at least 1")
			}
		case "return_documents":
			var v bool
			v, err = d.boolean(p)
			r.returnDocs = &v
		case "model":
			r.model, err = d.str(p)
		case "scoring":
			r.scoring, err = d.str(p)
		case "rank_fields":
			err = d.strings(p, &r.rankFields)
		}
		return err
	})
}

func (d *decoder) boolean(p fpath) (bool, error) {
	d.ws()
	switch d.peek() {
	case 't':
		return true, d.literal(p, "true")
	case 'f':
		return false, d.literal(p, "false")
	}
	return false, d.typeErr(p, "a boolean")
}

func (d *decoder) strings(p fpath, dst *[]string) error {
	if err := d.beginArray(p); err != nil {
		return err
	}
	for first := true; ; {
		ok, err := d.nextElem(p, &first)
		if err != nil || !ok {
			return err
		}
		if len(*dst) == 64 {
			return badField(p.String(), "more than 64 names")
		}
		s, err := d.str(fpath{name: p.name, idx: len(*dst)})
		if err != nil {
			return err
		}
		*dst = append(*dst, s)
	}
}

// rerankDocuments reads documents given as strings or as objects with a
// "text" (Cohere v1, Jina); an object's JSON is kept to echo back.
func (d *decoder) rerankDocuments(r *rerankRequest, lim limits) error {
	p := top("documents")
	if err := d.beginArray(p); err != nil {
		return err
	}
	for first := true; ; {
		ok, err := d.nextElem(p, &first)
		if err != nil || !ok {
			return err
		}
		i := len(r.docs)
		if i == lim.maxCandidates {
			return &fieldError{Status: 413, Field: "documents", Msg: fmt.Sprintf("more than %d documents", lim.maxCandidates)}
		}
		ep := fpath{name: "documents", idx: i}
		var text, raw string
		d.ws()
		switch d.peek() {
		case '"':
			text, err = d.text(ep, lim)
		case '{':
			start := d.pos
			text, err = d.documentObject(ep, lim)
			raw = d.s[start:d.pos]
		default:
			err = d.typeErr(ep, "a string or an object with a \"text\"")
		}
		if err != nil {
			return err
		}
		r.docs = append(r.docs, text)
		r.raw = append(r.raw, raw)
	}
}

// documentObject reads {"text": ..., other fields} and returns the text
// ("" when absent: rank_fields may name others).
func (d *decoder) documentObject(p fpath, lim limits) (string, error) {
	if err := d.beginObject(p); err != nil {
		return "", err
	}
	text := ""
	for first := true; ; {
		key, ok, err := d.nextKey(p, &first)
		if err != nil || !ok {
			return text, err
		}
		kp := fpath{name: p.name, idx: p.idx, sub: key}
		if key == "text" {
			if text, err = d.text(kp, lim); err != nil {
				return "", err
			}
			continue
		}
		if err := d.skip(kp, 0); err != nil {
			return "", err
		}
	}
}

// rankText builds the text of object document i from rank_fields, in their
// order, as "field: value" lines (Cohere's rank_fields).
func (r *rerankRequest) rankText(i int) (string, error) {
	if len(r.rankFields) == 0 || r.raw[i] == "" {
		return r.docs[i], nil
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(r.raw[i]), &obj); err != nil {
		return "", badField(fmt.Sprintf("documents[%d]", i), "%v", err)
	}
	var b strings.Builder
	for _, f := range r.rankFields {
		v, ok := obj[f]
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", badField(fmt.Sprintf("documents[%d].%s", i, f), "a rank field must be a string")
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f + ": " + s)
	}
	return b.String(), nil
}

// resolveRerank settles the strategy (from "strategy" or "model"), applies
// top_n as a max_k cap and picks the scoring mode.
func (s *Server) resolveRerank(r *rerankRequest) (ctxsel.Strategy, ctxsel.Caps, string, string, error) {
	fromModel := false
	if name, ok := strings.CutPrefix(strings.TrimSpace(r.model), modelPrefix); ok {
		if r.strategy != "" {
			return nil, ctxsel.Caps{}, "", "", badField("strategy", "also named by model %q: give one", r.model)
		}
		r.strategy, fromModel = name, true
	}
	if o := strings.TrimSpace(r.order); o != "" && o != "rank" {
		return nil, ctxsel.Caps{}, "", "", badField("order", "rerank results are always in rank order")
	}
	how, err := s.resolveRequest(&r.commonRequest, ctxsel.DefaultSelectStrategy, ctxsel.StrategyKind)
	st, caps, spec := how.st, how.caps, how.spec
	if err != nil {
		if fe, ok := err.(*fieldError); ok && fromModel && fe.Field == "strategy" {
			fe.Field = "model"
		}
		return nil, ctxsel.Caps{}, "", "", err
	}
	if r.topN > 0 {
		if caps.MaxK == 0 || r.topN < caps.MaxK {
			caps.MaxK = r.topN
		}
		caps.MinK = min(caps.MinK, caps.MaxK)
	}
	scoring := strings.TrimSpace(r.scoring)
	switch scoring {
	case "":
		scoring = defaultRerankScoring
		if s.embedder == nil {
			scoring = scoringBM25 // the only scorer this server has
		}
	case scoringDense, scoringHybrid:
		if s.embedder == nil {
			return nil, ctxsel.Caps{}, "", "", badField("scoring", "%q needs an embedder, and this server was started with --embedder none: use \"bm25\"", scoring)
		}
	case scoringBM25:
	default:
		return nil, ctxsel.Caps{}, "", "", badField("scoring", "unknown %q (known: dense, hybrid, bm25)", scoring)
	}
	return st, caps, spec, scoring, nil
}

// rerankScores scores texts against query by the scoring mode: the
// embedder's cosine (dense), BM25 over the documents, or the module's one
// hybrid of the two (score.Hybrid, the default fusion).
func (s *Server) rerankScores(ctx context.Context, query string, texts []string, scoring string) ([]float64, error) {
	var sc score.Scorer
	switch scoring {
	case scoringDense:
		sc = denseScorer{s}
	case scoringBM25:
		sc = &score.BM25{}
	default:
		sc = &score.Hybrid{Dense: denseScorer{s}, Lexical: &score.BM25{}, Method: score.DefaultMethod, Alpha: score.DefaultAlpha}
	}
	scores, err := sc.Score(ctx, query, texts)
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	return scores, nil
}

// denseScorer is the server's embedder as a score.Scorer: the cosine
// similarity /v1/select gives candidates sent as text (textScores), with
// its errors (a 400 for a query that embeds to zero, a 502 for the
// embedder's own failure).
type denseScorer struct{ s *Server }

func (d denseScorer) Name() string { return scoringDense }

func (d denseScorer) Score(ctx context.Context, query string, texts []string) ([]float64, error) {
	sreq := getSelectRequest()
	defer putSelectRequest(sreq)
	sreq.query = query
	for i, t := range texts {
		sreq.cands = append(sreq.cands, ctxsel.Candidate{ID: strconv.Itoa(i)})
		sreq.texts = append(sreq.texts, t)
	}
	if err := d.s.textScores(ctx, sreq); err != nil {
		return nil, err
	}
	out := make([]float64, len(texts))
	for i := range out {
		out[i] = sreq.cands[i].Score
	}
	return out, nil
}

func (s *Server) handleRerank(w http.ResponseWriter, r *http.Request) {
	version := "1"
	if strings.HasPrefix(r.URL.Path, "/v2/") {
		version = "2"
	}
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	var req rerankRequest
	if err := decodeRerank(body, &req, s.limits()); err != nil {
		s.writeFailure(w, r, err)
		return
	}
	// Jina returns the documents unless told not to, and its clients read
	// them; Cohere v1 clients ignore the optional field either way. Cohere
	// v2 never returns them, so /v2 keeps its responses small.
	returnDocs := version == "1"
	if req.returnDocs != nil {
		returnDocs = *req.returnDocs
	}
	st, caps, spec, scoring, err := s.resolveRerank(&req)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	if strings.TrimSpace(req.query) == "" {
		s.writeFailure(w, r, badField("query", "missing: the documents are ranked against it"))
		return
	}
	if len(req.docs) == 0 {
		s.writeFailure(w, r, badField("documents", "no documents: give at least one string or {\"text\": ...}"))
		return
	}
	texts := make([]string, len(req.docs))
	for i := range texts {
		if texts[i], err = req.rankText(i); err != nil {
			s.writeFailure(w, r, err)
			return
		}
		if strings.TrimSpace(texts[i]) == "" {
			// Scored as empty, it would rank as unrelated without a word
			// of why: refuse it, naming the document.
			msg := "no text to rank: give a non-empty string or an object with a \"text\""
			if len(req.rankFields) > 0 {
				msg = "no text to rank: none of rank_fields (" + strings.Join(req.rankFields, ", ") + ") holds any"
			}
			s.writeFailure(w, r, badField(fmt.Sprintf("documents[%d]", i), "%s", msg))
			return
		}
	}
	scores, err := s.rerankScores(r.Context(), req.query, texts, scoring)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	counter, err := s.tokenCounter()
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	cands := make([]ctxsel.Candidate, len(texts))
	for i, t := range texts {
		cands[i] = ctxsel.Candidate{ID: strconv.Itoa(i), Score: scores[i], Tokens: counter.Count(strings.Clone(t))}
	}
	res, err := selectCandidates(cands, st, caps, ctxsel.RankOrder, nil)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	s.metrics.selection(res.sel.K, res.sel.Tokens)

	model := req.model
	if model == "" {
		model = modelPrefix + spec
	}
	bp := getBuf()
	defer putBuf(bp)
	b := append((*bp)[:0], `{"id":`...)
	b = appendString(b, RequestID(r.Context()))
	b = append(b, `,"model":`...)
	b = appendString(b, model)
	b = append(b, `,"results":[`...)
	for i, idx := range res.sel.Indices {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = appendInt(b, idx)
		b = append(b, `,"relevance_score":`...)
		b = appendFloat(b, res.score(i))
		if returnDocs {
			b = append(b, `,"document":`...)
			if raw := req.raw[idx]; raw != "" {
				// Validated JSON, echoed as Cohere does; invalid UTF-8 can
				// only sit inside its strings, where U+FFFD keeps it valid.
				b = append(b, strings.ToValidUTF8(raw, "\uFFFD")...)
			} else {
				b = append(b, `{"text":`...)
				b = appendString(b, req.docs[idx])
				b = append(b, '}')
			}
		}
		b = append(b, '}')
	}
	b = append(b, `],"meta":{"api_version":{"version":`...)
	b = appendString(b, version)
	b = append(b, `},"billed_units":{"search_units":1}},"usage":{"total_tokens":`...)
	b = appendInt(b, res.totalTokens)
	b = append(b, `},"ctxsel":{"k":`...)
	b = appendInt(b, res.sel.K)
	b = append(b, `,"n":`...)
	b = appendInt(b, len(cands))
	b = append(b, `,"strategy":`...)
	b = appendString(b, spec)
	b = append(b, `,"scoring":`...)
	b = appendString(b, scoring)
	b = append(b, `,"reason":`...)
	b = appendString(b, res.sel.Explanation.Reason)
	b = append(b, `,"tokens":`...)
	b = appendInt(b, res.sel.Tokens)
	b = append(b, `,"explanation":`...)
	b = s.appendExplanation(b, res.sel.Explanation, res.sorted)
	b = append(b, "}}\n"...)
	*bp = b
	// The scoring, also in the body's "ctxsel", for clients that keep only
	// the standard fields but expose headers (Vercel's rerank()).
	w.Header().Set("X-Ctxsel-Scoring", scoring)
	writeJSON(w, http.StatusOK, b)
}
