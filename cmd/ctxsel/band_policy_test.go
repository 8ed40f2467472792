package main

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/ldar"
)

// TestBandPolicyFromEnv: $CTXSEL_BAND_POLICY is read by the command line
// and reaches every band it builds: serve's /v1/select (with request
// params too) and /v1/ask; a file that does not load is a usage error, for
// serve at start.
func TestBandPolicyFromEnv(t *testing.T) {
	useHashEmbedder(t)
	// A policy that reads the top 4 ranks: its reason says so, where the
	// embedded policy's (window 32) reads all of a short curve.
	m, err := ldar.NewModel(ldar.Config{Window: 4, Freqs: 2, FreqSigma: 0.1, Dim: 8, Heads: 2, Layers: 1, FFN: 8, Hidden: 8, Head: "exp", Pool: "attention"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	path := filepath.Join(root, "p.safetensors")
	if err := ldar.NewPolicy(m, nil).Save(path); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for i := range 12 {
		fmt.Fprintf(&text, "Sentence number %d tells of volcano %d on an island. ", i, i)
	}
	doc := filepath.Join(root, "doc.txt")
	if err := os.WriteFile(doc, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(root, "idx")
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, "--chunker", "sentences:max_tokens=12", doc); code != 0 {
		t.Fatalf("index add: %s", errs)
	}
	var cands []string
	for i := range 12 {
		cands = append(cands, fmt.Sprintf(`{"id":"p%d","score":%v,"tokens":%d}`, i, 1/float64(i+1), 10+i))
	}
	selectBody := `{"strategy":"band","params":{"max_k":30},"candidates":[` + strings.Join(cands, ",") + `]}`
	for _, tc := range []struct {
		env, want string
	}{
		{path, "over the top 4 of 12 ranks"},
		{"", "over the top 12 of 12 ranks"},
	} {
		t.Setenv(envBandPolicy, tc.env)
		var stderr strings.Builder
		srv, done, err := newServe(context.Background(), []string{"--index", idx}, &stderr)
		if err != nil {
			t.Fatalf("serve: %v %s", err, stderr.String())
		}
		h := srv.Handler()
		for _, req := range []struct{ route, body string }{
			{"/v1/select", selectBody},
			{"/v1/ask", `{"query":"volcano on an island","strategy":"band","params":{"max_k":30},"top_n":12}`},
			{"/v1/ask", `{"query":"volcano on an island","strategy":"band:max_k=30","top_n":12}`},
		} {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, localPost(req.route, req.body))
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("$%s=%q: %s %s: %d %s, want %q", envBandPolicy, tc.env, req.route, req.body, rec.Code, rec.Body, tc.want)
			}
		}
		done()
	}

	missing := filepath.Join(root, "missing.safetensors")
	t.Setenv(envBandPolicy, missing)
	var stderr strings.Builder
	if _, _, err := newServe(context.Background(), []string{"--index", idx}, &stderr); !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), envBandPolicy) {
		t.Errorf("serve with a missing policy: %v", err)
	}
	code, _, errs := runCLI(t, "", "eval", "--scorer", "bm25", "--limit", "3", "--pool", "10", "--strategies", "band")
	if code != 2 || !strings.Contains(errs, envBandPolicy) {
		t.Errorf("eval with a missing policy: exit %d %s", code, errs)
	}
	// A command that builds no band never reads it.
	if code, _, errs := runCLI(t, "", "eval", "--scorer", "bm25", "--limit", "3", "--pool", "10", "--strategies", "topk:k=1"); code != 0 {
		t.Errorf("eval without band: exit %d %s", code, errs)
	}
}
