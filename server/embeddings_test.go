package server

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type embeddingsResponse struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string          `json:"object"`
		Index     int             `json:"index"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

func decodeVector(t *testing.T, raw json.RawMessage) []float32 {
	t.Helper()
	var v []float32
	if err := json.Unmarshal(raw, &v); err == nil {
		return v
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("embedding %s: neither floats nor base64", raw)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		t.Fatalf("base64 %q: %v", s, err)
	}
	for i := 0; i < len(b); i += 4 {
		v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return v
}

func TestEmbeddingsMatchTheEmbedder(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	texts := []string{"The cat sat.", "zebra"}
	want, _ := fakeEmbedder{}.Embed(t.Context(), texts)
	for _, format := range []string{"", "float", "base64"} {
		body := `{"model":"fake-letters","input":["The cat sat.","zebra"]` + map[string]string{"": "", "float": `,"encoding_format":"float"`, "base64": `,"encoding_format":"base64"`}[format] + `}`
		rec := call(t, s, http.MethodPost, "/v1/embeddings", body)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", format, rec.Code, rec.Body)
		}
		var out embeddingsResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		if out.Object != "list" || out.Model != "fake-letters" || len(out.Data) != 2 || out.Usage.PromptTokens <= 0 {
			t.Fatalf("%s: %+v", format, out)
		}
		for i, d := range out.Data {
			got := decodeVector(t, d.Embedding)
			if d.Index != i || d.Object != "embedding" || fmt.Sprint(got) != fmt.Sprint(want[i]) {
				t.Errorf("%s: data[%d] = %v (index %d), want %v", format, i, got, d.Index, want[i])
			}
		}
	}
	// A single string is one input.
	rec := call(t, s, http.MethodPost, "/v1/embeddings", `{"input":"zebra"}`)
	var out embeddingsResponse
	if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil || len(out.Data) != 1 || fmt.Sprint(decodeVector(t, out.Data[0].Embedding)) != fmt.Sprint(want[1]) {
		t.Errorf("single input: %d %s", rec.Code, rec.Body)
	}
}

func TestEmbeddingsErrors(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MaxTextBytes = 10 }, Options{Embedder: fakeEmbedder{}})
	many := `["` + strings.Repeat(`a","`, maxEmbedInputs) + `a"]`
	for _, tc := range []struct {
		s            *Server
		body         string
		status       int
		field, inMsg string
	}{
		{s, `{"input":["a"],"model":"text-embedding-3-small"}`, 400, "model", "fake-letters"},
		{s, `{"input":["a"],"dimensions":1536}`, 400, "dimensions", "26"},
		{s, `{"input":[[1,2,3]]}`, 400, "input[0]", "token arrays"},
		{s, `{"input":[]}`, 400, "input", ""},
		{s, `{"input":[""]}`, 400, "input[0]", ""},
		{s, `{}`, 400, "input", ""},
		{s, `{"input":"aaaaaaaaaaaaa"}`, 413, "input[0]", ""},
		{s, `{"input":` + many + `}`, 413, "input", "2048"},
		{s, `{"input":"a","encoding_format":"int8"}`, 400, "encoding_format", ""},
		{s, `{"input":"a","extra":1}`, 400, "extra", ""},
		{newTestServer(t, nil, Options{}), `{"input":"a"}`, 501, "", "no embedder"},
		{newTestServer(t, nil, Options{Embedder: fakeEmbedder{fail: fmt.Errorf("dial tcp 10.0.0.1:443: refused")}}), `{"input":"a"}`, 502, "", "embedder failed (request"},
	} {
		rec := call(t, tc.s, http.MethodPost, "/v1/embeddings", tc.body)
		var e struct {
			Error struct{ Field, Message string } `json:"error"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		if rec.Code != tc.status || e.Error.Field != tc.field || !strings.Contains(e.Error.Message, tc.inMsg) || strings.Contains(rec.Body.String(), "10.0.0.1") {
			t.Errorf("%.80s: %d %s, want %d field %q", tc.body, rec.Code, rec.Body, tc.status, tc.field)
		}
	}
}

func FuzzEmbeddingsRequest(f *testing.F) {
	for _, seed := range []string{`{"input":["a","b"],"model":"fake-letters","encoding_format":"base64"}`, `{"input":"x","dimensions":26,"user":"u"}`, `{"input":[1]}`, `{"input":null}`,
		`{"input":[{"text":"a"},"b"],"task":"retrieval.query","normalized":true,"late_chunking":false,"embedding_type":"float"}`,
		`{"input":[{"image":"x"}],"encoding_type":"base64"}`} {
		f.Add(seed)
	}
	s, err := New(DefaultConfig(), Options{Logger: slog.New(slog.DiscardHandler), Embedder: fakeEmbedder{}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/v1/embeddings", strings.NewReader(body))
		req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && (rec.Code < 400 || rec.Code >= 500) {
			t.Fatalf("%q: status %d %s", body, rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%q: response is not JSON: %s", body, rec.Body)
		}
		if rec.Code == http.StatusOK && !json.Valid([]byte(body)) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
	})
}

// TestSelectEmbedFailureHidesBackend: when the embedder behind text
// candidates fails, /v1/select answers 502 with the request id, and the
// backend's own error (which may name its address) stays in the log.
func TestSelectEmbedFailureHidesBackend(t *testing.T) {
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{fail: fmt.Errorf("dial tcp 10.0.0.1:443: connection refused")}})
	rec := call(t, s, http.MethodPost, "/v1/select", `{"query":"q","candidates":[{"id":"a","text":"alpha"},{"id":"b","text":"beta"}]}`)
	if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "embedder failed (request") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if strings.Contains(rec.Body.String(), "10.0.0.1") || strings.Contains(rec.Body.String(), "dial tcp") {
		t.Fatalf("backend detail reached the client: %s", rec.Body)
	}
}
