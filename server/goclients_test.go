package server

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	cohere "github.com/cohere-ai/cohere-go/v2"
	cohereclient "github.com/cohere-ai/cohere-go/v2/client"
	"github.com/cohere-ai/cohere-go/v2/option"
	openai "github.com/sashabaranov/go-openai"
)

// TestGoClients runs two Go client libraries we did not write against a
// server: sashabaranov/go-openai on /v1/embeddings and /v1/models, and
// cohere-ai/cohere-go on /v1/rerank and /v2/rerank. The success path, and
// that each shows its user ctxsel's message naming the field at fault:
// what the library parses of an error is all its user sees.
func TestGoClients(t *testing.T) {
	s := newTestServer(t, func(c *Config) {
		c.APIKeys = []string{"go-key"}
		c.EmbeddingAliases = map[string]string{"text-embedding-3-small": "fake-letters"}
		c.MaxTextBytes = 4 << 10
	}, Options{Embedder: fakeEmbedder{}})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	ctx := t.Context()

	t.Run("go-openai", func(t *testing.T) {
		conf := openai.DefaultConfig("go-key")
		conf.BaseURL = ts.URL + "/v1"
		c := openai.NewClientWithConfig(conf)
		res, err := c.CreateEmbeddings(ctx, openai.EmbeddingRequest{Input: []string{"abc", "xyz"}, Model: openai.SmallEmbedding3})
		if err != nil || len(res.Data) != 2 || len(res.Data[0].Embedding) != 26 || res.Data[1].Index != 1 {
			t.Fatalf("embeddings: %v %+v", err, res)
		}
		models, err := c.ListModels(ctx)
		if err != nil || len(models.Models) == 0 {
			t.Fatalf("models: %v", err)
		}
		for _, tc := range []struct {
			req        openai.EmbeddingRequest
			status     int
			param, msg string
		}{
			{openai.EmbeddingRequest{Input: []string{"abc", ""}}, 400, "input[1]", "input[1]: empty string"},
			{openai.EmbeddingRequest{Input: []string{"abc"}, Dimensions: 1024}, 400, "dimensions", "dimensions: 1024: this model's vectors have 26 dimensions"},
			{openai.EmbeddingRequest{Input: []string{"abc"}, Model: openai.LargeEmbedding3}, 400, "model", "--embedding-alias text-embedding-3-large=fake-letters"},
			{openai.EmbeddingRequest{Input: []string{strings.Repeat("a", 5000)}}, 413, "input[0]", "input[0]: 5000 bytes, over the limit"},
		} {
			_, err := c.CreateEmbeddings(ctx, tc.req)
			var e *openai.APIError
			if !errors.As(err, &e) || e.HTTPStatusCode != tc.status || e.Param == nil || *e.Param != tc.param ||
				e.Type != "invalid_request_error" || !strings.Contains(e.Message, tc.msg) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%+v: %v (%+v)", tc.req, err, e)
			}
		}
		wrongConf := openai.DefaultConfig("wrong")
		wrongConf.BaseURL = conf.BaseURL
		_, err = openai.NewClientWithConfig(wrongConf).CreateEmbeddings(ctx, openai.EmbeddingRequest{Input: []string{"abc"}})
		var e *openai.APIError
		if !errors.As(err, &e) || e.HTTPStatusCode != 401 || e.Code != "invalid_api_key" || !strings.Contains(e.Message, "missing or invalid API key") {
			t.Errorf("wrong key: %v", err)
		}
		_, err = c.GetModel(ctx, "nope")
		if !errors.As(err, &e) || e.HTTPStatusCode != 404 || e.Code != "model_not_found" {
			t.Errorf("unknown model: %v", err)
		}
	})

	t.Run("cohere-go", func(t *testing.T) {
		c := cohereclient.NewClient(option.WithBaseURL(ts.URL), option.WithToken("go-key"), option.WithMaxAttempts(1))
		docs := []string{"the cat sat", "abc abc abc", "zzz"}
		top := 2
		res, err := c.V2.Rerank(ctx, &cohere.V2RerankRequest{Model: "ctxsel-topk", Query: "abc", Documents: docs, TopN: &top})
		if err != nil || len(res.Results) != 2 || res.Results[0].Index != 1 {
			t.Fatalf("v2 rerank: %v %+v", err, res)
		}
		items := make([]*cohere.RerankRequestDocumentsItem, len(docs))
		for i, d := range docs {
			items[i] = &cohere.RerankRequestDocumentsItem{String: d}
		}
		model := "rerank-english-v3.0" // a client's default: the default strategy
		v1, err := c.Rerank(ctx, &cohere.RerankRequest{Model: &model, Query: "abc", Documents: items})
		if err != nil || len(v1.Results) == 0 || v1.Results[0].Index != 1 {
			t.Fatalf("v1 rerank: %v %+v", err, v1)
		}
		// One long document is truncated, not refused, and meta says so.
		long := strings.Repeat("zebra ", 3000) // 18 KB: over max_text_bytes before the cut
		maxTok := 100
		res, err = c.V2.Rerank(ctx, &cohere.V2RerankRequest{Model: "ctxsel-full", Query: "abc", Documents: []string{"abc", long}, MaxTokensPerDoc: &maxTok})
		if err != nil || len(res.Results) != 2 || res.Meta == nil || len(res.Meta.Warnings) != 1 || !strings.Contains(res.Meta.Warnings[0], "document 1") {
			t.Fatalf("a long document: %v %+v", err, res)
		}

		_, err = c.V2.Rerank(ctx, &cohere.V2RerankRequest{Model: "ctxsel-nope", Query: "abc", Documents: docs})
		var bad *cohere.BadRequestError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), `model: unknown strategy \"nope\"`) {
			t.Errorf("bad model: %v", err)
		} else if body, ok := bad.Body.(map[string]any); !ok || !strings.HasPrefix(body["message"].(string), "model: unknown strategy") {
			t.Errorf("bad model's body: %v", bad.Body)
		}
		_, err = c.V2.Rerank(ctx, &cohere.V2RerankRequest{Query: "abc", Documents: []string{"abc", " "}})
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), "documents[1]: no text to rank") {
			t.Errorf("blank document: %v", err)
		}
		wrong := cohereclient.NewClient(option.WithBaseURL(ts.URL), option.WithToken("wrong"), option.WithMaxAttempts(1))
		_, err = wrong.V2.Rerank(ctx, &cohere.V2RerankRequest{Query: "abc", Documents: docs})
		var unauth *cohere.UnauthorizedError
		if !errors.As(err, &unauth) || !strings.Contains(err.Error(), "missing or invalid API key") {
			t.Errorf("wrong key: %v", err)
		}
	})
}
