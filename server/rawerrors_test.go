package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawExchange sends req on a new connection to addr and reads the answer.
func rawExchange(t *testing.T, addr, req string) (*http.Response, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	go conn.Write([]byte(req)) // a large request may be refused before it is all sent
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// TestGoErrorsAsJSON: what net/http answers before any handler (headers
// over the limit: 431; no Host: 400; an unknown transfer coding: 501) is
// JSON like every other error; a handler's own text/plain answer is not
// touched.
func TestGoErrorsAsJSON(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	addr, _ := serveOn(t, s)
	for _, tc := range []struct {
		req  string
		code int
		want string
	}{
		{"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + strings.Repeat("a", 80<<10) + "\r\n\r\n", 431, "64 KiB"},
		{"GET /healthz HTTP/1.1\r\n\r\n", 400, "Host"},
		{"POST /v1/select HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: rot13\r\n\r\n", 501, "transfer encoding"},
	} {
		res, body := rawExchange(t, addr, tc.req)
		var doc struct {
			Error struct{ Message string } `json:"error"`
		}
		if res.StatusCode != tc.code || res.Header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &doc) != nil || !strings.Contains(doc.Error.Message, tc.want) {
			t.Errorf("%.40q: %d %s %q, want %d JSON naming %q", tc.req, res.StatusCode, res.Header.Get("Content-Type"), body, tc.code, tc.want)
		}
	}
	res, body := rawExchange(t, addr, "GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") || !strings.Contains(body, "# TYPE") {
		t.Errorf("/metrics rewritten: %d %s %.100q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
}
