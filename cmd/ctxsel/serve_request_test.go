package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// localPost is a JSON POST to the server's handler as a client on loopback
// sends it: a loopback Host (the only ones a loopback server serves) and
// Content-Type application/json (required on every POST).
func localPost(path, body string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Host = "127.0.0.1"
	req.Header.Set("Content-Type", "application/json")
	return req
}

// --allowed-hosts adds Host values to a loopback server's; others are
// refused, and a value that is no host is a usage error.
func TestServeAllowedHosts(t *testing.T) {
	var stderr bytes.Buffer
	srv, done, err := newServe(context.Background(), []string{"--embedder", "none", "--allowed-hosts", "ctxsel.lan, proxy.local:8080"}, &stderr)
	if err != nil {
		t.Fatalf("%v %s", err, stderr.String())
	}
	defer done()
	for host, want := range map[string]int{"ctxsel.lan": 200, "CTXSEL.lan:1234": 200, "proxy.local:8080": 200, "proxy.local:9090": 403, "localhost:8080": 200, "attacker.example": 403} {
		req := httptest.NewRequest(http.MethodGet, "/v1/strategies", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
	if _, _, err := newServe(context.Background(), []string{"--embedder", "none", "--allowed-hosts", "http://ctxsel.lan/"}, &stderr); !errors.As(err, new(usageError)) {
		t.Fatalf("--allowed-hosts http://ctxsel.lan/: %v", err)
	}
}
