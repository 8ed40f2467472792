package server

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/wire"
)

var testLimits = limits{Limits: wire.Limits{MaxCandidates: 1000, MaxText: 1 << 16, MaxDim: 4096}}

func TestDecodeSelect(t *testing.T) {
	body := `{
		"query": "q\u00e9\ud83d\ude00",
		"query_vector": [1, -0.5, 2e-3],
		"strategy": "adaptivek:head=0.05",
		"params": {"buffer": 2, "max_tokens": 4000},
		"order": "document",
		"candidates": [
			{"id": "a", "score": 0.9, "tokens": 12, "meta": {"deep": [1, {"x": null}], "b": true}},
			{"id": 7, "score": -1.5E+2, "text": "tab\there \"quoted\" \\ \/"},
			{"id": "c\n", "vector": [0.5, 0.25], "score": null, "tokens": 1e3},
			{"id": "-0.5e1", "text": null}
		]
	}`
	var r selectRequest
	if err := decodeSelect(body, &r, testLimits); err != nil {
		t.Fatal(err)
	}
	if r.query != "qé😀" || r.strategy != "adaptivek:head=0.05" || r.order != "document" || !r.hasQVec ||
		len(r.queryVec) != 3 || r.queryVec[2] != 2e-3 || len(r.params) != 2 || r.params[1] != (paramIn{"max_tokens", 4000}) {
		t.Fatalf("top level: %+v", r)
	}
	c := r.Cands
	if len(c) != 4 {
		t.Fatalf("%d candidates", len(c))
	}
	if c[0].ID != "a" || c[0].Score != 0.9 || c[0].Tokens != 12 || r.Has[0] != wire.HasScore|wire.HasTokens {
		t.Errorf("c0 %+v %b", c[0], r.Has[0])
	}
	if c[1].ID != "7" || c[1].Score != -150 || r.Text(1) != "tab\there \"quoted\" \\ /" || r.Has[1] != wire.HasScore|wire.HasText {
		t.Errorf("c1 %+v %q %b", c[1], r.Text(1), r.Has[1])
	}
	if c[2].ID != "c\n" || r.Has[2] != wire.HasVector|wire.HasTokens || c[2].Tokens != 1000 || !slices.Equal(r.Vector(2), []float64{0.5, 0.25}) {
		t.Errorf("c2 %+v %v", c[2], r.Vector(2))
	}
	if c[3].ID != "-0.5e1" || r.Has[3] != 0 || r.Text(3) != "" || r.Vector(3) != nil {
		t.Errorf("c3 %+v", c[3])
	}
}

