package server

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/wire"
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
	// returnEvidence asks for each selected document's evidence; a
	// positive evidenceBudget prunes the documents the strategy keeps to
	// their sentences within that many tokens (STRATEGY+evidence:budget=N).
	returnEvidence bool
	evidenceBudget int
	// maxTokensPerDoc truncates each document before ranking (0: the
	// default, defaultMaxTokensPerDoc; see doctruncate.go).
	maxTokensPerDoc int
	seen            uint16
}

// ignoredRerankFields are Cohere and Jina options with no meaning here
// (chunking, queue priority, Cohere v1's truncation direction); they are
// accepted so clients that always send them work.
var ignoredRerankFields = map[string]bool{
	"max_chunks_per_doc": true, "priority": true, "truncation": true,
}

// decodeRerank decodes a rerank body into r, enforcing the select limits.
func decodeRerank(body string, r *rerankRequest, lim limits) error {
	d := newDecoder(body)
	return d.Object(func(key string) error {
		if known, err := d.common(key, &r.commonRequest, lim); known {
			return err
		}
		if ignoredRerankFields[key] {
			return d.Skip(wire.Field(key), 0)
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
		case "return_evidence":
			bit = 64
		case "evidence_budget":
			bit = 128
		case "max_tokens_per_doc":
			bit = 256
		default:
			return wire.Bad(key, "unknown field (known: query, documents, top_n, return_documents, model, rank_fields, max_tokens_per_doc, "+
				"strategy, params, scoring, return_evidence, evidence_budget; ignored: max_chunks_per_doc, priority, truncation)")
		}
		read, err := d.Given(&r.seen, bit, key)
		if !read {
			return err
		}
		p := wire.Field(key)
		switch key {
		case "documents":
			err = d.rerankDocuments(r, lim)
		case "top_n":
			r.topN, err = d.Count(p)
			if err == nil && r.topN == 0 {
				err = wire.Bad(key, "must be at least 1")
			}
		case "return_documents":
			var v bool
			v, err = d.Bool(p)
			r.returnDocs = &v
		case "model":
			r.model, err = d.Str(p)
		case "scoring":
			r.scoring, err = d.Str(p)
		case "rank_fields":
			err = d.Strings(p, &r.rankFields)
		case "return_evidence":
			r.returnEvidence, err = d.Bool(p)
		case "evidence_budget":
			r.evidenceBudget, err = d.Count(p)
			if err == nil && r.evidenceBudget == 0 {
				err = wire.Bad(key, "must be at least 1")
			}
		case "max_tokens_per_doc":
			r.maxTokensPerDoc, err = d.Count(p)
			if err == nil && r.maxTokensPerDoc == 0 {
				err = wire.Bad(key, "must be at least 1")
			}
		}
		return err
	})
}

// rerankDocuments reads documents given as strings or as objects with a
// "text" (Cohere v1, Jina); an object's JSON is kept to echo back. A
// document's text is bounded by the body alone here: max_text_bytes
// applies after truncation (doctruncate.go).
func (d *decoder) rerankDocuments(r *rerankRequest, lim limits) error {
	if lim.body > 0 {
		lim.MaxText = int(min(lim.body, int64(wire.Unlimited.MaxText)))
	} else {
		lim.MaxText = wire.Unlimited.MaxText // a caller without a body bound (tests, a file)
	}
	return d.Array(wire.Field("documents"), func(int) error {
		i := len(r.docs)
		if i == lim.MaxCandidates {
			return wire.MoreThan(wire.Field("documents"), lim.MaxCandidates, "documents")
		}
		ep := wire.Path{Name: "documents", Idx: i}
		var text, raw string
		var err error
		d.Space()
		switch d.Peek() {
		case '"':
			text, err = d.Text(ep, lim.Limits)
		case '{':
			start := d.Pos()
			text, err = d.documentObject(ep, lim)
			raw = d.Since(start)
		default:
			err = d.TypeErr(ep, "a string or an object with a \"text\"")
		}
		if err != nil {
			return err
		}
		r.docs = append(r.docs, text)
		r.raw = append(r.raw, raw)
		return nil
	})
}

