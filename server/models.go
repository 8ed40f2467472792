package server

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/wire"
)

// /v1/models lists, in OpenAI's shape, the model names this server answers
// to, so a client can discover them instead of guessing:
//
//   - the embedding model of /v1/embeddings (its name, e.g. "use-lite"),
//     and each alias Config.EmbeddingAliases maps to it;
//   - one rerank "model" per strategy, "ctxsel-NAME" (what /v1/rerank's
//     "model" names; parameters go after a colon: "ctxsel-topk:k=5");
//   - one per text selector the server has the dependencies for, named
//     with its required parameters at their default values
//     ("ctxsel-evidence:budget=1500", the budget of ctxsel.DefaultStrategy).
//
// Each entry carries a "ctxsel" object saying what it is; a rerank entry
// also its "form" (the name with its parameters, "ctxsel-evidence:budget=N")
// and what it does. Any other rerank model name gets the default strategy
// (clients hard-code "rerank-english-v3.0"): the list's "ctxsel" says so. GET
// /v1/models/{model} returns one entry, or 404 in OpenAI's error shape.
// Listing never loads a lazily opened embedder.

// modelEntry is one entry of /v1/models.
type modelEntry struct {
	id, kind, aliasOf string
	form, doc         string // rerank entries
}

// embedModels settles the embedding names: the served model's and the
// aliases, each of which must name the served model. It refuses aliases
// without an embedder, and an alias that shadows the served name.
func embedModels(e embed.Embedder, aliases map[string]string) (served string, err error) {
	if e == nil {
		if len(aliases) > 0 {
			return "", fmt.Errorf("%w: config: embedding_aliases need an embedder (ctxsel serve --embedder use-lite)", ctxsel.ErrInvalidInput)
		}
		return "", nil
	}
	served = embed.ModelName(e)
	for alias, target := range aliases {
		if target != served {
			return "", fmt.Errorf("%w: config: embedding alias %s=%s: this server embeds with %q (--embedding-alias %s=%s)",
				ctxsel.ErrInvalidInput, alias, target, served, alias, served)
		}
		if alias == served {
			return "", fmt.Errorf("%w: config: embedding alias %s=%s maps the served model to itself", ctxsel.ErrInvalidInput, alias, target)
		}
		if strings.HasPrefix(alias, modelPrefix) {
			return "", fmt.Errorf("%w: config: embedding alias %s=%s: names beginning %q are rerank strategies", ctxsel.ErrInvalidInput, alias, target, modelPrefix)
		}
	}
	return served, nil
}

