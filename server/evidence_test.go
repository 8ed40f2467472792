package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/evidence" // registers the evidence selector
)

// evidenceServer is a server whose requests may name the evidence
// selector: its sentence embedder is the test's.
func evidenceServer(t testing.TB, mod func(*Config), emb any) *Server {
	return newTestServer(t, mod, Options{Embedder: fakeEmbedder{}, Asker: fakeAsker{},
		SelectorDeps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: emb})})
}

// evidencePassages are candidates whose texts have sentences, the
// question's words in some.
var evidencePassages = []struct {
	id    string
	score float64
	text  string
}{
	{"scrooge", 0.9, "A Christmas Carol\nEbenezer Scrooge is a miser. His clerk is Bob Cratchit, who is poorly paid. Marley was dead, to begin with."},
	{"cratchit", 0.8, "Bob Cratchit works for Scrooge as a clerk. He has a son, Tiny Tim. The family is poor but cheerful."},
	{"london", 0.3, "London is a city on the Thames. It had many fogs in the nineteenth century. Dickens lived there."},
	{"bread", 0.1, "Bread rises because yeast makes gas. Flour, water and salt are the rest."},
}

func evidenceCandidates(withScores bool) string {
	var parts []string
	for _, p := range evidencePassages {
		c := map[string]any{"id": p.id, "text": p.text}
		if withScores {
			c["score"] = p.score
		}
		b, _ := json.Marshal(c)
		parts = append(parts, string(b))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

type evidenceResp struct {
	IDs      []string          `json:"ids"`
	Indices  []int             `json:"indices"`
	K        int               `json:"k"`
	Tokens   int               `json:"tokens"`
	Evidence []ctxsel.Evidence `json:"evidence"`
}

// checkEvidence: every kept span lies in the passage's text, in order and
// disjoint, and its bytes are in the pruned text; the pruned text's tokens
// are the selection's.
func checkEvidence(t *testing.T, texts []string, r evidenceResp) {
	t.Helper()
	if len(r.Evidence) != len(r.IDs) || len(r.IDs) == 0 {
		t.Fatalf("%d evidence for %d ids", len(r.Evidence), len(r.IDs))
	}
	sum := 0
	for j, e := range r.Evidence {
		text := texts[r.Indices[j]]
		if len(e.Spans) == 0 || e.Why == "" || e.Tokens > e.PassageTokens || e.Sentences < len(e.Spans) {
			t.Errorf("%s: %+v", r.IDs[j], e)
		}
		last := 0
		for _, sp := range e.Spans {
			if sp[0] < last || sp[1] <= sp[0] || sp[1] > len(text) {
				t.Fatalf("%s: span %v outside %q", r.IDs[j], sp, text)
			}
			if !strings.Contains(e.Text, strings.TrimSpace(text[sp[0]:sp[1]])) {
				t.Errorf("%s: kept %q is not in the sent text %q", r.IDs[j], text[sp[0]:sp[1]], e.Text)
			}
			last = sp[1]
		}
		sum += e.Tokens
	}
	if sum != r.Tokens {
		t.Errorf("tokens %d, the pruned texts' %d", r.Tokens, sum)
	}
}

func passageTexts() []string {
	var out []string
	for _, p := range evidencePassages {
		out = append(out, p.text)
	}
	return out
}

// TestSelectEvidence: /v1/select with texts and an evidence spec returns
// each kept passage's evidence; the same through the MCP tool.
func TestSelectEvidence(t *testing.T) {
	s := evidenceServer(t, nil, fakeEmbedder{})
	q := `"query":"Who is Scrooge's clerk?"`
	for _, body := range []string{
		`{` + q + `,"strategy":"evidence:budget=40","candidates":` + evidenceCandidates(true) + `}`,
		`{` + q + `,"strategy":"topk:k=2+evidence:budget=40","order":"document","candidates":` + evidenceCandidates(true) + `}`,
		`{` + q + `,"strategy":"evidence:budget=25","candidates":` + evidenceCandidates(false) + `}`, // scored by embedding
	} {
		rec := call(t, s, "POST", "/v1/select", body)
		var r evidenceResp
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &r) != nil {
			t.Fatalf("%s: %d %s", body, rec.Code, rec.Body)
		}
		checkEvidence(t, passageTexts(), r)
	}
	// Whole passages: no evidence member at all.
	rec := call(t, s, "POST", "/v1/select", `{`+q+`,"strategy":"topk:k=2","candidates":`+evidenceCandidates(true)+`}`)
	if rec.Code != 200 || strings.Contains(rec.Body.String(), `"evidence"`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	// The MCP tool returns the same document.
	var r evidenceResp
	res := callTool(t, connectMemory(t, s), "select_context", json.RawMessage(`{`+q+`,"strategy":"evidence:budget=40","candidates":`+evidenceCandidates(true)+`}`), &r)
	if res.IsError {
		t.Fatal(errorText(res))
	}
	checkEvidence(t, passageTexts(), r)

	for _, tc := range []struct{ body, field string }{
		{`{"strategy":"evidence:budget=40","candidates":` + evidenceCandidates(true) + `}`, "query"},
		{`{` + q + `,"strategy":"evidence:budget=40","params":{"max_k":1},"candidates":` + evidenceCandidates(true) + `}`, "params"},
		{`{` + q + `,"strategy":"evidence:budget=40","candidates":[{"id":"a","score":1,"text":"x."},{"id":"b","score":1}]}`, "candidates[1].text"},
		{`{` + q + `,"strategy":"evidence:budget=0","candidates":` + evidenceCandidates(true) + `}`, "strategy"},
	} {
		rec := call(t, s, "POST", "/v1/select", tc.body)
		var e errResp
		if rec.Code != 400 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Field == nil || *e.Error.Field != tc.field {
			t.Errorf("%s: %d %s, want a 400 on %s", tc.body, rec.Code, rec.Body, tc.field)
		}
	}
	// A server without selector dependencies offers no evidence selector.
	rec = call(t, newTestServer(t, nil, Options{}), "POST", "/v1/select", `{`+q+`,"strategy":"evidence:budget=40","candidates":`+evidenceCandidates(true)+`}`)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `unknown strategy \"evidence\"`) {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// TestSelectEvidenceAbove: a candidate's "above" (the lines of its
// document above it: a heading path, a table's header) goes out with what
// the evidence selector keeps of it, in its text and as "above", through
// /v1/select and the MCP tool alike; a strategy that sends whole passages
// ignores it, and a misspelt or repeated one is refused.
func TestSelectEvidenceAbove(t *testing.T) {
	s := evidenceServer(t, nil, fakeEmbedder{})
	const header = "| Code | Meaning | What to do |\n| --- | --- | --- |"
	cands := `[{"id":"errors","score":0.9,"text":"| E104 | the fan is blocked | clean the vents |\n| E105 | the toner is low | replace the cartridge |\n","above":"# LP-4200 service manual\n## Error codes\n` + strings.ReplaceAll(header, "\n", `\n`) + `"},` +
		`{"id":"bread","score":0.1,"text":"Bread rises because yeast makes gas. Flour, water and salt are the rest."}]`
	body := `{"query":"What does error E105 mean?","strategy":"evidence:budget=80","candidates":` + cands + `}`
	check := func(how string, r evidenceResp) {
		t.Helper()
		at := slices.Index(r.IDs, "errors")
		if at < 0 {
			t.Fatalf("%s: the manual's chunk is not selected: %+v", how, r)
		}
		ev := r.Evidence[at]
		want := "# LP-4200 service manual\n## Error codes\n" + header
		if ev.Above != want || !strings.HasPrefix(ev.Text, want+"\n| E10") || !strings.Contains(ev.Text, "| E105 |") {
			t.Errorf("%s: above %q, text %q; want the rows under %q", how, ev.Above, ev.Text, want)
		}
	}
	rec := call(t, s, "POST", "/v1/select", body)
	var r evidenceResp
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &r) != nil {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	check("/v1/select", r)
	var m evidenceResp
	if res := callTool(t, connectMemory(t, s), "select_context", json.RawMessage(body), &m); res.IsError {
		t.Fatal(errorText(res))
	}
	check("select_context", m)
	// without "above" the rows go out alone
	rec = call(t, s, "POST", "/v1/select", strings.Replace(body, `"above"`, `"section"`, 1))
	r = evidenceResp{}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &r) != nil || len(r.Evidence) == 0 || r.Evidence[0].Above != "" || strings.Contains(r.Evidence[0].Text, "Error codes") {
		t.Fatalf("without above: %d %s", rec.Code, rec.Body)
	}
	// whole passages: read by text selectors only
	rec = call(t, s, "POST", "/v1/select", strings.Replace(body, "evidence:budget=80", "topk:k=1", 1))
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "Error codes") {
		t.Fatalf("topk: %d %s", rec.Code, rec.Body)
	}
	for _, tc := range []struct{ from, to, field string }{
		{`"above"`, `"abvoe"`, "candidates[0].abvoe"},
		{`"above":"# LP`, `"above":"x","above":"# LP`, "candidates[0].above"},
		{`"above":"# LP-4200 service manual`, `"above":7,"x":"`, "candidates[0].above"},
	} {
		rec := call(t, s, "POST", "/v1/select", strings.Replace(body, tc.from, tc.to, 1))
		var e errResp
		if rec.Code != 400 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Field == nil || *e.Error.Field != tc.field {
			t.Errorf("%s → %s: %d %s, want a 400 on %s", tc.from, tc.to, rec.Code, rec.Body, tc.field)
		}
	}
}

// TestStrategiesListSelectors: a server that can build text selectors
// lists them; one that cannot, does not.
func TestStrategiesListSelectors(t *testing.T) {
	var with, without struct {
		Selectors []ctxsel.SelectorDef `json:"selectors"`
	}
	json.Unmarshal(call(t, evidenceServer(t, nil, fakeEmbedder{}), "GET", "/v1/strategies", "").Body.Bytes(), &with)
	json.Unmarshal(call(t, newTestServer(t, nil, Options{}), "GET", "/v1/strategies", "").Body.Bytes(), &without)
	names := []string{}
	for _, d := range with.Selectors {
		names = append(names, d.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "evidence") || len(without.Selectors) != 0 {
		t.Fatalf("with deps %v, without %v", names, without.Selectors)
	}
}

// TestEvidenceEmbedderBounded: the evidence selector's sentence embedder
// is held to the request's deadline like the server's own.
func TestEvidenceEmbedderBounded(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := evidenceServer(t, func(c *Config) { c.RequestTimeout = Duration(200 * time.Millisecond) }, stuckEmbedder{release: release})
	start := time.Now()
	rec := call(t, s, "POST", "/v1/select", `{"query":"Who is Scrooge's clerk?","strategy":"evidence:budget=40","candidates":`+evidenceCandidates(true)+`}`)
	if rec.Code != http.StatusGatewayTimeout || time.Since(start) > 10*time.Second {
		t.Fatalf("%d after %s: %s", rec.Code, time.Since(start), rec.Body)
	}
}

// TestRerankEvidence: an evidence model prunes the documents; with
// return_evidence each result carries its evidence, in rank order, and
// clients that do not ask get the standard shape.
func TestRerankEvidence(t *testing.T) {
	s := evidenceServer(t, nil, fakeEmbedder{})
	var docs []string
	for _, p := range evidencePassages {
		docs = append(docs, p.text)
	}
	dj, _ := json.Marshal(docs)
	q := `"query":"Who is Scrooge's clerk?","documents":` + string(dj)
	type result struct {
		Index    int              `json:"index"`
		Score    float64          `json:"relevance_score"`
		Evidence *ctxsel.Evidence `json:"evidence"`
		Document *struct {
			Text string `json:"text"`
		} `json:"document"`
	}
	type resp struct {
		Results []result `json:"results"`
		Ctxsel  struct {
			K        int    `json:"k"`
			Strategy string `json:"strategy"`
			Tokens   int    `json:"tokens"`
		} `json:"ctxsel"`
	}
	post := func(path, body string) (int, resp, string) {
		rec := call(t, s, "POST", path, body)
		var r resp
		if rec.Code == 200 {
			if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
		}
		return rec.Code, r, rec.Body.String()
	}
	for _, tc := range []struct {
		path, body string
		evidence   bool
	}{
		{"/v1/rerank", `{"model":"ctxsel-evidence:budget=40",` + q + `,"return_evidence":true}`, true},
		{"/v2/rerank", `{"model":"ctxsel-evidence:budget=40,order=document",` + q + `,"return_evidence":true}`, true},
		{"/v1/rerank", `{"model":"ctxsel-topk:k=3",` + q + `,"evidence_budget":30,"return_evidence":true,"return_documents":true}`, true},
		{"/v1/rerank", `{"model":"ctxsel-evidence:budget=40",` + q + `}`, false},
		{"/v1/rerank", `{"model":"ctxsel-evidence:budget=400",` + q + `,"return_evidence":true,"top_n":1}`, true},
	} {
		code, r, raw := post(tc.path, tc.body)
		if code != 200 || len(r.Results) == 0 || r.Ctxsel.K != len(r.Results) || !strings.Contains(r.Ctxsel.Strategy, "evidence") {
			t.Fatalf("%s %s: %d %s", tc.path, tc.body, code, raw)
		}
		if strings.Contains(tc.body, `"top_n":1`) && len(r.Results) != 1 {
			t.Errorf("top_n 1: %d results", len(r.Results))
		}
		sum := 0
		for i, res := range r.Results {
			if i > 0 && res.Score > r.Results[i-1].Score {
				t.Errorf("%s: results not in rank order: %s", tc.body, raw)
			}
			if (res.Evidence != nil) != tc.evidence {
				t.Fatalf("%s: evidence %v, want %v: %s", tc.body, res.Evidence != nil, tc.evidence, raw)
			}
			if res.Evidence == nil {
				continue
			}
			sum += res.Evidence.Tokens
			doc := docs[res.Index]
			for _, sp := range res.Evidence.Spans {
				if sp[0] < 0 || sp[1] > len(doc) || !strings.Contains(res.Evidence.Text, strings.TrimSpace(doc[sp[0]:sp[1]])) {
					t.Errorf("span %v of document %d not in %q", sp, res.Index, res.Evidence.Text)
				}
			}
			if strings.Contains(tc.body, "return_documents") && (res.Document == nil || res.Document.Text != doc) {
				t.Errorf("document %d not returned whole: %+v", res.Index, res.Document)
			}
		}
		if tc.evidence && sum != r.Ctxsel.Tokens {
			t.Errorf("%s: ctxsel.tokens %d, the evidence's %d", tc.body, r.Ctxsel.Tokens, sum)
		}
	}
	for _, tc := range []struct{ body, field string }{
		{`{"model":"ctxsel-topk:k=2",` + q + `,"return_evidence":true}`, "return_evidence"},
		{`{` + q + `,"return_evidence":true}`, "return_evidence"},
		{`{` + q + `,"evidence_budget":0}`, "evidence_budget"},
		{`{` + q + `,"return_evidence":"yes"}`, "return_evidence"},
		{`{"model":"ctxsel-evidence:budget=40",` + q + `,"evidence_budget":30}`, "model"},
		{`{"model":"ctxsel-picker",` + q + `}`, "model"},
	} {
		rec := call(t, s, "POST", "/v1/rerank", tc.body)
		var e struct {
			Message string `json:"message"`
			Error   struct{ Field string }
		}
		if rec.Code != 400 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Field != tc.field || e.Message == "" {
			t.Errorf("%s: %d %s, want a 400 on %s", tc.body, rec.Code, rec.Body, tc.field)
		}
	}
	rec := call(t, newTestServer(t, nil, Options{Embedder: fakeEmbedder{}}), "POST", "/v1/rerank", `{`+q+`,"evidence_budget":30}`)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), `"field":"evidence_budget"`) {
		t.Fatalf("no evidence selector on this server: %d %s", rec.Code, rec.Body)
	}
}