func TestDecodeSelectErrors(t *testing.T) {
	for _, tc := range []struct {
		body, field, msg string
	}{
		{``, "", "malformed"},
		{`[]`, "", "must be an object"},
		{`{"candidates": [`, "candidates[0]", "malformed"},
		{`{"candidates": [{"id":"a","score":NaN}]}`, "candidates[0].score", "malformed"},
		{`{"candidates": [{"id":"a","score":Infinity}]}`, "candidates[0].score", "malformed"},
		{`{"candidates": [{"id":"a","score":1e999}]}`, "candidates[0].score", "out of range"},
		{`{"candidates": [{"id":"a","score":-1e999}]}`, "candidates[0].score", "out of range"},
		{`{"candidates": [{"id":"a","score":"0.5"}]}`, "candidates[0].score", "must be a number"},
		{`{"candidates": [{"id":"a","score":01}]}`, "candidates[0]", "malformed"},
		{`{"candidates": [{"id":"a","score":1.}]}`, "candidates[0].score", "malformed"},
		{`{"candidates": [{"id":"a","score":.5}]}`, "candidates[0].score", "malformed"},
		{`{"candidates": [{"id":"a","score":-}]}`, "candidates[0].score", "malformed"},
		{`{"candidates": [{"id":"a","score":1e}]}`, "candidates[0].score", "malformed"},
		{`{"candidates": [{"id":"a","tokens":-1}]}`, "candidates[0].tokens", "whole number"},
		{`{"candidates": [{"id":"a","tokens":1.5}]}`, "candidates[0].tokens", "whole number"},
		{`{"candidates": [{"id":"a","tokens":1e10}]}`, "candidates[0].tokens", "whole number"},
		{`{"candidates": [{"score":1}]}`, "candidates[0].id", "missing"},
		{`{"candidates": [{"id":"","score":1}]}`, "candidates[0].id", "empty"},
		{`{"candidates": [{"id":true,"score":1}]}`, "candidates[0].id", "string or a number"},
		{`{"candidates": [{"id":"a","id":"b"}]}`, "candidates[0].id", "twice"},
		{`{"candidates": [{"id":"a","score":1,"score":2}]}`, "candidates[0].score", "twice"},
		{`{"candidates": [{"id":"a","Score":1}]}`, "candidates[0].Score", `did you mean "score"`},
		{`{"candidates": [{"id":"a","score":1,"tokns":3}]}`, "candidates[0].tokns", `did you mean "tokens"`},
		{`{"candidates": [{"id":"a","vector":[1,"x"]}]}`, "candidates[0].vector", "component 1"},
		{`{"candidates": [{"id":"a",}]}`, "candidates[0]", "malformed"},
		{`{"candidates": [{"id":"a"},]}`, "candidates[1]", "malformed"},
		{`{"candidates": [{"id":"a"} {"id":"b"}]}`, "candidates", "malformed"},
		{"{\"candidates\": [{\"id\":\"a\x01\"}]}", "candidates[0].id", "control character"},
		{`{"candidates": [{"id":"a\q"}]}`, "candidates[0].id", "invalid escape"},
		{"{\"candidates\": [{\"id\":\"a\xff\",\"score\":1}]}", "candidates[0].id", "not valid UTF-8"},
		{"{\"candidates\": [{\"id\":\"a\xff\\n\",\"score\":1}]}", "candidates[0].id", "not valid UTF-8"},
		{`{"candidates": [{"id":"a\ud800","score":1}]}`, "candidates[0].id", "not valid UTF-8"},
		{`{"candidates": [{"id":"\u12"}]}`, "candidates[0].id", `\u escape`},
		{`{"candidates": [{"id":"a`, "candidates[0].id", "unterminated"},
		{`{"candidates": [{"id":"a","meta":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}]}`, "candidates[0].meta", "nested deeper"},
		{`{"candidates": [], "candidates": []}`, "candidates", "twice"},
		{`{"stratgy": "topk"}`, "stratgy", "unknown field"},
		{`{"strategy": 3}`, "strategy", "must be a string"},
		{`{"params": {"k": "3"}}`, "params.k", "must be a number"},
		{`{"params": {"k": 3, "k": 4}}`, "params.k", "twice"},
		{`{"params": []}`, "params", "must be an object"},
		{`{"query_vector": {}}`, "query_vector", "must be an array"},
		{`{"candidates": []} x`, "", "after the top-level object"},
		{`{"candidates": [] `, "", "malformed"},
		{`{"query": tru}`, "query", "must be a string"},
		{`{"candidates": [{"id":"a","flag":tru}]}`, "candidates[0].flag", "invalid literal"},
	} {
		var r selectRequest
		err := decodeSelect(tc.body, &r, testLimits)
		var fe *wire.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("%s: got %v, want a field error", tc.body, err)
			continue
		}
		if fe.Field() != tc.field || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("%s:\n got field %q msg %q\nwant field %q msg containing %q", tc.body, fe.Field(), fe.Msg, tc.field, tc.msg)
		}
	}
}

func TestDecodeLimits(t *testing.T) {
	lim := limits{Limits: wire.Limits{MaxCandidates: 2, MaxText: 5, MaxDim: 3}}
	for _, tc := range []struct{ body, field string }{
		{`{"candidates": [{"id":"a"},{"id":"b"},{"id":"c"}]}`, "candidates"},
		{`{"candidates": [{"id":"a","text":"123456"}]}`, "candidates[0].text"},
		{`{"query": "123456"}`, "query"},
		{`{"candidates": [{"id":"a","vector":[1,2,3,4]}]}`, "candidates[0].vector"},
		{`{"query_vector": [1,2,3,4]}`, "query_vector"},
	} {
		var r selectRequest
		err := decodeSelect(tc.body, &r, lim)
		var fe *wire.FieldError
		if !errors.As(err, &fe) || fe.Status != http.StatusRequestEntityTooLarge || fe.Field() != tc.field {
			t.Errorf("%s: got %v (%+v), want 413 on %s", tc.body, err, fe, tc.field)
		}
	}
}

