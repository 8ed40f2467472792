package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

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
//     "model" names; parameters go after a colon: "ctxsel-topk:k=5").
//
// Each entry carries a "ctxsel" object saying what it is. GET
// /v1/models/{model} returns one entry, or 404 in OpenAI's error shape.
// Listing never loads a lazily opened embedder.

// modelEntry is one entry of /v1/models.
type modelEntry struct {
	id, kind, aliasOf string
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
		out = append(out, modelEntry{id: modelPrefix + d.Name, kind: "rerank"})
	}
	return out
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
	return append(b, "}}"...)
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	ms := s.models()
	b := wire.AppendArray([]byte(`{"object":"list","data":`), len(ms), func(b []byte, i int) []byte { return appendModel(b, ms[i]) })
	writeJSON(w, http.StatusOK, append(b, "}\n"...))
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
	return wire.Bad("model", "%q is not served here: this server embeds with %q (GET /v1/models lists what it serves). "+
		"Send \"model\": %q, or map the name to it when starting the server: ctxsel serve --embedding-alias %s=%s (config key \"embedding_aliases\")",
		m, served, served, m, served)
}
