package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestShutdownCutAnswers503: an ask still running (its back end ignoring
// its context) when shutdown_timeout passes gets a 503 saying why, not an
// empty reply, and the log says it was cut.
func TestShutdownCutAnswers503(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var log syncBuffer
	s := newTestServer(t, func(c *Config) { c.ShutdownTimeout = Duration(50e6) },
		Options{Asker: stuckAsker{release}, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	entered := make(chan struct{})
	var once sync.Once
	s.hook = func(r *http.Request) {
		if r.URL.Path == "/v1/ask" {
			once.Do(func() { close(entered) })
		}
	}
	addr, stop := serveOn(t, s)
	type answer struct {
		code int
		body string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := post("http://"+addr+"/v1/ask", `{"query":"q"}`)
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		got <- answer{code: res.StatusCode, body: string(b)}
	}()
	<-entered
	if err := stop(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve with a request past shutdown_timeout: %v", err)
	}
	a := <-got
	if a.err != nil || a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "shutting down") {
		t.Fatalf("a request cut at shutdown: %d %q %v", a.code, a.body, a.err)
	}
	if !strings.Contains(log.String(), "request cut by shutdown_timeout") {
		t.Fatalf("no log line for the cut request:\n%s", log.String())
	}
}
