package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
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
