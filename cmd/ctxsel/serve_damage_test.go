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
	var log strings.Builder
	srv, err := server.New(server.DefaultConfig(), server.Options{Asker: asker, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	get := func(method, path, body string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
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
	// The log's advice names the index for the operator (the client's
	// copy said "the index", and so did the log: "--index the index").
	if !strings.Contains(log.String(), "--index "+idx) || strings.Contains(log.String(), "--index the index") {
		t.Errorf("the log's advice does not name the index:\n%s", log.String())
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
	req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), root) || !strings.Contains(rec.Body.String(), "the index holds no passages") {
		t.Errorf("empty index: %d %s", rec.Code, rec.Body)
	}
}

// An index deleted under a running server: /readyz fails and /v1/ask is a
// 503 naming no path (it was a 400, "the index holds no passages", as if
// the client were at fault); the log names the path for the operator.
func TestServeVanishedIndex(t *testing.T) {
	useHashEmbedder(t)
	root := t.TempDir()
	idx := filepath.Join(root, "idx")
	doc := filepath.Join(root, "etna.txt")
	os.WriteFile(doc, []byte("Mount Etna is an active volcano on Sicily."), 0o644)
	if code, _, errs := runCLI(t, "", "index", "add", "--index", idx, doc); code != 0 {
		t.Fatalf("index add: %s", errs)
	}
	asker, _, closeAsker, err := newIndexAsker(context.Background(), "serve", idx, askReader{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeAsker()
	var log strings.Builder
	srv, err := server.New(server.DefaultConfig(), server.Options{Asker: asker, MCP: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ready := func() int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/readyz", nil)
		req.Host = "localhost"
		srv.Handler().ServeHTTP(rec, req)
		return rec.Code
	}
	ask := func() (int, string) {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, localPost("/v1/ask", `{"query":"volcano"}`))
		return rec.Code, rec.Body.String()
	}
	if code := ready(); code != http.StatusOK {
		t.Fatalf("sound index: /readyz %d", code)
	}
	if code, body := ask(); code != http.StatusOK {
		t.Fatalf("sound index: /v1/ask %d %s", code, body)
	}
	if err := os.RemoveAll(idx); err != nil {
		t.Fatal(err)
	}
	if code := ready(); code != http.StatusServiceUnavailable {
		t.Errorf("deleted index: /readyz %d, want 503", code)
	}
	code, body := ask()
	if code != http.StatusServiceUnavailable || strings.Contains(body, root) || !strings.Contains(body, "unavailable") {
		t.Errorf("deleted index: /v1/ask %d %s, want 503 naming no path", code, body)
	}
	if !strings.Contains(log.String(), idx) {
		t.Errorf("the log does not name the index's path for the operator:\n%s", log.String())
	}
}
