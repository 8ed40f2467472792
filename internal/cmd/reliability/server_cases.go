package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// Issue 27's server cases: a local server that holds people's documents
// must refuse what a hostile web page on the same machine can send (a
// rebinding Host, a POST without a JSON content type), must not let idle
// connections or one batch take it over, and must say so when its index
// vanishes or shutdown cuts a request.

// getRoutes and postRoutes are what `ctxsel serve --mcp` serves.
var (
	getRoutes  = []string{"/", "/assets/app.js", "/healthz", "/readyz", "/openapi.json", "/metrics", "/v1/strategies", "/v1/models", "/v1/models/use-lite"}
	postRoutes = []string{"/v1/select", "/v1/ask", "/v1/rerank", "/v2/rerank", "/v1/embeddings", "/v1/reward", "/mcp"}
)

func (p *probe) serverCases(ctx context.Context) {
	p.hostAndMediaType(ctx)
	p.idleBodies(ctx)
	p.mcpBatches(ctx)
	p.bigHeaders(ctx)
	p.stdioBeforeInitialize(ctx)
	p.vanishedIndex(ctx)
	p.shutdownCut(ctx)
}

// send sends one request to base with the given Host (none: the URL's) and
// headers in pairs; every answer must be JSON and hold nothing internal.
func (p *probe) send(ctx context.Context, base, method, path, host, body string, header ...string) (int, string) {
	p.count("server")
	req, _ := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.fail("%s %s (Host %q): %v", method, path, host, err)
		return 0, ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 400 && !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		p.fail("%s %s (Host %q): %d with Content-Type %q: %s", method, path, host, res.StatusCode, res.Header.Get("Content-Type"), short(string(b)))
	}
	if l := p.leak(string(b)); l != "" || res.StatusCode >= 400 && strings.Contains(string(b), p.dir) {
		p.fail("%s %s: the body holds %q: %s", method, path, l, short(string(b)))
	}
	return res.StatusCode, string(b)
}

// hostAndMediaType: a rebinding Host is refused on every route, and a POST
// without application/json, or compressed, on every POST route.
func (p *probe) hostAndMediaType(ctx context.Context) {
	mcpAccept := []string{"Accept", "application/json, text/event-stream"}
	for _, host := range []string{"attacker.example", "attacker.example:80", "127.0.0.1.nip.io", "localhost.attacker.example"} {
		for _, path := range getRoutes {
			if code, body := p.send(ctx, p.base, http.MethodGet, path, host, ""); code != http.StatusForbidden {
				p.fail("GET %s with Host %s: %d %s, want 403", path, host, code, short(body))
			}
		}
		for _, path := range postRoutes {
			if code, body := p.send(ctx, p.base, http.MethodPost, path, host, `{"query":"volcano"}`, append([]string{"Content-Type", "application/json"}, mcpAccept...)...); code != http.StatusForbidden {
				p.fail("POST %s with Host %s: %d %s, want 403", path, host, code, short(body))
			}
		}
	}
	for _, path := range postRoutes {
		for _, h := range [][]string{nil, {"Content-Type", "text/plain"}, {"Content-Type", "application/x-www-form-urlencoded"},
			{"Content-Type", "application/json", "Content-Encoding", "gzip"}} {
			if code, body := p.send(ctx, p.base, http.MethodPost, path, "", `{"query":"volcano"}`, append(h, mcpAccept...)...); code != http.StatusUnsupportedMediaType {
				p.fail("POST %s with %v: %d %s, want 415", path, h, code, short(body))
			}
		}
	}
}

// idleBodies: 64 connections announcing 16 MB bodies and sending a byte
// leave the server able to serve a POST, and /readyz honest.
func (p *probe) idleBodies(ctx context.Context) {
	addr := strings.TrimPrefix(p.base, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 64 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			p.fail("idle bodies: %v", err)
			return
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /v1/select HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", 16<<20)
	}
	time.Sleep(300 * time.Millisecond) // for the server to start reading them
	code, body := p.send(ctx, p.base, http.MethodPost, "/v1/select", "", `{"candidates":[{"id":"a","score":1},{"id":"b","score":0.2}]}`, "Content-Type", "application/json")
	ready, _ := p.send(ctx, p.base, http.MethodGet, "/readyz", "", "")
	if code != http.StatusOK {
		p.fail("a POST beside 64 idle 16 MB bodies: %d %s (/readyz %d)", code, short(body), ready)
	}
	if (code == http.StatusServiceUnavailable) != (ready == http.StatusServiceUnavailable) {
		p.fail("/readyz says %d while a POST gets %d", ready, code)
	}
}

