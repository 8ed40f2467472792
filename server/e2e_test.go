package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/evidence" // the evidence selector the page may name
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/internal/testenv"
	"github.com/ctxsel/ctxsel/server"
)

// These tests run the real `ctxsel serve` binary: built with `go build`,
// started on a free loopback port, stopped with SIGTERM.

const chromiumPath = "/usr/bin/chromium"

// buildCtxsel builds cmd/ctxsel into a temporary directory.
func buildCtxsel(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	bin := filepath.Join(t.TempDir(), "ctxsel")
	cmd := exec.Command(goTool, "build", "-o", bin, "github.com/ctxsel/ctxsel/cmd/ctxsel")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// childEnv is the test's environment without API keys, so a developer's
// own CTXSEL_API_KEYS cannot change what the tests see.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CTXSEL_API_KEYS=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// serveProc is a running `ctxsel serve`.
type serveProc struct {
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	log    strings.Builder
	stdout strings.Builder
	done   chan error
}

func (p *serveProc) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

var listenURL = regexp.MustCompile(`msg="ctxsel serve listening".* url=(http://\S+/)`)

// startServe starts the binary on 127.0.0.1:0, reads the address it
// reports, and waits for /readyz.
func startServe(t *testing.T, bin string, env []string, args ...string) *serveProc {
	t.Helper()
	p := &serveProc{done: make(chan error, 1)}
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	p.cmd.Env = childEnv(env...)
	p.cmd.Stdout = &p.stdout
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := listenURL.FindStringSubmatch(line); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
		}
	})
	select {
	case p.url = <-urls:
	case err := <-p.done:
		t.Fatalf("ctxsel serve exited before listening: %v\n%s", err, p.logs())
	case <-time.After(30 * time.Second):
		t.Fatalf("ctxsel serve did not report its address\n%s", p.logs())
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(p.url + "readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered 200 (last error %v)\n%s", err, p.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop sends SIGTERM and checks that the process shuts down cleanly.
func (p *serveProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("ctxsel serve after SIGTERM: %v\n%s", err, p.logs())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("ctxsel serve did not stop after SIGTERM\n%s", p.logs())
	}
	if !strings.Contains(p.logs(), "shutting down") || !strings.Contains(p.stdout.String(), "stopped") {
		t.Errorf("no graceful shutdown in the output:\nstdout: %s\nstderr: %s", p.stdout.String(), p.logs())
	}
}

func TestServeBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ctxsel binary")
	}
	bin := buildCtxsel(t)

	t.Run("PublicBindWithoutKeysRefused", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "--addr", "0.0.0.0:0")
		cmd.Env = childEnv()
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "refusing to listen") {
			t.Fatalf("want exit 2 and a refusal, got %v:\n%s", err, out)
		}
	})

	t.Run("ConfigFileKeysAndFlags", func(t *testing.T) {
		// The file sets a limit and an address; the --addr flag wins over
		// the file's address, the file's limit holds, and the keys from the
		// environment turn auth on.
		cfg := filepath.Join(t.TempDir(), "serve.json")
		if err := os.WriteFile(cfg, []byte(`{"addr": "127.0.0.1:1", "max_candidates": 2, "log_format": "text"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		p := startServe(t, bin, []string{"CTXSEL_API_KEYS=k1,k2"}, "--config", cfg)
		body := `{"candidates":[{"id":"a","score":1},{"id":"b","score":0.5},{"id":"c","score":0.1}]}`
		send := func(key string) int {
			req, _ := http.NewRequest("POST", p.url+"v1/select", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			return res.StatusCode
		}
		if code := send(""); code != http.StatusUnauthorized {
			t.Errorf("without a key: %d", code)
		}
		if code := send("k2"); code != http.StatusRequestEntityTooLarge {
			t.Errorf("3 candidates over the file's limit of 2: %d", code)
		}
		if strings.Contains(p.logs(), "k1") || strings.Contains(p.logs(), "Bearer") {
			t.Errorf("a key reached the log:\n%s", p.logs())
		}
		p.stop(t)
	})

	t.Run("FreshServeEmbeds", func(t *testing.T) { freshServeEmbeds(t, bin) })

	t.Run("Browser", func(t *testing.T) {
		needChromium(t)
		p := startServe(t, bin, nil)
		keyed := startServe(t, bin, []string{"CTXSEL_API_KEYS=page-key"})
		browserTest(t, p.url, keyed.url, "page-key")
		p.stop(t)
		keyed.stop(t)
	})
}

// needChromium skips (or, in CI, fails) without the browser.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if testenv.InCI() {
			t.Fatalf("CI=%s but %s is missing: .ci/run installs Debian's chromium", os.Getenv("CI"), chromiumPath)
		}
		t.Skipf("skipping the browser test: %s not found (apt-get install -y chromium); with CI set this fails instead", chromiumPath)
	}
}

// newBrowser starts a headless Chromium with a fresh profile and returns a
// tab's context, already started (a deadline on the first action would
// bound the browser's whole life).
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.WindowSize(1440, 1000),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// browserTest drives the page on base (no auth), then on keyed, which
// needs key: the page must ask for it and then work.
func browserTest(t *testing.T, base, keyed, key string) {
	ctx := newBrowser(t)
	console := chromedp.Console(ctx)
	var problems []string
	var pmu sync.Mutex
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.Type == chromedp.ConsoleException {
				pmu.Lock()
				problems = append(problems, fmt.Sprintf("%s: %s", m.Type, m.Text))
				pmu.Unlock()
			}
		}
	}()

	tctx, tcancel := context.WithTimeout(ctx, 45*time.Second)
	defer tcancel()
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(tctx, actions...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// js runs a statement for its effect.
	js := func(stmt string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool]("("+stmt+", true)")(ctx, t)
			return err
		})
	}
	// fire dispatches a DOM event, as a person's edit would.
	fire := func(sel, event string) chromedp.Action[chromedp.Void] {
		return js(fmt.Sprintf(`document.querySelector(%q).dispatchEvent(new Event(%q))`, sel, event))
	}
	type view struct {
		K          string  `json:"k"`
		Selected   int     `json:"selected"`
		Cut        string  `json:"cut"`
		BandWidth  float64 `json:"bandWidth"`
		Decision   string  `json:"decision"`
		Strategy   string  `json:"strategy"`
		Error      string  `json:"error"`
		Tokens     string  `json:"tokens"`
		Points     int     `json:"points"`
		ParamCount int     `json:"paramCount"`
	}
	read := func() view {
		t.Helper()
		v, err := chromedp.Run(tctx, chromedp.Evaluate[view](`(() => {
			const q = (s) => document.querySelector(s);
			const band = q("#selected-region");
			return {
				k: q("#selected-count").dataset.k,
				selected: document.querySelectorAll("#passages li.passage.selected").length,
				cut: q("#cut-marker") ? q("#cut-marker").dataset.cut : "",
				bandWidth: band ? band.getBBox().width : -1,
				decision: q("#decision-marker") ? q("#decision-marker").dataset.kind : "",
				strategy: q("#strategy").value,
				error: q("#error").hidden ? "" : q("#error").textContent,
				tokens: q("#tokens-used").textContent,
				points: document.querySelectorAll("#chart circle.pt").length,
				paramCount: document.querySelectorAll("#params input").length,
			};
		})()`))
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		return v
	}
	waitK := func(k string) {
		t.Helper()
		if _, err := chromedp.Run(tctx, chromedp.Poll[bool](
			`document.querySelector("#selected-count").dataset.k === `+fmt.Sprintf("%q", k),
			chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("waiting for k=%s: %v (page: %+v)", k, err, read())
		}
	}

	// The page opens with the demo and selects at once: Adaptive-k cuts
	// the demo curve at its largest gap (after rank 1) plus a buffer of 5.
	step("load", chromedp.Navigate(base), chromedp.WaitVisible("#cut-marker"))
	waitK("7")
	v := read()
	if v.Strategy != "adaptivek" || v.Selected != 7 || v.Cut != "7" || v.BandWidth <= 0 || v.Decision != "gap" || v.Points != 60 || v.Error != "" {
		t.Fatalf("after load: %+v", v)
	}

	// Switch to top-k: the cut moves to its default k = 10.
	step("strategy topk", chromedp.SetValue("#strategy", "topk"),
		fire("#strategy", "change"))
	waitK("10")
	if v = read(); v.Selected != 10 || v.Cut != "10" || v.ParamCount != 1 || v.Decision != "" {
		t.Fatalf("after topk: %+v", v)
	}

	// Edit a parameter: k = 3.
	step("k=3", chromedp.SetValue("#param-k", "3"),
		fire("#param-k", "input"))
	waitK("3")
	if v = read(); v.Selected != 3 || v.Cut != "3" {
		t.Fatalf("after k=3: %+v", v)
	}

	// An out-of-range parameter is refused by the server and named.
	step("k=0", chromedp.SetValue("#param-k", "0"),
		fire("#param-k", "input"))
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`!document.querySelector("#error").hidden && document.querySelector("#param-k").getAttribute("aria-invalid") === "true"`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("no error shown for k=0: %v (page %+v)", err, read())
	}
	if v = read(); !strings.Contains(v.Error, "params.k") {
		t.Fatalf("error does not name params.k: %q", v.Error)
	}

	// Back to Adaptive-k with the paper's HoloBench head and no buffer,
	// through the Select button: the band is the two passages above the gap.
	step("adaptivek", chromedp.SetValue("#strategy", "adaptivek"),
		fire("#strategy", "change"))
	waitK("7")
	step("buffer=0", chromedp.SetValue("#param-buffer", "0"), chromedp.Click("#run"))
	waitK("2")
	if v = read(); v.Selected != 2 || v.Cut != "2" || v.Decision != "gap" || v.BandWidth <= 0 || v.Error != "" {
		t.Fatalf("after buffer=0: %+v", v)
	}
	step("buffer=5", chromedp.SetValue("#param-buffer", "5"), chromedp.Click("#run"))
	waitK("7")

	// Ask without an index: the page says so instead of failing.
	step("ask", chromedp.Click("#ask"))
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.querySelector("#ask-note").textContent.includes("no index")`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("ask note: %v", err)
	}

	// The viewport (the controls, the numbers, the chart and the top of the
	// list) and the whole page.
	step("scroll to top", js(`window.scrollTo(0, 0)`))
	shots := map[string]chromedp.Action[[]byte]{
		"ctxsel-page.png": chromedp.CaptureScreenshot(),
		"ctxsel-full.png": chromedp.FullScreenshot(100),
	}
	dir := t.TempDir()
	for name, action := range shots {
		png, err := chromedp.Run(tctx, action)
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		for _, d := range []string{dir, os.Getenv("CTXSEL_SCREENSHOT_DIR")} {
			if d == "" {
				continue
			}
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, name), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("screenshot: %s (%d bytes)", filepath.Join(dir, name), len(png))
	}

	// With auth on, the page asks for the key, then selects as before.
	step("keyed page", chromedp.Navigate(keyed))
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.querySelector("#key-dialog").open`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("no key dialog on a keyed server: %v", err)
	}
	step("enter key", chromedp.SetValue("#key-input", key), chromedp.Click(`#key-form button[value="ok"]`))
	waitK("7")
	if v := read(); v.Selected != 7 || v.Cut != "7" || v.Error != "" {
		t.Fatalf("keyed page after the key: %+v", v)
	}

	pmu.Lock()
	defer pmu.Unlock()
	for _, p := range problems {
		// The 400 for k=0, the 501 of ask and the 401s before the key are
		// logged as failed resources.
		if strings.Contains(p, "status of 400") || strings.Contains(p, "status of 501") || strings.Contains(p, "status of 401") {
			continue
		}
		t.Errorf("browser console: %s", p)
	}
}

// demoAsker plays the index: it "retrieves" a fixed set of passages,
// selects with the request's strategy and answers.
type demoAsker struct{}

func (demoAsker) Ask(ctx context.Context, req server.AskRequest) (server.AskResponse, error) {
	ps := []server.Passage{
		{ID: "doc1#0", Score: 0.81, Tokens: 120, Text: "Alvaro Mexia\nA Spanish explorer sent on a diplomatic mission to the Ais people."},
		{ID: "doc2#4", Score: 0.77, Tokens: 90, Text: "Ais people\nA Native American people of the Atlantic coast of Florida."},
		{ID: "doc3#1", Score: 0.42, Tokens: 200, Text: "Diplomatic mission\nA group sent by one state to another."},
		{ID: "doc4#9", Score: 0.40, Tokens: 150, Text: "Florida\nA state in the southeastern United States."},
		{ID: "doc5#2", Score: 0.31, Tokens: 80, Text: "Spanish Florida\nThe first major European land claim in North America."},
	}
	cands := make([]ctxsel.Candidate, len(ps))
	for i, p := range ps {
		cands[i] = ctxsel.Candidate{ID: p.ID, Score: p.Score, Tokens: p.Tokens}
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return server.AskResponse{}, err
	}
	sel, err := ctxsel.Select(curve, req.Strategy.Strategy, req.Strategy.Caps, req.Order)
	if err != nil {
		return server.AskResponse{}, err
	}
	return server.AskResponse{Answer: "The Ais.", Passages: ps, Selection: sel}, nil
}

// TestBrowserAsk asks a question on the page of a server that has an index:
// the answer shows, the retrieved passages become the candidates, and the
// chart and the list show the cut.
func TestBrowserAsk(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	needChromium(t)
	srv, err := server.New(server.DefaultConfig(), server.Options{Logger: slog.New(slog.DiscardHandler), Asker: demoAsker{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx := newBrowser(t)
	tctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	// Adaptive-k, chosen: the page's Ask sends what the reader chose (until
	// then, ask's default: TestBrowserAskRanksDefaultAndBudget).
	if err := chromedp.Do(tctx,
		chromedp.Navigate(ts.URL),
		chromedp.WaitVisible("#cut-marker"),
		chromedp.SetValue("#strategy", "adaptivek"),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`(document.querySelector("#strategy").dispatchEvent(new Event("change")), true)`)(ctx, t)
			return err
		}),
		chromedp.SetValue("#question", "Which people did Alvaro Mexia visit?"),
		chromedp.Click("#ask"),
	); err != nil {
		t.Fatal(err)
	}
	type view struct {
		Answer   string   `json:"answer"`
		K        string   `json:"k"`
		Selected []string `json:"selected"`
		Cands    int      `json:"cands"`
		Note     string   `json:"note"`
	}
	v, err := chromedp.Run(tctx, chromedp.Poll[view](`(() => {
		if (document.querySelector("#answer").hidden) return null;
		return {
			answer: document.querySelector("#answer-text").textContent,
			k: document.querySelector("#selected-count").dataset.k,
			selected: [...document.querySelectorAll("#passages li.passage.selected")].map((li) => li.dataset.id),
			cands: document.querySelector("#candidates").value.trim().split("\n").length,
			note: document.querySelector("#ask-note").textContent,
		};
	})()`, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("no answer on the page: %v", err)
	}
	// Adaptive-k: the largest gap is after rank 1; the buffer of 5 keeps all 5.
	if v.Answer != "The Ais." || v.K != "5" || len(v.Selected) != 5 || v.Selected[0] != "doc1#0" || v.Cands != 5 || !strings.Contains(v.Note, "Retrieved 5") {
		t.Fatalf("after ask: %+v", v)
	}
	// With buffer 0 the cut moves to the gap.
	if err := chromedp.Do(tctx, chromedp.SetValue("#param-buffer", "0"), chromedp.Click("#ask")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`document.querySelector("#selected-count").dataset.k === "2"`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("buffer=0: %v", err)
	}
}

// TestBrowserEvidence chooses the evidence selector on the page, over
// candidates with texts: the sentences it kept are marked inside each
// selected passage, exactly the bytes of its spans, and the page says what
// was sent. Then an ask whose selection pruned passages marks them too.
func TestBrowserEvidence(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	needChromium(t)
	passages := []struct {
		ID    string  `json:"id"`
		Score float64 `json:"score"`
		Text  string  `json:"text"`
	}{
		{"carol", 0.9, "A Christmas Carol\nEbenezer Scrooge is a miser. His clerk is Bob Cratchit, who is poorly paid. Marley was dead, to begin with."},
		{"cratchit", 0.8, "Bob Cratchit works for Scrooge as a clerk. He has a son, Tiny Tim. The family is poor but cheerful — «très» pauvre."},
		{"london", 0.3, "London is a city on the Thames. It had many fogs. Dickens lived there."},
		{"bread", 0.1, "Bread rises because yeast makes gas. Flour, water and salt are the rest."},
	}
	var lines []string
	for _, p := range passages {
		b, _ := json.Marshal(p)
		lines = append(lines, string(b))
	}
	srv, err := server.New(server.DefaultConfig(), server.Options{Logger: slog.New(slog.DiscardHandler), Embedder: indextest.HashEmbedder{},
		Asker: evidenceAsker{}, SelectorDeps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: indextest.HashEmbedder{}})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	question := "Who is Scrooge's clerk?"
	// What the page must show: the server's own answer to the same request.
	body, _ := json.Marshal(map[string]any{"query": question, "strategy": "evidence:budget=40", "order": "rank", "candidates": passages})
	res, err := http.Post(ts.URL+"/v1/select", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		IDs      []string          `json:"ids"`
		Indices  []int             `json:"indices"`
		Evidence []ctxsel.Evidence `json:"evidence"`
	}
	if err := json.NewDecoder(res.Body).Decode(&want); err != nil || len(want.Evidence) == 0 {
		t.Fatalf("%v %+v", err, want)
	}
	res.Body.Close()
	wantMarks := map[string][]string{}
	for j, e := range want.Evidence {
		text := passages[want.Indices[j]].Text
		body := 0
		if nl := strings.IndexByte(text, '\n'); nl > 0 && nl < 120 {
			body = nl + 1
		}
		for _, sp := range e.Spans {
			wantMarks[want.IDs[j]] = append(wantMarks[want.IDs[j]], text[max(sp[0], body):sp[1]])
		}
	}

	ctx := newBrowser(t)
	tctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	js := func(stmt string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool]("("+stmt+", true)")(ctx, t)
			return err
		})
	}
	if err := chromedp.Do(tctx,
		chromedp.Navigate(ts.URL),
		chromedp.WaitVisible("#cut-marker"),
		chromedp.SetValue("#question", question),
		chromedp.SetValue("#candidates", strings.Join(lines, "\n")),
		chromedp.SetValue("#strategy", "evidence"),
		js(`document.querySelector("#strategy").dispatchEvent(new Event("change"))`),
		chromedp.WaitVisible("#param-budget"),
		chromedp.SetValue("#param-budget", "40"),
		chromedp.Click("#run"),
	); err != nil {
		t.Fatal(err)
	}
	type view struct {
		Marks map[string][]string `json:"marks"`
		Why   []string            `json:"why"`
		Caps  bool                `json:"capsHidden"`
		Error string              `json:"error"`
	}
	// The page selects with ask's budget when evidence is chosen, then with
	// 40: read the second.
	const read = `(() => {
		const marks = {};
		for (const li of document.querySelectorAll("#passages li.passage.selected")) {
			const m = [...li.querySelectorAll("mark.kept")].map((x) => x.textContent);
			if (m.length) marks[li.dataset.id] = m;
		}
		if (!Object.keys(marks).length) return null;
		return {
			marks,
			why: [...document.querySelectorAll("#passages .why")].map((x) => x.textContent),
			capsHidden: document.querySelector("#caps").hidden,
			error: document.querySelector("#error").hidden ? "" : document.querySelector("#error").textContent,
		};
	})()`
	v, err := chromedp.Run(tctx, chromedp.Poll[view](`document.querySelector("#reason").textContent.includes("budget=40") ? `+read+` : null`,
		chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("no marked sentences on the page: %v", err)
	}
	if !reflect.DeepEqual(v.Marks, wantMarks) || len(v.Why) != len(want.Evidence) || !v.Caps || v.Error != "" {
		t.Fatalf("page %+v\nwant marks %v", v, wantMarks)
	}
	for _, w := range v.Why {
		if !strings.HasPrefix(w, "sent ") || !strings.Contains(w, "sentences") {
			t.Errorf("why %q", w)
		}
	}
	if d := os.Getenv("CTXSEL_SCREENSHOT_DIR"); d != "" {
		png, err := chromedp.Run(tctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(filepath.Join(d, "ctxsel-evidence.png"), png, 0o644)
		}
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
	}

	// Ask: the Asker's selection pruned its passage; the page marks it.
	if err := chromedp.Do(tctx, chromedp.SetValue("#strategy", "topk"),
		js(`document.querySelector("#strategy").dispatchEvent(new Event("change"))`),
		chromedp.Click("#ask")); err != nil {
		t.Fatal(err)
	}
	ask, err := chromedp.Run(tctx, chromedp.Poll[view](`(() => {
		if (document.querySelector("#answer").hidden) return null;
		return `+read+`;
	})()`, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("no marked sentences after ask: %v", err)
	}
	if want := map[string][]string{"doc1#0": {"A Spanish explorer sent on a diplomatic mission"}}; !reflect.DeepEqual(ask.Marks, want) {
		t.Fatalf("after ask %+v, want %v", ask, want)
	}
}

// evidenceAsker answers with a selection that pruned its one passage.
type evidenceAsker struct{}

func (evidenceAsker) Ask(ctx context.Context, req server.AskRequest) (server.AskResponse, error) {
	text := "Alvaro Mexia\nA Spanish explorer sent on a diplomatic mission to the Ais people. He wrote a report."
	ps := []server.Passage{{ID: "doc1#0", Score: 0.8, Tokens: 25, Text: text}, {ID: "doc2#1", Score: 0.3, Tokens: 9, Text: "Florida\nA state."}}
	start := strings.Index(text, "A Spanish")
	end := strings.Index(text, " to the Ais")
	sel := ctxsel.Selection{IDs: []string{"doc1#0"}, Indices: []int{0}, K: 1, Tokens: 12,
		Explanation: ctxsel.Explanation{Strategy: "evidence:budget=12", Reason: "kept one sentence", N: 2, K: 1, Tokens: 12, TotalTokens: 34},
		Evidence: []ctxsel.Evidence{{Header: &[2]int{0, 12}, Spans: [][2]int{{start, end}}, Text: "Alvaro Mexia\n" + text[start:end],
			Tokens: 12, PassageTokens: 25, KeptScore: 0.6, Sentences: 2, Why: "kept 1 of 2 sentences"}}}
	return server.AskResponse{Answer: "The Ais.", Passages: ps, Selection: sel}, nil
}