// models lists the served model names: the embedding model, its aliases
// (sorted), then the rerank strategies.
func (s *Server) models() []modelEntry {
	var out []modelEntry
	if s.embedder != nil {
		served := embed.ModelName(s.embedder)
		out = append(out, modelEntry{id: served, kind: "embedding"})
		aliases := make([]string, 0, len(s.cfg.EmbeddingAliases))
		for a := range s.cfg.EmbeddingAliases {
			aliases = append(aliases, a)
		}
		slices.Sort(aliases)
		for _, a := range aliases {
			out = append(out, modelEntry{id: a, kind: "embedding", aliasOf: served})
		}
	}
	for _, d := range ctxsel.Defs() {
		form := modelPrefix + d.Name
		if len(d.Params) > 0 {
			names := make([]string, len(d.Params))
			for i, p := range d.Params {
				names[i] = p.Name + "=N"
			}
			form += "[:" + strings.Join(names, ",") + "]"
		}
		out = append(out, modelEntry{id: modelPrefix + d.Name, kind: "rerank", form: form, doc: d.Doc})
	}
	if s.deps != nil {
		// The selectors a rerank can run: those this server has the
		// dependencies for (never the LLM picker: see resolveRerank).
		rv := ctxsel.Resolver{Kinds: ctxsel.SelectorKind, Deps: s.deps}
		for _, d := range ctxsel.SelectorDefs() {
			m, params := selectorModel(d)
			rv.Params = params
			if _, err := rv.Resolve(d.Name); err == nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// selectorModel is the entry of a text selector, named with its required
// parameters (at ctxsel.DefaultStrategy's values where that names this
// selector, else 1), and those parameters as values, which the entry is
// resolved with.
func selectorModel(d ctxsel.SelectorDef) (modelEntry, []ctxsel.Param) {
	defaults := map[string]float64{}
	if sp, err := ctxsel.ParseSpec(ctxsel.DefaultStrategy); err == nil && sp.Name == d.Name {
		defaults = sp.Params
	}
	sp := ctxsel.Spec{Name: d.Name, Params: map[string]float64{}}
	var form []string
	for _, p := range d.Params {
		if !p.Required {
			continue
		}
		v, ok := defaults[p.Name]
		if !ok {
			v = 1
		}
		sp.Params[p.Name] = v
		form = append(form, p.Name+"=N")
	}
	m := modelEntry{id: modelPrefix + sp.String(), kind: "rerank", form: modelPrefix + d.Name, doc: d.Doc}
	if len(form) > 0 {
		slices.Sort(form) // in the order of the id's, which Spec.String sorts
		m.form += ":" + strings.Join(form, ",")
	}
	params := make([]ctxsel.Param, 0, len(sp.Params))
	for _, k := range slices.Sorted(maps.Keys(sp.Params)) {
		params = append(params, ctxsel.ParamValue(k, sp.Params[k]))
	}
	return m, params
}

func appendModel(b []byte, m modelEntry) []byte {
	b = append(b, `{"id":`...)
	b = wire.AppendString(b, m.id)
	b = append(b, `,"object":"model","created":0,"owned_by":"ctxsel","ctxsel":{"kind":`...)
	b = wire.AppendString(b, m.kind)
	if m.aliasOf != "" {
		b = append(b, `,"alias_of":`...)
		b = wire.AppendString(b, m.aliasOf)
	}
	if m.form != "" {
		b = append(b, `,"form":`...)
		b = wire.AppendString(b, m.form)
		b = append(b, `,"doc":`...)
		b = wire.AppendString(b, m.doc)
	}
	return append(b, "}}"...)
}

// otherRerankModels is what the list says of rerank model names it does
// not list.
const otherRerankModels = "/v1/rerank and /v2/rerank also accept any model name that does not begin with \"ctxsel-\" (a client's default, such as rerank-english-v3.0) and rank it with the default strategy, " + ctxsel.DefaultSelectStrategy

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	ms := s.models()
	b := wire.AppendArray([]byte(`{"object":"list","data":`), len(ms), func(b []byte, i int) []byte { return appendModel(b, ms[i]) })
	b = append(b, `,"ctxsel":{"other_rerank_models":`...)
	b = wire.AppendString(b, otherRerankModels)
	writeJSON(w, http.StatusOK, append(b, "}}\n"...))
}

func (s *Server) handleModel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("model")
	for _, m := range s.models() {
		if m.id == id {
			writeJSON(w, http.StatusOK, append(appendModel(nil, m), '\n'))
			return
		}
	}
	writeError(w, http.StatusNotFound, "model", fmt.Sprintf("model %q is not served here (GET /v1/models lists what is)", id))
}

// checkEmbedModel accepts the model name of an embeddings request: empty,
// the served model's name or full ID, or an alias of it. Anything else is
// refused naming the served model and how to alias the name.
func (s *Server) checkEmbedModel(model string) error {
	m := strings.TrimSpace(model)
	if m == "" {
		return nil
	}
	served := embed.ModelName(s.embedder)
	if m == served {
		return nil
	}
	if _, ok := s.cfg.EmbeddingAliases[m]; ok {
		return nil
	}
	if m == s.embedder.ModelID() {
		return nil
	}
	if strings.HasPrefix(m, modelPrefix) {
		return wire.Bad("model", "%q names a rerank strategy (POST /v1/rerank or /v2/rerank): /v1/embeddings embeds with %q; send \"model\": %q or leave it out",
			m, served, served)
	}
	if strings.ContainsAny(m, "=, \t") || !utf8.ValidString(m) {
		// Not a name --embedding-alias NAME=MODEL can carry.
		return wire.Bad("model", "%q is not served here: this server embeds with %q (GET /v1/models lists what it serves); send \"model\": %q", m, served, served)
	}
	return wire.Bad("model", "%q is not served here: this server embeds with %q (GET /v1/models lists what it serves). "+
		"Send \"model\": %q, or map the name to it when starting the server: ctxsel serve --embedding-alias %s=%s (config key \"embedding_aliases\")",
		m, served, served, m, served)
}
