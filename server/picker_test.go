package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/llm/llmtest"
	"github.com/ctxsel/ctxsel/picker"
	"github.com/ctxsel/ctxsel/picker/pickertest"
)

func TestSelectWithPicker(t *testing.T) {
	srv := llmtest.New(pickertest.Gold(map[string][]string{"who?": {"b"}}))
	defer srv.Close()
	c, _, err := llm.OpenSpec(srv.OpenAISpec("p"), llm.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := picker.ParseSpec("picker:budget=1000")
	p, err := picker.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, nil, Options{Picker: p})
	body := `{"query":"who?","strategy":"picker","candidates":[{"id":"a","score":0.9,"text":"alpha"},{"id":"b","score":0.5,"text":"beta"}]}`
	rec := call(t, s, "POST", "/v1/select", body)
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	var out struct {
		IDs         []string
		Explanation struct{ Strategy, Reason string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || strings.Join(out.IDs, ",") != "b" || out.Explanation.Strategy != "picker" {
		t.Fatalf("%v %s", err, rec.Body)
	}
	// A garbage answer falls back: still 200, and the explanation says so.
	srv.SetReplier(pickertest.Garbage)
	rec = call(t, s, "POST", "/v1/select", body)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "picker output invalid") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	for _, tc := range []struct{ body, field string }{
		{`{"query":"who?","strategy":"picker:budget=9","candidates":[{"id":"a","score":1,"text":"x"}]}`, "strategy"},
		{`{"query":"who?","strategy":"picker","params":{"max_k":1},"candidates":[{"id":"a","score":1,"text":"x"}]}`, "params"},
		{`{"strategy":"picker","candidates":[{"id":"a","score":1,"text":"x"}]}`, "query"},
		{`{"query":"who?","strategy":"picker","candidates":[{"id":"a","score":1,"text":"x"},{"id":"b","score":1}]}`, "candidates[1].text"},
	} {
		rec := call(t, s, "POST", "/v1/select", tc.body)
		var e struct{ Error struct{ Field string } }
		if rec.Code != 400 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Field != tc.field {
			t.Fatalf("%s: %d %s, want field %s", tc.body, rec.Code, rec.Body, tc.field)
		}
	}
	// Without a configured picker the name is unknown.
	plain := newTestServer(t, nil, Options{})
	if rec := call(t, plain, "POST", "/v1/select", body); rec.Code != 400 || !strings.Contains(rec.Body.String(), "unknown strategy") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

type recordingAsker struct{ got *AskRequest }

func (a recordingAsker) Ask(_ context.Context, req AskRequest) (AskResponse, error) {
	*a.got = req
	return AskResponse{Passages: []Passage{{ID: "a", Score: 1, Tokens: 1, Text: "x"}}, Selection: ctxsel.Selection{IDs: []string{"a"}, Indices: []int{0}, K: 1}}, nil
}

// /v1/ask hands the configured picker to the Asker for "strategy": "picker",
// and only then.
func TestAskWithPicker(t *testing.T) {
	srv := llmtest.New(pickertest.Garbage)
	defer srv.Close()
	c, _, err := llm.OpenSpec(srv.OpenAISpec("p"), llm.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := picker.New(c, picker.Config{Budget: 100, Fallback: "topk"})
	if err != nil {
		t.Fatal(err)
	}
	var got AskRequest
	s := newTestServer(t, nil, Options{Picker: p, Asker: recordingAsker{&got}})
	if rec := call(t, s, "POST", "/v1/ask", `{"query":"q","strategy":"picker"}`); rec.Code != 200 || got.Strategy.Selector != p || got.Strategy.Kind != ctxsel.SelectorKind {
		t.Fatalf("%d %s, request %+v", rec.Code, rec.Body, got)
	}
	if rec := call(t, s, "POST", "/v1/ask", `{"query":"q","strategy":"knee"}`); rec.Code != 200 || got.Strategy.Selector != nil || got.Strategy.Strategy == nil || got.Strategy.Kind != ctxsel.StrategyKind {
		t.Fatalf("%d %s, request %+v", rec.Code, rec.Body, got)
	}
	if rec := call(t, s, "POST", "/v1/ask", `{"query":"q","strategy":"picker:budget=5"}`); rec.Code != 400 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// /v1/ask with no strategy selects as `ctxsel ask` does: with the shipped
// default, ctxsel.DefaultStrategy (not /v1/select's adaptivek).
func TestAskDefaultStrategy(t *testing.T) {
	var got AskRequest
	s := newTestServer(t, nil, Options{Asker: recordingAsker{&got}})
	// The default is a text selector; a server without SelectorDeps leaves
	// it to the Asker (package ask supplies its sentence embedder).
	if rec := call(t, s, "POST", "/v1/ask", `{"query":"q"}`); rec.Code != 200 || got.Strategy.Kind != 0 || got.Strategy.Strategy != nil || got.Strategy.Selector != nil {
		t.Fatalf("%d %s, request %+v", rec.Code, rec.Body, got)
	}
	if rec := call(t, s, "POST", "/v1/ask", `{"query":"q","strategy":"knee"}`); rec.Code != 200 || got.Strategy.Spec != "knee" {
		t.Fatalf("%d %s, request %+v", rec.Code, rec.Body, got)
	}
}

// A composition over the configured picker: topk:k=2 keeps the two best
// candidates, the picker reads only those, and the response is over all
// of them. Routes and unknown selectors are refused with the field named.
func TestSelectComposition(t *testing.T) {
	srv := llmtest.New(pickertest.Gold(map[string][]string{"who?": {"b", "c"}}))
	defer srv.Close()
	c, _, err := llm.OpenSpec(srv.OpenAISpec("p"), llm.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := picker.New(c, picker.Config{Budget: 1000, Fallback: "topk"})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, nil, Options{Picker: p})
	cands := `"candidates":[{"id":"a","score":0.9,"text":"alpha"},{"id":"b","score":0.5,"text":"beta"},{"id":"c","score":0.1,"text":"gamma"}]`
	rec := call(t, s, "POST", "/v1/select", `{"query":"who?","strategy":"topk:k=2+picker",`+cands+`}`)
	var out struct {
		IDs         []string
		Indices     []int
		Explanation struct {
			N      int
			Reason string
		}
	}
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if strings.Join(out.IDs, ",") != "b" || out.Indices[0] != 1 || out.Explanation.N != 3 || !strings.HasPrefix(out.Explanation.Reason, "topk kept 2 of 3") {
		t.Fatalf("%s", rec.Body)
	}
	for body, field := range map[string]string{
		`{"query":"who?","strategy":"selfroute",` + cands + `}`:            "strategy", // an answering route: /v1/ask only
		`{"query":"who?","strategy":"topk+picker:budget=5",` + cands + `}`: "strategy",
		`{"strategy":"topk:k=2+picker",` + cands + `}`:                     "query",
	} {
		rec := call(t, s, "POST", "/v1/select", body)
		var e struct{ Error struct{ Field string } }
		if rec.Code != 400 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Field != field ||
			strings.Contains(body, "selfroute") && !strings.Contains(rec.Body.String(), "answering route") {
			t.Errorf("%s: %d %s, want field %s", body, rec.Code, rec.Body, field)
		}
	}
}
