package server

import (
	"encoding/json"
	"strings"
	"testing"

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
