package server

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
)

type modelList struct {
	Object string `json:"object"`
	Data   []struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		OwnedBy string `json:"owned_by"`
		Ctxsel  struct {
			Kind    string `json:"kind"`
			AliasOf string `json:"alias_of"`
		} `json:"ctxsel"`
	} `json:"data"`
}

// lazyCounting is an embed.Lazy over fakeEmbedder that counts its opens.
func lazyCounting(opens *atomic.Int32) *embed.Lazy {
	return embed.NewLazy("fake-letters", func() (embed.Embedder, func() error, error) {
		opens.Add(1)
		return fakeEmbedder{}, nil, nil
	})
}

func TestModelsListsWhatIsServed(t *testing.T) {
	var opens atomic.Int32
	s := newTestServer(t, func(c *Config) {
		c.EmbeddingAliases = map[string]string{"text-embedding-ada-002": "fake-letters", "text-embedding-3-small": "fake-letters"}
	}, Options{Embedder: lazyCounting(&opens)})
	rec := call(t, s, "GET", "/v1/models", "")
	var l modelList
	if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || rec.Code != 200 || l.Object != "list" {
		t.Fatalf("%d %v %s", rec.Code, err, rec.Body)
	}
	got := map[string]string{}
	for _, m := range l.Data {
		if m.Object != "model" || m.OwnedBy != "ctxsel" {
			t.Errorf("entry %+v", m)
		}
		got[m.ID] = m.Ctxsel.Kind + ":" + m.Ctxsel.AliasOf
	}
	for id, want := range map[string]string{
		"fake-letters": "embedding:", "text-embedding-ada-002": "embedding:fake-letters", "text-embedding-3-small": "embedding:fake-letters",
		"ctxsel-adaptivek": "rerank:", "ctxsel-topk": "rerank:",
	} {
		if got[id] != want {
			t.Errorf("%s: %q, want %q", id, got[id], want)
		}
	}
	if len(l.Data) != 3+len(ctxsel.Defs()) {
		t.Errorf("%d entries, want the model, 2 aliases and %d strategies", len(l.Data), len(ctxsel.Defs()))
	}
	if opens.Load() != 0 {
		t.Errorf("listing the models opened the embedder")
	}
	// One entry, and a 404 naming the model.
	if rec := call(t, s, "GET", "/v1/models/text-embedding-ada-002", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"alias_of":"fake-letters"`) {
		t.Errorf("retrieve alias: %d %s", rec.Code, rec.Body)
	}
	if rec := call(t, s, "GET", "/v1/models/gpt-4o", ""); rec.Code != 404 || !strings.Contains(rec.Body.String(), `gpt-4o`) {
		t.Errorf("retrieve unknown: %d %s", rec.Code, rec.Body)
	}
	// Without an embedder: only the rerank models.
	rec = call(t, newTestServer(t, nil, Options{}), "GET", "/v1/models", "")
	l = modelList{}
	_ = json.Unmarshal(rec.Body.Bytes(), &l)
	if len(l.Data) != len(ctxsel.Defs()) || l.Data[0].Ctxsel.Kind != "rerank" {
		t.Errorf("no embedder: %s", rec.Body)
	}
}

func TestEmbeddingAliases(t *testing.T) {
	var opens atomic.Int32
	s := newTestServer(t, func(c *Config) { c.EmbeddingAliases = map[string]string{"text-embedding-ada-002": "fake-letters"} },
		Options{Embedder: lazyCounting(&opens)})
	for _, model := range []string{"", "fake-letters", "text-embedding-ada-002"} {
		rec := call(t, s, "POST", "/v1/embeddings", `{"input":["abc"],"model":"`+model+`"}`)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"model":"fake-letters"`) {
			t.Errorf("model %q: %d %s", model, rec.Code, rec.Body)
		}
	}
	if opens.Load() != 1 {
		t.Errorf("the lazy embedder opened %d times, want once", opens.Load())
	}
	// Without an alias: a 400 naming the served model and the flag.
	rec := call(t, s, "POST", "/v1/embeddings", `{"input":["abc"],"model":"text-embedding-3-large"}`)
	var e struct {
		Error struct{ Field, Message string }
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &e)
	if rec.Code != 400 || e.Error.Field != "model" || !strings.Contains(e.Error.Message, `"fake-letters"`) ||
		!strings.Contains(e.Error.Message, "--embedding-alias text-embedding-3-large=fake-letters") || !strings.Contains(e.Error.Message, "embedding_aliases") {
		t.Errorf("unaliased name: %d %s", rec.Code, rec.Body)
	}
	// Aliases are checked at start.
	for _, tc := range []struct {
		aliases map[string]string
		emb     embed.Embedder
		inErr   string
	}{
		{map[string]string{"ada": "other-model"}, fakeEmbedder{}, `embeds with "fake-letters"`},
		{map[string]string{"fake-letters": "fake-letters"}, fakeEmbedder{}, "to itself"},
		{map[string]string{"ada": "fake-letters"}, nil, "need an embedder"},
		{map[string]string{" ada": "fake-letters"}, fakeEmbedder{}, "no surrounding spaces"},
	} {
		cfg := DefaultConfig()
		cfg.EmbeddingAliases = tc.aliases
		_, err := New(cfg, Options{Embedder: tc.emb})
		if err == nil || !errors.Is(err, ctxsel.ErrInvalidInput) || !strings.Contains(err.Error(), tc.inErr) {
			t.Errorf("aliases %v: %v, want an error mentioning %q", tc.aliases, err, tc.inErr)
		}
	}
}