// mcpBatches: a batch over the limit runs nothing and answers every id; a
// batch within it answers every call's id.
func (p *probe) mcpBatches(ctx context.Context) {
	call := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"volcano"}}}`, id)
	}
	for _, n := range []int{5, 300} {
		var calls []string
		for i := range n {
			calls = append(calls, call(i+1))
		}
		code, body := p.send(ctx, p.base, http.MethodPost, "/mcp", "", "["+strings.Join(calls, ",")+"]",
			"Content-Type", "application/json", "Accept", "application/json, text/event-stream", "Mcp-Protocol-Version", "2025-03-26")
		var replies []struct {
			ID    int                 `json:"id"`
			Error *struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &replies); err != nil {
			p.fail("/mcp batch of %d: %d, not an array of replies: %s", n, code, short(body))
			continue
		}
		seen := map[int]bool{}
		for _, r := range replies {
			seen[r.ID] = true
			if n > 32 && (r.Error == nil || r.Error.Code == 0) {
				p.fail("/mcp batch of %d: id %d not refused with an error code", n, r.ID)
				break
			}
		}
		if len(seen) != n {
			p.fail("/mcp batch of %d: %d ids answered", n, len(seen))
		}
	}
}

// bigHeaders: headers over the limit get a JSON 431.
func (p *probe) bigHeaders(ctx context.Context) {
	p.count("server")
	c, err := net.Dial("tcp", strings.TrimPrefix(p.base, "http://"))
	if err != nil {
		p.fail("431: %v", err)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: %s\r\n\r\n", strings.Repeat("a", 100<<10))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		p.fail("431: %v", err)
		return
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusRequestHeaderFieldsTooLarge || res.Header.Get("Content-Type") != "application/json" {
		p.fail("100 KB of headers: %d %q, want a JSON 431", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// stdioBeforeInitialize: ctxsel mcp answers a call before initialize with
// an error code, not 0.
func (p *probe) stdioBeforeInitialize(ctx context.Context) {
	p.count("server")
	out, _ := p.cli(ctx, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n", "mcp", "--embedder", "none")
	var r struct {
		Error *struct{ Code int } `json:"error"`
	}
	line, _, _ := strings.Cut(out, "\n")
	if json.Unmarshal([]byte(line), &r) != nil || r.Error == nil || r.Error.Code == 0 {
		p.fail("ctxsel mcp, tools/list before initialize: %s", short(out))
	}
}

// startServe starts another `ctxsel serve` on a copy of the index, with
// its own LLM; stop ends it with SIGTERM and returns its log.
func (p *probe) startServe(ctx context.Context, name string, llm *llmtest.Server, args ...string) (base, idx string, stop func() string, err error) {
	idx = filepath.Join(p.dir, name)
	if err := copyDir(p.idx, idx); err != nil {
		return "", "", nil, err
	}
	port, err := freePort()
	if err != nil {
		return "", "", nil, err
	}
	base = "http://127.0.0.1:" + port
	log := &syncBuf{}
	cmd := exec.CommandContext(ctx, p.bin, append([]string{"serve", "--addr", "127.0.0.1:" + port, "--index", idx, "--embedder", "use-lite",
		"--reader", llm.OpenAISpec("m"), "--llm-retries", "0"}, args...)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "CTXSEL_EMBED_CACHE="+filepath.Join(p.dir, name+"-embcache"), "CTXSEL_LLM_CACHE="+filepath.Join(p.dir, name+"-llmcache"))
	if err := cmd.Start(); err != nil {
		return "", "", nil, err
	}
	stop = func() string {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		return log.String()
	}
	if err := waitUp(ctx, base+"/healthz"); err != nil {
		stop()
		return "", "", nil, fmt.Errorf("serve %s did not start: %v: %s", name, err, log.String())
	}
	return base, idx, stop, nil
}

// vanishedIndex: the index deleted under a running server turns /readyz to
// 503, and /v1/ask to a 503 that names no path.
func (p *probe) vanishedIndex(ctx context.Context) {
	base, idx, stop, err := p.startServe(ctx, "idx-vanish", p.llm, "--request-timeout", requestTimeout.String())
	if err != nil {
		p.fail("vanished index: %v", err)
		return
	}
	defer stop()
	ask := `{"query":"volcano","strategy":"topk:k=1"}`
	if code, body := p.send(ctx, base, http.MethodPost, "/v1/ask", "", ask, "Content-Type", "application/json"); code != http.StatusOK {
		p.fail("the sound index: /v1/ask %d %s", code, short(body))
	}
	os.RemoveAll(idx)
	if code, body := p.send(ctx, base, http.MethodGet, "/readyz", "", ""); code != http.StatusServiceUnavailable {
		p.fail("a deleted index: /readyz %d %s, want 503", code, short(body))
	}
	if code, body := p.send(ctx, base, http.MethodPost, "/v1/ask", "", ask, "Content-Type", "application/json"); code != http.StatusServiceUnavailable || strings.Contains(body, idx) {
		p.fail("a deleted index: /v1/ask %d %s, want 503 naming no path", code, short(body))
	}
}

// shutdownCut: an ask still waiting on its LLM when shutdown_timeout passes
// gets a 503, and the log says it was cut.
func (p *probe) shutdownCut(ctx context.Context) {
	called, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := llmtest.New(func(llmtest.Call) llmtest.Reply {
		once.Do(func() { close(called) })
		select {
		case <-release:
		case <-time.After(30 * time.Second):
		}
		return llmtest.Reply{Content: "Etna"}
	})
	defer slow.Close()
	defer close(release)
	base, _, stop, err := p.startServe(ctx, "idx-shutdown", slow, "--shutdown-timeout", "500ms", "--request-timeout", "20s", "--llm-timeout", "20s")
	if err != nil {
		p.fail("shutdown: %v", err)
		return
	}
	type answer struct {
		code int
		body string
	}
	got := make(chan answer, 1)
	go func() {
		code, body := p.send(ctx, base, http.MethodPost, "/v1/ask", "", `{"query":"Which volcano? (shutdown)","strategy":"topk:k=1"}`, "Content-Type", "application/json")
		got <- answer{code, body}
	}()
	select {
	case <-called:
	case <-time.After(20 * time.Second):
		p.fail("shutdown: the ask never reached the LLM")
		stop()
		return
	}
	log := stop()
	a := <-got
	if a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "shutting down") {
		p.fail("an ask cut by shutdown_timeout: %d %s, want 503", a.code, short(a.body))
	}
	if !strings.Contains(log, "request cut by shutdown_timeout") {
		p.fail("no log line for the request cut at shutdown: %s", short(log))
	}
}

func copyDir(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}
