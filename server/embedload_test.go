package server

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEmbedManySmallRequests: 64 concurrent one-text /v1/embeddings
// requests (a client embedding documents with a worker pool) on a default
// server with two embedding slots all succeed. The embedder holds the first
// two calls until the other 62 are queued, so every request is in flight at
// once, whatever the machine's speed.
func TestEmbedManySmallRequests(t *testing.T) {
	const clients = 64
	g := newGate()
	g.started = make(chan struct{}, clients)
	s := newTestServer(t, func(c *Config) { c.EmbedConcurrency = 2 }, Options{Embedder: g})
	codes := make(chan int, clients)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- call(t, s, "POST", "/v1/embeddings", `{"input":"one short sentence"}`).Code
		}()
	}
	limit := s.embedder.(boundedEmbedder).limit
	<-g.started
	<-g.started
	for limit.waitingTexts.Load()+int64(limit.refused.Load()) < clients-2 {
		// Every other request is queued or was refused.
		waitABit()
	}
	close(g.release)
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		if c == http.StatusOK {
			ok++
		}
	}
	if ok != clients || limit.refused.Load() != 0 {
		t.Errorf("%d of %d requests succeeded, %d refused", ok, clients, limit.refused.Load())
	}
}

// TestEmbedClientGone: a client that disconnects while its request waits
// for the embedder, or while the embedder runs, gets 499; the server logs
// no error and /metrics counts no 502.
func TestEmbedClientGone(t *testing.T) {
	g := newGate()
	var logs bytes.Buffer
	s := newTestServer(t, func(c *Config) { c.EmbedConcurrency = 1 },
		Options{Embedder: g, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	send := func(path, body string) (context.CancelFunc, chan int) {
		ctx, cancel := context.WithCancel(context.Background())
		req := httptest.NewRequest("POST", path, strings.NewReader(body)).WithContext(ctx)
		req.Host = "127.0.0.1" // a loopback server answers loopback Host values only
		req.Header.Set("Content-Type", "application/json")
		done := make(chan int, 1)
		go func() {
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			done <- rec.Code
		}()
		return cancel, done
	}
	limit := s.embedder.(boundedEmbedder).limit
	// The first takes the one slot and is embedding; the others wait.
	cancelRunning, running := send("/v1/embeddings", `{"input":"abc"}`)
	select { // a request refused before it embeds fails here instead of hanging
	case <-g.started:
	case code := <-running:
		t.Fatalf("the first request ended with %d before it embedded", code)
	}
	cancelWaiting, waiting := send("/v1/embeddings", `{"input":["abc","def"]}`)
	cancelRerank, rerank := send("/v1/rerank", `{"query":"q","documents":["abc"]}`)
	for limit.waiting.Load() != 2 {
		waitABit()
	}
	cancelWaiting()
	cancelRunning()
	cancelRerank()
	for name, ch := range map[string]chan int{"running": running, "waiting": waiting, "rerank": rerank} {
		if code := <-ch; code != 499 {
			t.Errorf("%s request whose client left: %d, want 499", name, code)
		}
	}
	close(g.release)
	m := call(t, s, "GET", "/metrics", "").Body.String()
	if strings.Contains(m, `code="502"`) || !strings.Contains(m, `ctxsel_http_requests_total{route="/v1/embeddings",code="499"} 2`) {
		t.Errorf("metrics after three disconnects:\n%s", grepLines(m, "ctxsel_http_requests_total"))
	}
	if strings.Contains(logs.String(), "level=ERROR") || strings.Contains(logs.String(), "embedder failed") {
		t.Errorf("a disconnect was logged as a failure:\n%s", logs.String())
	}
}

func grepLines(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

// waitABit yields while a test polls for goroutines to reach a state.
func waitABit() { time.Sleep(time.Millisecond) }