// queryFake embeds queries apart from passages, as an embedder with
// instruction prefixes does: a query's vector is the passage vector with
// its last component set to 100.
type queryFake struct{ fakeEmbedder }

func (q queryFake) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := q.Embed(ctx, texts)
	for _, v := range vecs {
		v[len(v)-1] = 100
	}
	return vecs, err
}

func TestEmbeddingsJinaFields(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: queryFake{}})
	vectors := func(body string) [][]float64 {
		t.Helper()
		rec := call(t, s, "POST", "/v1/embeddings", body)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", body, rec.Code, rec.Body)
		}
		var r struct {
			Data []struct{ Embedding []float64 }
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		var out [][]float64
		for _, d := range r.Data {
			out = append(out, d.Embedding)
		}
		return out
	}
	last := func(v []float64) float64 { return v[len(v)-1] }
	norm := func(v []float64) float64 {
		var ss float64
		for _, x := range v {
			ss += x * x
		}
		return math.Sqrt(ss)
	}
	// Input objects, in order, as plain strings would be.
	objs := vectors(`{"input":[{"text":"abc"},"zzz"]}`)
	plain := vectors(`{"input":["abc","zzz"]}`)
	if len(objs) != 2 || objs[0][0] != plain[0][0] || objs[1][25] != 3 {
		t.Errorf("input objects: %v", objs)
	}
	// Query tasks embed queries, the others passages.
	for task, query := range map[string]bool{
		"retrieval.query": true, "code.query": true, "retrieval.passage": false, "code.passage": false,
		"text-matching": false, "classification": false, "separation": false,
	} {
		v := vectors(`{"input":"abc","task":"` + task + `"}`)[0]
		if (last(v) == 100) != query {
			t.Errorf("task %s: last component %v, want a query embedding %v", task, last(v), query)
		}
	}
	// normalized: unit vectors; otherwise the embedder's own.
	if n := norm(vectors(`{"input":"aab","normalized":true}`)[0]); math.Abs(n-1) > 1e-6 {
		t.Errorf("normalized: norm %v", n)
	}
	if n := norm(vectors(`{"input":"aab","normalized":false}`)[0]); math.Abs(n-math.Sqrt(5)) > 1e-6 {
		t.Errorf("not normalized: norm %v", n)
	}
	// Jina's format names, late_chunking false.
	if v := vectors(`{"input":"abc","embedding_type":"float","encoding_type":"float","encoding_format":"float","late_chunking":false}`); len(v) != 1 {
		t.Errorf("format names: %v", v)
	}
	rec := call(t, s, "POST", "/v1/embeddings", `{"input":"abc","embedding_type":"base64"}`)
	if !strings.Contains(rec.Body.String(), `"embedding":"`) {
		t.Errorf("embedding_type base64: %s", rec.Body)
	}
	for _, tc := range []struct{ body, field, inMsg string }{
		{`{"input":"abc","task":"summarize"}`, "task", "retrieval.query"},
		{`{"input":"abc","late_chunking":true}`, "late_chunking", "each input on its own"},
		{`{"input":"abc","embedding_type":"ubinary"}`, "embedding_type", "binary embeddings are not served"},
		{`{"input":"abc","embedding_type":"int8"}`, "embedding_type", "binary embeddings are not served"},
		{`{"input":"abc","encoding_format":"float","embedding_type":"base64"}`, "embedding_type", "encoding_format"},
		{`{"input":"abc","normalized":"yes"}`, "normalized", "boolean"},
		{`{"input":[{"image":"https://x/cat.png"}]}`, "input[0].image", "images are not embedded"},
		{`{"input":[{"url":"https://x/cat.png"}]}`, "input[0].url", "images are not embedded"},
		{`{"input":[{"bytes":"AAAA"}]}`, "input[0].bytes", "images are not embedded"},
		{`{"input":[{}]}`, "input[0]", "no \"text\""},
		{`{"input":[{"text":"a","text":"b"}]}`, "input[0].text", "given twice"},
		{`{"input":[{"text":"a","lang":"en"}]}`, "input[0].lang", "unknown field"},
		{`{"input":"abc","truncate":true}`, "truncate", "late_chunking"},
	} {
		rec := call(t, s, "POST", "/v1/embeddings", tc.body)
		var e struct {
			Error struct{ Field, Message string }
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != http.StatusBadRequest || e.Error.Field != tc.field || !strings.Contains(e.Error.Message, tc.inMsg) {
			t.Errorf("%s: %d %s, want 400 on %s mentioning %q", tc.body, rec.Code, rec.Body, tc.field, tc.inMsg)
		}
	}
}
