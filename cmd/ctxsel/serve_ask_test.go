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
	"github.com/ctxsel/ctxsel/picker/pickertest"
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
	asker, _, closeAsker, err := newIndexAsker(context.Background(), "serve", idx, askReader{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAsker()
	topk, err := ctxsel.Resolve("topk:k=2")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := asker.Ask(context.Background(), server.AskRequest{Query: "volcano on Sicily", Strategy: topk})
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
	resp, err = asker.Ask(context.Background(), server.AskRequest{Query: "volcano Sicily", Strategy: topk, Retriever: "bm25"})
	if err != nil || len(resp.Scores) != 1 || !strings.HasSuffix(resp.Passages[0].ID, "etna.txt#0") {
		t.Fatalf("bm25: %+v %v", resp, err)
	}
	if _, err := asker.Ask(context.Background(), server.AskRequest{Query: "q", Strategy: topk, Retriever: "sparse"}); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("unknown retriever: %v", err)
	}
	if _, _, _, err := newIndexAsker(context.Background(), "serve", filepath.Join(root, "missing"), askReader{}); err == nil {
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
	asker, _, closeAsker, err := newIndexAsker(context.Background(), "serve", idx, askReader{})
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
		s.Handler().ServeHTTP(rec, localPost("/v1/ask", body))
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

// TestServeReaderFlag: serve --reader answers /v1/ask through the spec's
// endpoint with the shared call cache (an identical request reaches no
// server), reports the --picker call's tokens apart from the reader's under
// "usage", and hands the spec's #window to Self-Route.
func TestServeReaderFlag(t *testing.T) {
	useHashEmbedder(t)
	t.Setenv("CTXSEL_LLM_CACHE", filepath.Join(t.TempDir(), "llmcache"))
	root := t.TempDir()
	doc := filepath.Join(root, "etna.txt")
	os.WriteFile(doc, []byte("Mount Etna is an active volcano on Sicily. Bread rises because yeast makes gas. The Moon has no air."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, "--chunker", "sentences:max_tokens=12", doc); code != 0 {
		t.Fatalf("index add: %s", errs)
	}
	const question = "Where is Mount Etna?"
	// The simulated reader: right iff the prompt holds the gold sentence.
	reader := llmtest.New(llmtest.Reader([]llmtest.Question{{Question: question, Gold: []string{"Mount Etna is an active volcano on Sicily."}, Answer: "Sicily"}}, llmtest.ReaderOptions{}))
	defer reader.Close()
	// A scripted picker: picks the offered passage about Etna.
	pick := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		_, ids, texts := pickertest.Offered(c.Prompt())
		var chosen []string
		for i, text := range texts {
			if strings.Contains(text, "Etna") {
				chosen = append(chosen, ids[i])
			}
		}
		r := pickertest.Answer("the passage naming Etna", chosen)
		r.PromptTokens, r.CompletionTokens = 321, 17
		return r
	})
	defer pick.Close()

	newHandler := func(readerSpec string, pickerSpec ...string) http.Handler {
		t.Helper()
		pickSpec := pick.OpenAISpec("picker")
		if len(pickerSpec) > 0 {
			pickSpec = pickerSpec[0]
		}
		var stderr strings.Builder
		srv, done, err := newServe(context.Background(), []string{"--index", idx, "--reader", readerSpec, "--picker", pickSpec}, &stderr)
		if err != nil {
			t.Fatalf("serve: %v %s", err, stderr.String())
		}
		t.Cleanup(done)
		return srv.Handler()
	}
	post := func(h http.Handler, body string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, localPost("/v1/ask", body))
		return rec.Code, rec.Body.String()
	}
	type usage struct {
		LLMCalls               int   `json:"llm_calls"`
		InputTokens            int   `json:"input_tokens"`
		OutputTokens           int   `json:"output_tokens"`
		PickerCalls            int   `json:"picker_calls"`
		PickerPromptTokens     int   `json:"picker_prompt_tokens"`
		PickerCompletionTokens int   `json:"picker_completion_tokens"`
		PickerInvalid          *bool `json:"picker_invalid"`
	}
	var resp struct {
		Answer      string   `json:"answer"`
		IDs         []string `json:"ids"`
		Usage       *usage   `json:"usage"`
		Explanation struct {
			Reason string `json:"reason"`
		} `json:"explanation"`
	}
	h := newHandler(reader.OpenAISpec("reader"))
	body := `{"query":"` + question + `","strategy":"picker"}`
	code, first := post(h, body)
	if code != 200 || json.Unmarshal([]byte(first), &resp) != nil {
		t.Fatalf("%d %s", code, first)
	}
	u := resp.Usage
	if resp.Answer != "Sicily" || len(resp.IDs) != 1 || !strings.HasSuffix(resp.IDs[0], "etna.txt#0") || u == nil ||
		u.LLMCalls != 1 || u.InputTokens <= 0 || u.InputTokens == 321 || u.PickerCalls != 1 ||
		u.PickerPromptTokens != 321 || u.PickerCompletionTokens != 17 || u.PickerInvalid == nil || *u.PickerInvalid ||
		!strings.Contains(resp.Explanation.Reason, "the passage naming Etna") {
		t.Fatalf("first ask: %s", first)
	}
	if reader.Requests() != 1 || pick.Requests() != 1 {
		t.Fatalf("reader saw %d requests, picker %d", reader.Requests(), pick.Requests())
	}
	// The same request again is answered from the call cache: the same
	// body (cached usage included), no new request to either server.
	if code, again := post(h, body); code != 200 || again != first {
		t.Fatalf("second ask: %d %s\nfirst: %s", code, again, first)
	}
	if reader.Requests() != 1 || pick.Requests() != 1 {
		t.Fatalf("after a cached ask: reader saw %d requests, picker %d", reader.Requests(), pick.Requests())
	}
	// The reader's calls went through the reader's endpoint by its model.
	if calls := reader.Calls(); calls[0].Model != "reader" || !strings.Contains(calls[0].Prompt(), "Mount Etna") {
		t.Fatalf("reader call %+v", calls[0])
	}

	// #window=N reaches Self-Route: a window too small for any passage is
	// bad input before any call; the same request without it is answered.
	small := newHandler(reader.OpenAISpec("reader") + "#window=100")
	if code, body := post(small, `{"query":"`+question+`","strategy":"selfroute:k=1"}`); code != 400 || !strings.Contains(body, "window of 100 tokens") {
		t.Fatalf("window 100: %d %s", code, body)
	}
	if code, body := post(h, `{"query":"`+question+`","strategy":"selfroute:k=1"}`); code != 200 || !strings.Contains(body, `"answer":"Sicily"`) {
		t.Fatalf("default window: %d %s", code, body)
	}

	// A picker answering garbage: the fallback selects, the answer still
	// comes, and usage marks the picker's output invalid.
	garbage := llmtest.New(func(c llmtest.Call) llmtest.Reply {
		r := pickertest.Garbage(c)
		r.PromptTokens, r.CompletionTokens = 50, 9
		return r
	})
	defer garbage.Close()
	resp.Usage = nil
	if code, body := post(newHandler(reader.OpenAISpec("reader"), garbage.OpenAISpec("junk")), body); code != 200 ||
		json.Unmarshal([]byte(body), &resp) != nil || resp.Usage == nil || resp.Usage.PickerInvalid == nil || !*resp.Usage.PickerInvalid ||
		resp.Usage.PickerPromptTokens != 50 || resp.Usage.PickerCompletionTokens != 9 || resp.Usage.LLMCalls != 1 ||
		!strings.Contains(resp.Explanation.Reason, "picker output invalid") {
		t.Fatalf("garbage picker: %d %s", code, body)
	}

	// --reader needs --index, and a bad spec is a usage error.
	for _, args := range [][]string{{"--reader", reader.OpenAISpec("r")}, {"--index", idx, "--reader", "nosuch:model"}} {
		var stderr strings.Builder
		if _, _, err := newServe(context.Background(), args, &stderr); !errors.As(err, new(usageError)) {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// /v1/ask flags a degenerate reply instead of passing it off as an answer.
func TestServeAskFlagsDegenerateReply(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	doc := filepath.Join(root, "etna.txt")
	os.WriteFile(doc, []byte("Mount Etna is an active volcano on Sicily."), 0o644)
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, doc); code != 0 {
		t.Fatalf("index add: %s", errs)
	}
	srv := llmtest.New(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "Mount Et", FinishReason: "length"} })
	defer srv.Close()
	reader, _, err := llm.OpenSpec(srv.OpenAISpec("m"), llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	asker, _, closeAsker, err := newIndexAsker(context.Background(), "serve", idx, askReader{client: reader})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAsker()
	s, err := server.New(server.DefaultConfig(), server.Options{Asker: asker})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/v1/ask", strings.NewReader(`{"query":"Which volcano?"}`))
	req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	var resp struct {
		Answer       string `json:"answer"`
		AnswerDefect string `json:"answer_defect"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != http.StatusOK || resp.AnswerDefect != "truncated" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