// TestAskEvidence: /v1/ask and the MCP ask tool return what the Asker's
// selection kept of each passage.
func TestAskEvidence(t *testing.T) {
	asker := askerFunc(func(ctx context.Context, req AskRequest) (AskResponse, error) {
		ps := []Passage{{ID: "a", Score: 0.9, Tokens: 12, Text: "Etna is a volcano. It is on Sicily."}, {ID: "b", Score: 0.2, Tokens: 5, Text: "Bread."}}
		sel := ctxsel.Selection{IDs: []string{"a"}, Indices: []int{0}, K: 1, Tokens: 6,
			Explanation: ctxsel.Explanation{Strategy: "evidence:budget=10", Reason: "kept 1 sentence", N: 2, K: 1, Tokens: 6, TotalTokens: 17},
			Evidence:    []ctxsel.Evidence{{Spans: [][2]int{{0, 18}}, Text: "Etna is a volcano.", Tokens: 6, PassageTokens: 12, KeptScore: 0.7, Sentences: 2, Why: "kept 1 of 2"}}}
		return AskResponse{Answer: "Sicily", Passages: ps, Selection: sel}, nil
	})
	s := newTestServer(t, nil, Options{Asker: asker})
	var r struct {
		evidenceResp
		Passages []struct{ Text string } `json:"passages"`
	}
	rec := call(t, s, "POST", "/v1/ask", `{"query":"Where is Etna?"}`)
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &r) != nil || len(r.Evidence) != 1 || r.Evidence[0].Text != "Etna is a volcano." || r.Evidence[0].Spans[0] != [2]int{0, 18} {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var m evidenceResp
	if res := callTool(t, connectMemory(t, s), "ask", map[string]any{"query": "Where is Etna?"}, &m); res.IsError || len(m.Evidence) != 1 || m.Evidence[0].Why != "kept 1 of 2" {
		t.Fatalf("MCP ask: %+v %s", m, errorText(res))
	}
}