// documentObject reads {"text": ..., other fields} and returns the text
// ("" when absent: rank_fields may name others).
func (d *decoder) documentObject(p wire.Path, lim limits) (string, error) {
	if err := d.BeginObject(p); err != nil {
		return "", err
	}
	text := ""
	for first := true; ; {
		key, ok, err := d.NextKey(p, &first)
		if err != nil || !ok {
			return text, err
		}
		kp := wire.Path{Name: p.Name, Idx: p.Idx, Sub: key}
		if key == "text" {
			if text, err = d.Text(kp, lim.Limits); err != nil {
				return "", err
			}
			continue
		}
		if err := d.Skip(kp, 0); err != nil {
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
		return "", wire.Bad(fmt.Sprintf("documents[%d]", i), "%v", err)
	}
	var b strings.Builder
	for _, f := range r.rankFields {
		v, ok := obj[f]
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", wire.Bad(fmt.Sprintf("documents[%d].%s", i, f), "a rank field must be a string")
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
func (s *Server) resolveRerank(r *rerankRequest) (ctxsel.Resolved, string, error) {
	fromModel := false
	if name, ok := strings.CutPrefix(strings.TrimSpace(r.model), modelPrefix); ok {
		if r.strategy != "" {
			return ctxsel.Resolved{}, "", wire.Bad("strategy", "also named by model %q: give one", r.model)
		}
		r.strategy, fromModel = name, true
	}
	if o := strings.TrimSpace(r.order); o != "" && o != "rank" {
		return ctxsel.Resolved{}, "", wire.Bad("order", "rerank results are always in rank order")
	}
	// The text selectors a rerank may name are the registered kinds the
	// server has dependencies for (the evidence selector), never the
	// configured LLM picker: a rerank is not the place for LLM calls.
	rv := ctxsel.Resolver{Kinds: ctxsel.StrategyKind | ctxsel.SelectorKind, Deps: s.deps}
	if r.evidenceBudget > 0 {
		if s.deps == nil {
			return ctxsel.Resolved{}, "", wire.Bad("evidence_budget", "this server has no evidence selector (its sentence embedder comes with the server's selector dependencies, which ctxsel serve supplies)")
		}
		// The strategy's documents, pruned to their sentences.
		rv.Then = &ctxsel.Spec{Name: "evidence", Params: map[string]float64{"budget": float64(r.evidenceBudget)}}
	}
	how, err := s.resolveWith(&r.commonRequest, ctxsel.DefaultSelectStrategy, rv)
	if err != nil {
		if fe, ok := err.(*wire.FieldError); ok && fromModel && fe.Field() == "strategy" {
			fe.Path = wire.Field("model")
		}
		return ctxsel.Resolved{}, "", err
	}
	res := how.res
	if run := res.Runnable(); r.returnEvidence && (run == nil || !run.ReadsTexts()) {
		return ctxsel.Resolved{}, "", wire.Bad("return_evidence", "%s keeps whole documents: name a selector that prunes them (model ctxsel-evidence:budget=500, or strategy topk:k=30+evidence:budget=500) or give evidence_budget", res.Spec)
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
			return ctxsel.Resolved{}, "", wire.Bad("scoring", "%q needs an embedder, and this server was started with --embedder none: use \"bm25\"", scoring)
		}
	case scoringBM25:
	default:
		return ctxsel.Resolved{}, "", wire.Bad("scoring", "unknown %q (known: dense, hybrid, bm25)", scoring)
	}
	return res, scoring, nil
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
// similarity /v1/select gives candidates sent as text, with its errors (a
// 400 for a query that embeds to zero, a 502 for the embedder's own
// failure).
type denseScorer struct{ s *Server }

func (d denseScorer) Name() string { return scoringDense }

func (d denseScorer) Score(ctx context.Context, query string, texts []string) ([]float64, error) {
	return d.s.embedScores(ctx, query, texts)
}

func (s *Server) handleRerank(w http.ResponseWriter, r *http.Request) {
	version := "1"
	if strings.HasPrefix(r.URL.Path, "/v2/") {
		version = "2"
	}
	s.runOp(w, r, func(ctx context.Context, body string, dst []byte) ([]byte, error) {
		b, scoring, err := s.rerank(ctx, body, version, dst)
		if err == nil {
			// The scoring, also in the body's "ctxsel", for clients that
			// keep only the standard fields but expose headers (Vercel's
			// rerank()).
			w.Header().Set("X-Ctxsel-Scoring", scoring)
		}
		return b, err
	})
}

// rerank decodes a rerank body, scores the documents, selects and appends
// the response in the rerank wire format of API version ("1" or "2");
// scoring is the scoring mode used.
func (s *Server) rerank(ctx context.Context, body, version string, b []byte) (_ []byte, scoring string, _ error) {
	var req rerankRequest
	if err := decodeRerank(body, &req, s.limits()); err != nil {
		return nil, "", err
	}
	// Jina returns the documents unless told not to, and its clients read
	// them; Cohere v1 clients ignore the optional field either way. Cohere
	// v2 never returns them, so /v2 keeps its responses small.
	returnDocs := version == "1"
	if req.returnDocs != nil {
		returnDocs = *req.returnDocs
	}
	how, scoring, err := s.resolveRerank(&req)
	if err != nil {
		return nil, "", err
	}
	if strings.TrimSpace(req.query) == "" {
		return nil, "", wire.Bad("query", "missing: the documents are ranked against it")
	}
	if len(req.docs) == 0 {
		return nil, "", wire.Bad("documents", "no documents: give at least one string or {\"text\": ...}")
	}
	texts := make([]string, len(req.docs))
	for i := range texts {
		if texts[i], err = req.rankText(i); err != nil {
			return nil, "", err
		}
		if strings.TrimSpace(texts[i]) == "" {
			// Scored as empty, it would rank as unrelated without a word
			// of why: refuse it, naming the document.
			msg := "no text to rank: give a non-empty string or an object with a \"text\""
			if len(req.rankFields) > 0 {
				msg = "no text to rank: none of rank_fields (" + strings.Join(req.rankFields, ", ") + ") holds any"
			}
			return nil, "", wire.Bad(fmt.Sprintf("documents[%d]", i), "%s", msg)
		}
	}
	counter, err := s.tokenCounter()
	if err != nil {
		return nil, "", err
	}
	maxTokens := cmp.Or(req.maxTokensPerDoc, defaultMaxTokensPerDoc)
	cut, err := truncateDocs(counter, texts, maxTokens, s.cfg.MaxTextBytes)
	if err != nil {
		return nil, "", err
	}
	scores, err := s.rerankScores(ctx, req.query, texts, scoring)
	if err != nil {
		return nil, "", err
	}
	cands := make([]ctxsel.Candidate, len(texts))
	for i, t := range texts {
		cands[i] = ctxsel.Candidate{ID: strconv.Itoa(i), Score: scores[i], Tokens: counter.Count(strings.Clone(t))}
	}
	res, err := s.rerankSelect(ctx, req, cands, texts, how)
	if err != nil {
		return nil, "", err
	}
	s.metrics.selection(res.Sel.K, res.Sel.Tokens)

	model := req.model
	if model == "" {
		model = modelPrefix + how.Spec
	}
	b = append(b, `{"id":`...)
	b = wire.AppendString(b, RequestID(ctx))
	b = append(b, `,"model":`...)
	b = wire.AppendString(b, model)
	b = append(b, `,"results":`...)
	b = wire.AppendArray(b, len(res.Sel.Indices), func(b []byte, i int) []byte {
		idx := res.Sel.Indices[i]
		b = append(b, `{"index":`...)
		b = wire.AppendInt(b, idx)
		b = append(b, `,"relevance_score":`...)
		b = wire.AppendFloat(b, res.Score(i))
		if req.returnEvidence {
			b = append(b, `,"evidence":`...)
			b = wire.AppendEvidence(b, &res.Sel.Evidence[i])
		}
		if returnDocs {
			b = append(b, `,"document":`...)
			if raw := req.raw[idx]; raw != "" {
				// Validated JSON, echoed as Cohere does; invalid UTF-8 can
				// only sit inside its strings, where U+FFFD keeps it valid.
				b = append(b, strings.ToValidUTF8(raw, "\uFFFD")...)
			} else {
				b = append(b, `{"text":`...)
				b = wire.AppendString(b, req.docs[idx])
				b = append(b, '}')
			}
		}
		return append(b, '}')
	})
	b = append(b, `,"meta":{"api_version":{"version":`...)
	b = wire.AppendString(b, version)
	b = append(b, `},"billed_units":{"search_units":1}`...)
	if len(cut) > 0 {
		b = append(b, `,"warnings":[`...)
		b = wire.AppendString(b, truncationWarning(cut, maxTokens))
		b = append(b, ']')
	}
	b = append(b, `},"usage":{"total_tokens":`...)
	b = wire.AppendInt(b, res.TotalTokens)
	b = append(b, `},"ctxsel":{"k":`...)
	b = wire.AppendInt(b, res.Sel.K)
	b = append(b, `,"n":`...)
	b = wire.AppendInt(b, len(cands))
	b = append(b, `,"strategy":`...)
	b = wire.AppendString(b, how.Spec)
	b = append(b, `,"scoring":`...)
	b = wire.AppendString(b, scoring)
	b = append(b, `,"reason":`...)
	b = wire.AppendString(b, res.Sel.Explanation.Reason)
	b = append(b, `,"tokens":`...)
	b = wire.AppendInt(b, res.Sel.Tokens)
	b = append(b, `,"explanation":`...)
	b = wire.AppendExplanation(b, res.Sel.Explanation, res.Sorted, s.cfg.MaxCurvePoints)
	return append(b, "}}\n"...), scoring, nil
}

// rerankSelect selects the documents with what the request resolved to:
// a strategy over the scores, or a text selector (the evidence selector,
// alone or after a strategy) that reads the query and the texts ranked.
// top_n caps how many documents either keeps (below a strategy's min_k
// too). The results come in rank order whatever order the selector kept,
// each with its evidence.
func (s *Server) rerankSelect(ctx context.Context, req rerankRequest, cands []ctxsel.Candidate, texts []string, how ctxsel.Resolved) (wire.Selected, error) {
	run := how.Runnable()
	if run == nil {
		return wire.Selected{}, fmt.Errorf("rerank: %s does not select on its own", how.Spec)
	}
	curve, err := newCurve(cands)
	if err != nil {
		return wire.Selected{}, err
	}
	tq := ctxsel.TextQuery{Curve: curve, Order: ctxsel.RankOrder, Caps: ctxsel.Caps{MaxK: req.topN}}
	if run.ReadsTexts() {
		for i, t := range texts {
			texts[i] = strings.Clone(t) // a selector may keep what it reads
		}
		tq.Question, tq.Texts = strings.Clone(req.query), texts
	}
	sel, err := s.runSelector(ctx, run, tq)
	if err != nil {
		return wire.Selected{}, err
	}
	if req.returnEvidence && len(sel.Evidence) != len(sel.Indices) {
		return wire.Selected{}, wire.Bad("return_evidence", "%s keeps whole documents: name a selector that prunes them (model ctxsel-evidence:budget=500)", how.Spec)
	}
	byRank(curve, &sel)
	return selectedOf(curve, sel, nil), nil
}

// byRank puts a selection in the curve's rank order, its ids and evidence
// with it.
func byRank(curve *ctxsel.Curve, sel *ctxsel.Selection) {
	rank := make([]int, curve.Len())
	for r, i := range curve.Top(curve.Len()) {
		rank[i] = r
	}
	order := make([]int, len(sel.Indices))
	for j := range order {
		order[j] = j
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(rank[sel.Indices[a]], rank[sel.Indices[b]]) })
	ids, idx := make([]string, len(order)), make([]int, len(order))
	var ev []ctxsel.Evidence
	if sel.Evidence != nil {
		ev = make([]ctxsel.Evidence, len(order))
	}
	for j, o := range order {
		ids[j], idx[j] = sel.IDs[o], sel.Indices[o]
		if ev != nil {
			ev[j] = sel.Evidence[o]
		}
	}
	sel.IDs, sel.Indices, sel.Evidence = ids, idx, ev
}