// Invalid UTF-8 (or a lone surrogate escape) in a query or a text is
// refused naming its field, as it is in an id: replaced by U+FFFD it would
// be scored as a text the caller did not send. U+FFFD itself is valid.
func TestDecodeInvalidUTF8(t *testing.T) {
	for _, tc := range []struct {
		decode func(string) error
		body   string
		field  string
	}{
		{func(b string) error { return decodeSelect(b, &selectRequest{}, testLimits) },
			"{\"query\":\"q\",\"candidates\":[{\"id\":\"a\",\"text\":\"a\xffb\"}]}", "candidates[0].text"},
		{func(b string) error { return decodeSelect(b, &selectRequest{}, testLimits) },
			`{"query":"\ud800","candidates":[{"id":"a","score":1}]}`, "query"},
		{func(b string) error { return decodeAsk(b, &askRequest{}, testLimits) }, "{\"query\":\"a\xc3\"}", "query"},
		{func(b string) error { return decodeRerank(b, &rerankRequest{}, testLimits) },
			"{\"query\":\"q\",\"documents\":[\"ok\",\"\xff\"]}", "documents[1]"},
		{func(b string) error { return decodeRerank(b, &rerankRequest{}, testLimits) },
			"{\"query\":\"q\",\"documents\":[{\"text\":\"\xff\"}]}", "documents[0].text"},
		{func(b string) error { return decodeEmbeddings(b, &embeddingsRequest{}, testLimits) }, "{\"input\":\"\xff\"}", "input[0]"},
		{func(b string) error { return decodeEmbeddings(b, &embeddingsRequest{}, testLimits) }, "{\"input\":[\"a\",\"\xff\"]}", "input[1]"},
		{func(b string) error { return decodeSearch(b, &searchRequest{}, testLimits) }, "{\"query\":\"\xff\"}", "query"},
	} {
		err := tc.decode(tc.body)
		var fe *wire.FieldError
		if !errors.As(err, &fe) || fe.Field() != tc.field || !strings.Contains(fe.Msg, "UTF-8") || fe.Status >= 500 {
			t.Errorf("%q: got %v, want a 400 on %s", tc.body, err, tc.field)
		}
	}
	var r selectRequest
	if err := decodeSelect("{\"query\":\"q\uFFFD\",\"candidates\":[{\"id\":\"a\uFFFDb\",\"text\":\"\uFFFD\"}]}", &r, testLimits); err != nil ||
		r.Cands[0].ID != "a\uFFFDb" || r.Text(0) != "\uFFFD" {
		t.Fatalf("U+FFFD itself: %+v, err %v", r.Cands, err)
	}
}

// TestDecodeMatchesEncodingJSON checks the hand-written decoder against
// encoding/json on what encoding/json writes, escapes and all.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	type cand struct {
		ID     string    `json:"id"`
		Score  float64   `json:"score"`
		Tokens int       `json:"tokens"`
		Text   string    `json:"text"`
		Vector []float64 `json:"vector,omitempty"`
	}
	cands := []cand{
		{ID: "<html>&\u2028\u2029\x00\x1f", Score: math.SmallestNonzeroFloat64, Tokens: math.MaxInt32, Text: "é😀\t\"\\"},
		{ID: "x", Score: -math.MaxFloat64, Text: strings.Repeat("ab", 100)},
		{ID: "y", Score: 1e-320, Vector: []float64{1e308, -1e-308, 0}},
	}
	b, err := json.Marshal(map[string]any{"candidates": cands, "strategy": "topk", "params": map[string]float64{"k": 2}})
	if err != nil {
		t.Fatal(err)
	}
	var r selectRequest
	if err := decodeSelect(string(b), &r, testLimits); err != nil {
		t.Fatal(err)
	}
	for i, c := range cands {
		got := r.Cands[i]
		if got.ID != c.ID || got.Score != c.Score || got.Tokens != c.Tokens || r.Text(i) != c.Text || !slices.Equal(r.Vector(i), c.Vector) {
			t.Errorf("candidate %d: got %+v %q %v want %+v", i, got, r.Text(i), r.Vector(i), c)
		}
	}
}

