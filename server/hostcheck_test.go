package server

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// servedPaths is every path the mux serves, one request path per pattern:
// the route table's (what New builds the mux from), /mcp and an unknown
// path, so a route added to the table is covered here without a test edit.
func servedPaths(s *Server) []struct{ method, path, name string } {
	var out []struct{ method, path, name string }
	for _, rt := range s.routes() {
		p := strings.NewReplacer("{name}", "app.js", "{model}", "use-lite").Replace(rt.path)
		out = append(out, struct{ method, path, name string }{rt.method, p, rt.path})
	}
	out = append(out,
		struct{ method, path, name string }{http.MethodPost, "/mcp", "/mcp"},
		struct{ method, path, name string }{http.MethodGet, "/no/such/route", "other"},
		struct{ method, path, name string }{http.MethodPost, "/healthz", "/healthz"}, // a wrong method
	)
	return out
}

// checkRefusal asserts a refusal in the route's error shape: a JSON-RPC
// error object on /mcp, Cohere's and Jina's fields on the rerank routes,
// {"error": {"message", "field"}} everywhere.
func checkRefusal(t *testing.T, res *http.Response, want int, name, field string) {
	t.Helper()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s: status %d, want %d: %s", name, res.StatusCode, want, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: Content-Type %q: %s", name, ct, body)
	}
	var doc struct {
		JSONRPC string `json:"jsonrpc"`
		Message string `json:"message"`
		Detail  string `json:"detail"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Field   string `json:"field"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("%s: not JSON: %v: %s", name, err, body)
	}
	switch shapeFor(name) {
	case shapeMCP:
		if doc.JSONRPC != "2.0" || doc.Error.Code == 0 || !strings.Contains(doc.Error.Message, field) {
			t.Fatalf("%s: not a JSON-RPC error naming %s: %s", name, field, body)
		}
	case shapeRerank:
		if !strings.HasPrefix(doc.Message, field+": ") || doc.Detail != doc.Message || doc.Error.Field != field {
			t.Fatalf("%s: not the rerank shape naming %s: %s", name, field, body)
		}
	default:
		if doc.Error.Message == "" || doc.Error.Field != field {
			t.Fatalf("%s: not ctxsel's shape naming %s: %s", name, field, body)
		}
	}
}

// TestRebindingHostRefusedOnEveryRoute: a server on loopback answers a
// Host that is not a loopback name with 403 on every route it serves, with
// or without API keys, and a valid key does not lift it; loopback Host
// values in every spelling are served.
func TestRebindingHostRefusedOnEveryRoute(t *testing.T) {
	for _, keys := range [][]string{nil, {"k1"}} {
		s := newTestServer(t, func(c *Config) { c.APIKeys = keys }, Options{MCP: true})
		ts := httptest.NewServer(s.Handler())
		port := ts.Listener.Addr().(*net.TCPAddr).Port
		for _, rt := range servedPaths(s) {
			for _, host := range []string{"attacker.example", "attacker.example:" + strconv.Itoa(port), "127.0.0.1.attacker.example", "localhost.", "127.1", "0.0.0.0", "[::2]", "192.168.1.10", ""} {
				req, _ := http.NewRequest(rt.method, ts.URL+rt.path, strings.NewReader(`{}`))
				req.Host = host
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer k1")
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if host == "" {
					// Go's client fills an empty Host from the URL:
					// a loopback one, served.
					res.Body.Close()
					continue
				}
				checkRefusal(t, res, http.StatusForbidden, rt.name, "Host")
				res.Body.Close()
			}
		}
		for _, host := range []string{"localhost", "LOCALHOST:" + strconv.Itoa(port), "127.0.0.1", "127.5.6.7:80", "[::1]", "[::1]:" + strconv.Itoa(port), "[::ffff:127.0.0.1]"} {
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/v1/strategies", nil)
			req.Host = host
			req.Header.Set("Authorization", "Bearer k1")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("Host %q: status %d, want 200", host, res.StatusCode)
			}
		}
		ts.Close()
	}
}

