package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/server"
)

// A served index that gets damaged: /readyz fails, and /v1/ask's error
// names neither the index's path nor its files nor their checksums.
func TestServeDamagedIndex(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	for name, text := range map[string]string{"etna.txt": "Mount Etna is an active volcano on Sicily.", "bread.txt": "Bread rises because yeast makes gas."} {
		doc := filepath.Join(root, name)
		os.WriteFile(doc, []byte(text), 0o644)
		if code, _, errs := runCLI(t, "", "index", "add", "--index", filepath.Join(root, "idx"), doc); code != 0 {
			t.Fatalf("index add: %s", errs)
		}
	}
	idx := filepath.Join(root, "idx")
	asker, _, closeAsker, err := newIndexAsker(context.Background(), "serve", idx, askReader{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAsker()
	srv, err := server.New(server.DefaultConfig(), server.Options{Asker: asker, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if code, body := get("GET", "/readyz", ""); code != http.StatusOK {
		t.Fatalf("sound index: %d %s", code, body)
	}
	segs, _ := filepath.Glob(filepath.Join(idx, "seg-*.ctxseg"))
	for _, seg := range segs {
		b, _ := os.ReadFile(seg)
		os.WriteFile(seg, b[:len(b)/2], 0o644)
	}
	if code, body := get("GET", "/readyz", ""); code != http.StatusServiceUnavailable || strings.Contains(body, root) {
		t.Errorf("damaged index: /readyz %d %s", code, body)
	}
	code, body := get("POST", "/v1/ask", `{"query":"volcano"}`)
	if code < 500 || strings.Contains(body, root) || strings.Contains(body, ".ctxseg") || strings.Contains(body, "checksum") {
		t.Errorf("damaged index: /v1/ask %d %s", code, body)
	}
}

// An input error a client can fix does not name the index's location.
func TestServeAskErrorHidesIndexLocation(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	idx := filepath.Join(root, "idx")
	doc := filepath.Join(root, "a.txt")
	os.WriteFile(doc, []byte("Some text."), 0o644)
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, doc); code != 0 {
		t.Fatalf("index add: %s", errs)
	}
	if code, _, errs := runCLI(t, "", "index", "rm", "--index", idx, doc); code != 0 {
		t.Fatalf("index rm: %s", errs)
	}
	asker, _, closeAsker, err := newIndexAsker(context.Background(), "serve", idx, askReader{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAsker()
	srv, err := server.New(server.DefaultConfig(), server.Options{Asker: asker, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/v1/ask", strings.NewReader(`{"query":"text"}`))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), root) || !strings.Contains(rec.Body.String(), "the index holds no passages") {
		t.Errorf("empty index: %d %s", rec.Code, rec.Body)
	}
}