// FuzzSelectRequest feeds arbitrary bodies to the decoder and to the whole
// handler: no panic, only 200 or 4xx, always a JSON body, and the decoder
// never accepts what is not JSON nor calls valid JSON malformed.
func FuzzSelectRequest(f *testing.F) {
	for _, seed := range []string{
		`{"candidates":[{"id":"a","score":0.9,"tokens":3},{"id":"b","score":0.1,"text":"hello"}],"strategy":"adaptivek","params":{"buffer":0}}`,
		`{"query_vector":[1,0],"candidates":[{"id":"a","vector":[1,0]},{"id":"b","vector":[0,1]}],"strategy":"topk:k=1","order":"edges"}`,
		`{"candidates":[{"id":"a","text":"x"}],"query":"q"}`,
		`{"candidates":[{"id":1,"score":1e999}]}`,
		`{"candidates":[{"id":"a","score":1},{"id":"a","score":2}]}`,
		`{"candidates":[{"id":"a","score":1}],"strategy":"knee","params":{"cutoff":0}}`,
		`{"candidates":[{"id":"\ud800","score":-0}],"strategy":"threshold:min=-1e308"}`,
		`{"candidates":[{"id":"a","score":1,"x":[[[{}]]]}],"strategy":"topp","params":{"p":1,"temperature":1e-300}}`,
		`{"candidates":[{"id":"a","score":1.7976931348623157e308},{"id":"b","score":-1.7976931348623157e308}]}`,
		"{\"candidates\":[{\"id\":\"\xff\",\"score\":1}]}",
		`[1,2]`, `nul`, `{"candidates":[{"id":"a","score":1}]}}`,
		`{"query":"who","strategy":"evidence:budget=9","candidates":[{"id":"a","score":1,"text":"T\nOne. Two three."},{"id":"b","score":0.5,"text":"x"}]}`,
		`{"query":"who","strategy":"topk:k=1+evidence:budget=3","order":"document","candidates":[{"id":"a","score":1,"text":"a. b."},{"id":"b","score":1,"text":""}]}`,
		`{"query":"E105?","strategy":"evidence:budget=40","candidates":[{"id":"a","score":1,"text":"| E105 | full | replace |\n","above":"# M\n| Code | Meaning | Do |\n| --- | --- | --- |"},{"id":"b","score":0.5,"text":"x","above":null}]}`,
		`{"query":"owed","strategy":"evidence:budget=30","candidates":[{"id":"a","score":1,"text":"  Debt      3,500      -\n  Payables  6,904  5,117\n","above":"        March 31,  Dec 31,\n\t   2024\t2023\r\f"}]}`,
	} {
		f.Add(seed)
	}
	// The evidence selector too: its sentence embedder is a test one.
	s, err := New(DefaultConfig(), Options{Logger: slog.New(slog.DiscardHandler), SelectorDeps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: fakeEmbedder{}})})
	if err != nil {
		f.Fatal(err)
	}
	lim := s.limits()
	f.Fuzz(func(t *testing.T, body string) {
		var r selectRequest
		err := decodeSelect(body, &r, lim)
		valid := json.Valid([]byte(body))
		if err == nil && !valid {
			t.Fatalf("decoded invalid JSON %q", body)
		}
		for i := range r.Cands {
			if err == nil && !utf8.ValidString(r.Cands[i].ID) {
				t.Fatalf("id %q of %q is not valid UTF-8", r.Cands[i].ID, body)
			}
		}
		var fe *wire.FieldError
		if err != nil && valid && errors.As(err, &fe) && strings.HasPrefix(fe.Msg, "malformed") && !strings.Contains(fe.Msg, "nested deeper") {
			t.Fatalf("valid JSON %q called malformed: %v", body, err)
		}

		req := httptest.NewRequest(http.MethodPost, "/v1/select", strings.NewReader(body))
		req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && (rec.Code < 400 || rec.Code >= 500) {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
		out, _ := io.ReadAll(rec.Body)
		if !json.Valid(out) {
			t.Fatalf("response is not JSON for %q: %s", body, out)
		}
	})
}

// FuzzAskRequest feeds arbitrary bodies to the /v1/ask decoder: no panic,
// invalid JSON never accepted, and a decoded retriever is the string sent.
func FuzzAskRequest(f *testing.F) {
	for _, seed := range []string{
		`{"query":"what?","strategy":"adaptivek","params":{"buffer":0},"order":"document","top_n":20,"retriever":"hybrid"}`,
		`{"query":"q","retriever":"bm25"}`, `{"query":"q","retriever":null}`, `{"query":"q","retriever":7}`,
		`{"query":"q","retriever":"a","retriever":"b"}`, `{"query":"\ud800","retriever":"\u0000"}`, `[1]`, `{`,
	} {
		f.Add(seed)
	}
	s, err := New(DefaultConfig(), Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		f.Fatal(err)
	}
	lim := s.limits()
	f.Fuzz(func(t *testing.T, body string) {
		var r askRequest
		err := decodeAsk(body, &r, lim)
		if err == nil && !json.Valid([]byte(body)) {
			t.Fatalf("decoded invalid JSON %q", body)
		}
		if err == nil && r.retriever != "" {
			var v struct {
				Retriever string `json:"retriever"`
			}
			if json.Unmarshal([]byte(body), &v) == nil && v.Retriever != r.retriever && !strings.ContainsRune(body, '\\') && utf8.ValidString(body) {
				t.Fatalf("%q: retriever %q, encoding/json reads %q", body, r.retriever, v.Retriever)
			}
		}
	})
}