// TestAllowedHosts: --allowed-hosts adds names to a loopback server's and
// turns the check on for a public one; a public one without it serves any
// Host (today's behaviour); the listener Serve is given decides.
func TestAllowedHosts(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		allowed []string
		host    string
		want    bool
	}{
		{"127.0.0.1:8080", nil, "ctxsel.lan", false},
		{"127.0.0.1:8080", []string{"ctxsel.lan"}, "ctxsel.lan", true},
		{"127.0.0.1:8080", []string{"ctxsel.lan"}, "CTXSEL.LAN:9000", true},
		{"127.0.0.1:8080", []string{"ctxsel.lan:8080"}, "ctxsel.lan:9000", false},
		{"127.0.0.1:8080", []string{"ctxsel.lan:8080"}, "ctxsel.lan:8080", true},
		{"127.0.0.1:8080", []string{"ctxsel.lan"}, "other.lan", false},
		{"127.0.0.1:8080", []string{"ctxsel.lan"}, "localhost:8080", true},
		{"127.0.0.1:8080", []string{"*"}, "anything.example", true},
		{"localhost:8080", nil, "attacker.example", false},
		{"[::1]:8080", nil, "attacker.example", false},
		{"0.0.0.0:8080", nil, "attacker.example", true},
		{":8080", nil, "attacker.example", true},
		{"0.0.0.0:8080", []string{"ctxsel.example"}, "attacker.example", false},
		{"0.0.0.0:8080", []string{"ctxsel.example"}, "ctxsel.example", true},
	} {
		if got := newHostPolicy(tc.addr, tc.allowed).allows(tc.host); got != tc.want {
			t.Errorf("listening on %s, allowed %q: Host %q served %v, want %v", tc.addr, tc.allowed, tc.host, got, tc.want)
		}
	}
	for _, bad := range []string{"http://ctxsel.lan", "ctxsel.lan/x", "a b", "ctxsel.lan:port", "", "user@host"} {
		cfg := DefaultConfig()
		cfg.AllowedHosts = []string{bad}
		if err := cfg.Validate(); err == nil {
			t.Errorf("allowed_hosts %q accepted", bad)
		}
	}

	// A server configured for a public address but handed a loopback
	// listener checks Host: the listener decides.
	s := newTestServer(t, func(c *Config) { c.Addr = "0.0.0.0:0"; c.InsecurePublic = true }, Options{})
	if !s.hosts.Load().allows("attacker.example") {
		t.Fatal("a server configured for 0.0.0.0 checks Host before it listens")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/healthz", nil)
	req.Host = "attacker.example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, res, http.StatusForbidden, "/healthz", "Host")
	res.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestPostNeedsJSON: every POST route (and /mcp) refuses a body without
// Content-Type, with another media type, or compressed, with 415 in its
// error shape, with or without keys: a cross-site page can send the first
// two without a preflight.
func TestPostNeedsJSON(t *testing.T) {
	for _, keys := range [][]string{nil, {"k1"}} {
		s := newTestServer(t, func(c *Config) { c.APIKeys = keys }, Options{MCP: true})
		ts := httptest.NewServer(s.Handler())
		posts := 0
		for _, rt := range servedPaths(s) {
			if rt.method != http.MethodPost || rt.name == "/healthz" {
				continue
			}
			posts++
			for _, h := range [][2]string{{"", ""}, {"Content-Type", "text/plain"}, {"Content-Type", "application/x-www-form-urlencoded"},
				{"Content-Type", "multipart/form-data; boundary=x"}, {"Content-Encoding", "gzip"}, {"Content-Encoding", "identity, deflate"}} {
				req, _ := http.NewRequest(http.MethodPost, ts.URL+rt.path, strings.NewReader(`{"query":"q","candidates":[]}`))
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Authorization", "Bearer k1")
				if h[0] == "Content-Encoding" {
					req.Header.Set("Content-Type", "application/json")
				}
				if h[0] != "" {
					req.Header.Set(h[0], h[1])
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				field := "Content-Type"
				if h[0] == "Content-Encoding" {
					field = "Content-Encoding"
				}
				checkRefusal(t, res, http.StatusUnsupportedMediaType, rt.name, field)
				res.Body.Close()
			}
		}
		if posts < 7 {
			t.Fatalf("only %d POST routes found", posts)
		}
		ts.Close()
	}
	// identity is no encoding.
	s := newTestServer(t, nil, Options{})
	if rec := call(t, s, "POST", "/v1/select", readmeExample, "Content-Encoding", "identity"); rec.Code != http.StatusOK {
		t.Fatalf("Content-Encoding identity: %d %s", rec.Code, rec.Body)
	}
}

// FuzzHostCheck: whatever the Host value, a loopback server serves it only
// when a URL parser reads a loopback host out of it, and a listed name only
// as itself.
func FuzzHostCheck(f *testing.F) {
	for _, seed := range []string{"localhost", "localhost:8080", "127.0.0.1", "[::1]:80", "[::1", "attacker.example",
		"127.0.0.1.nip.io", "localhost.", "[::ffff:127.0.0.1]", "[fe80::1%25lo]", "127.0.0.1:", ":80", "ctxsel.lan:1",
		"localhost:8080:1", "[::1]x", "LocalHost", "127.000.000.001", "0x7f.1"} {
		f.Add(seed)
	}
	loop := newHostPolicy("127.0.0.1:8080", nil)
	listed := newHostPolicy("127.0.0.1:8080", []string{"ctxsel.lan"})
	f.Fuzz(func(t *testing.T, host string) {
		got, gotListed := loop.allows(host), listed.allows(host)
		if got && !gotListed {
			t.Fatalf("%q served without a list but not with one", host)
		}
		if !gotListed {
			return
		}
		u, err := url.Parse("http://" + host + "/")
		if err != nil || u.Host != host {
			t.Fatalf("%q served but is no URL host: %v", host, err)
		}
		name := u.Hostname()
		ip := net.ParseIP(name)
		loopback := strings.EqualFold(name, "localhost") || ip != nil && ip.IsLoopback()
		if got != loopback {
			t.Fatalf("%q (host %q): served %v, loopback %v", host, name, got, loopback)
		}
		if !got && !strings.EqualFold(name, "ctxsel.lan") {
			t.Fatalf("%q served as the listed name", host)
		}
	})
}
