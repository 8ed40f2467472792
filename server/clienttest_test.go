package server

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRealClients runs clienttest/ (node --test): the Cohere TypeScript SDK,
// LangChain.js's CohereRerank, the OpenAI SDK and the MCP TypeScript client
// (clients.test.mjs), and the Vercel AI SDK, LlamaIndex TS and the MCP
// Inspector CLI (dropin.test.mjs), against a `ctxsel serve` and a `ctxsel
// mcp` built from this checkout; rerank with the evidence selector among
// them (return_evidence through the Cohere SDK; clients that ignore it), and
// each client's error path (what it shows its user of ctxsel's error: the
// OpenAI SDK's param, type and code, the Jina client's detail). The Go
// clients (go-openai, cohere-go) are TestGoClients. It
// needs node and `npm ci` run in clienttest/ (.ci/run does both); without
// them it skips, except in CI (CI=true), where it fails.
func TestRealClients(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts node: not in -short")
	}
	need := func(ok bool, what string) {
		if ok {
			return
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("%s (CI must run the real-client tests: see .ci/run's npm clients step)", what)
		}
		t.Skipf("%s: run `npm ci` in server/clienttest to enable", what)
	}
	node, err := exec.LookPath("node")
	need(err == nil, "node is not installed")
	for _, pkg := range []string{"cohere-ai", "ai", "llamaindex", "@modelcontextprotocol/inspector-cli"} {
		_, err = os.Stat(filepath.Join("clienttest", "node_modules", pkg))
		need(err == nil, "server/clienttest/node_modules/"+pkg+" is missing")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "ctxsel")
	build := exec.CommandContext(ctx, "go", "build", "-buildvcs=auto", "-o", bin, "github.com/ctxsel/ctxsel/cmd/ctxsel")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// --version reports the revision Go stamped into the binary, if any
	// (GOFLAGS=-buildvcs=false or a tree without git stamps none).
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "ctxsel ") {
		t.Fatalf("ctxsel --version: %v %q", err, out)
	}
	if info, err := exec.CommandContext(ctx, "go", "version", "-m", bin).Output(); err == nil {
		if m := regexp.MustCompile(`vcs\.revision=(\w+)`).FindSubmatch(info); m != nil && !strings.Contains(string(out), string(m[1])) {
			t.Errorf("ctxsel --version %q does not name revision %s", out, m[1])
		}
	}

	// Each binary run gets a private embedding cache and no LLM.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "CTXSEL_EMBED_CACHE=" + filepath.Join(dir, "cache")}

	// A small index for the MCP tools search and ask.
	docs := filepath.Join(dir, "docs")
	index := filepath.Join(dir, "index")
	for name, text := range map[string]string{
		"paris.txt":  "Paris is the capital of France. The river Seine flows through Paris, past the Louvre and Notre-Dame.",
		"tokyo.txt":  "Tokyo is the capital of Japan and its most populous city; Mount Fuji can be seen from it on clear days.",
		"potato.txt": "Potatoes are tubers first cultivated in the Andes of South America thousands of years ago.",
	} {
		if err := os.MkdirAll(docs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	add := exec.CommandContext(ctx, bin, "index", "add", "--index", index, "--embedder", "use-lite", docs)
	add.Env = env
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ctxsel index add: %v\n%s", err, out)
	}

	// No --embedder: use-lite is serve's default.
	const key = "clienttest-key"
	serve := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--mcp", "--embedding-alias", "text-embedding-ada-002=use-lite")
	serve.Env = append(env, "CTXSEL_API_KEYS="+key)
	serve.Cancel = func() error { return serve.Process.Signal(os.Interrupt) }
	stderr, err := serve.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = serve.Wait()
	}()
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`addr=(127\.0\.0\.1:\d+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	var url string
	select {
	case a := <-addr:
		url = "http://" + a
	case <-time.After(time.Minute):
		t.Fatal("ctxsel serve did not report its address")
	}

	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec")
	cmd.Dir = "clienttest"
	cmd.Env = append(env, "CTXSEL_URL="+url, "CTXSEL_KEY="+key, "CTXSEL_BIN="+bin, "CTXSEL_INDEX="+index)
	out, err = cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("node --test: %v", err)
	}
	// Every client test ran and passed: none skipped, none missing.
	if !regexp.MustCompile(`(?m)^ℹ pass 24$`).Match(out) || !regexp.MustCompile(`(?m)^ℹ skipped 0$`).Match(out) {
		t.Fatalf("expected 24 passing client tests and none skipped")
	}
}
