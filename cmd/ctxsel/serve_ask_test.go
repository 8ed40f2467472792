package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/server"
)

func TestServeAskerAnswersFromIndex(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	doc := filepath.Join(root, "etna.txt")
	os.WriteFile(doc, []byte("Mount Etna is an active volcano on Sicily. Bread rises because yeast makes gas. The Moon has no air."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, "--chunker", "sentences:max_tokens=12", doc); code != 0 {
		t.Fatalf("index add: %s", errs)
	}
	asker, closeAsker, err := newIndexAsker(context.Background(), idx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAsker()
	st, caps, err := ctxsel.Parse("topk:k=2")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := asker.Ask(context.Background(), server.AskRequest{Query: "volcano on Sicily", Strategy: st, Caps: caps, Spec: "topk:k=2"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Selection.K != 2 || len(resp.Passages) < 2 || resp.Answer != "" || len(resp.Scores) != 3 {
		t.Fatalf("response %+v", resp)
	}
	var ids []string
	for _, p := range resp.Passages {
		ids = append(ids, p.ID)
	}
	for _, id := range resp.Selection.IDs {
		if !slices.Contains(ids, id) {
			t.Fatalf("selected %s is not among the passages %v", id, ids)
		}
	}
	// the request's retriever reaches the index: BM25 scores only the
	// chunk holding the query's words; an unknown retriever is bad input
	resp, err = asker.Ask(context.Background(), server.AskRequest{Query: "volcano Sicily", Strategy: st, Caps: caps, Spec: "topk:k=2", Retriever: "bm25"})
	if err != nil || len(resp.Scores) != 1 || !strings.HasSuffix(resp.Passages[0].ID, "etna.txt#0") {
		t.Fatalf("bm25: %+v %v", resp, err)
	}
	if _, err := asker.Ask(context.Background(), server.AskRequest{Query: "q", Strategy: st, Caps: caps, Spec: "topk:k=2", Retriever: "sparse"}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("unknown retriever: %v", err)
	}
	if _, _, err := newIndexAsker(context.Background(), filepath.Join(root, "missing")); err == nil {
		t.Fatal("a missing index was accepted")
	}
}

// TestServeAskSelfRoute: /v1/ask takes selfroute:k=N, runs it with the
// index's LLM and reports both calls' tokens under "usage".
func TestServeAskSelfRoute(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	doc := filepath.Join(root, "etna.txt")
	os.WriteFile(doc, []byte("Mount Etna is an active volcano on Sicily. Bread rises because yeast makes gas. The Moon has no air."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, "--chunker", "sentences:max_tokens=12", doc); code != 0 {
		t.Fatalf("index add: %s", errs)
	}
	n := 0
	llmSrv := llmtest.New(func(llmtest.Call) llmtest.Reply {
		if n++; n == 1 {
			return llmtest.Reply{Content: "unanswerable", PromptTokens: 40, CompletionTokens: 1}
		}
		return llmtest.Reply{Content: "Sicily", PromptTokens: 90, CompletionTokens: 2}
	})
	defer llmSrv.Close()
	llmFromEnv = func() (llm.Client, error) {
		c, _, err := llm.OpenSpec(llmSrv.OpenAISpec("m"), llm.Options{})
		return c, err
	}
	asker, closeAsker, err := newIndexAsker(context.Background(), idx)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAsker()
	s, err := server.New(server.DefaultConfig(), server.Options{Asker: asker})
	if err != nil {
		t.Fatal(err)
	}
	post := func(body string) (int, string) {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/ask", strings.NewReader(body)))
		return rec.Code, rec.Body.String()
	}
	code, body := post(`{"query":"Where is Etna?","strategy":"selfroute:k=1"}`)
	var resp struct {
		Answer string `json:"answer"`
		K      int    `json:"k"`
		Usage  struct {
			LLMCalls     int  `json:"llm_calls"`
			InputTokens  int  `json:"input_tokens"`
			OutputTokens int  `json:"output_tokens"`
			Routed       bool `json:"routed"`
		} `json:"usage"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &resp) != nil || resp.Answer != "Sicily" || resp.K != 3 ||
		resp.Usage.LLMCalls != 2 || resp.Usage.InputTokens != 130 || resp.Usage.OutputTokens != 3 || !resp.Usage.Routed {
		t.Fatalf("%d %s", code, body)
	}
	for _, bad := range []string{`{"query":"q","strategy":"selfroute:k=0"}`, `{"query":"q","strategy":"selfroute:p=1"}`,
		`{"query":"q","strategy":"selfroute","params":{"k":-1}}`} {
		if code, body := post(bad); code != 400 || strings.Contains(body, "127.0.0.1") {
			t.Errorf("%s: %d %s", bad, code, body)
		}
	}
}
