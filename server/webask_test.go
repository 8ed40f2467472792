package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/server"
)

// subsetAsker plays an index that returns only the selected passages (as
// the real one may): 17 candidates were cut, six were selected at ranks
// 0, 1, 3, 4, 9 and 16 — seven before the reader's window dropped one.
// It records the strategy spec each ask was given.
type subsetAsker struct {
	mu    sync.Mutex
	specs []string
}

var subsetRanks = []int{0, 1, 3, 4, 9, 16}

func (a *subsetAsker) Ask(ctx context.Context, req server.AskRequest) (server.AskResponse, error) {
	a.mu.Lock()
	a.specs = append(a.specs, req.Strategy.Spec)
	a.mu.Unlock()
	scores := make([]float64, 17)
	for r := range scores {
		scores[r] = 0.9 - 0.03*float64(r)
	}
	var ps []server.Passage
	sel := ctxsel.Selection{K: len(subsetRanks), Explanation: ctxsel.Explanation{Strategy: "evidence:budget=1500",
		Reason: "kept sentences; the reader's window dropped 1 of 7", N: 17, K: 7, CapsApplied: []string{"window"}, TotalTokens: 17 * 40}}
	for _, r := range subsetRanks {
		id := fmt.Sprintf("doc%d#0", r)
		ps = append(ps, server.Passage{ID: id, Score: scores[r], Tokens: 40, Text: fmt.Sprintf("Passage %d\nThe text ranked %d.", r, r)})
		sel.IDs = append(sel.IDs, id)
		sel.Indices = append(sel.Indices, r)
		sel.Tokens += 40
	}
	sel.Explanation.Tokens = sel.Tokens
	return server.AskResponse{Answer: "The Ais.", Passages: ps, Selection: sel, Scores: scores}, nil
}

// TestBrowserAskRanksDefaultAndBudget: an ask whose index returned only the
// selected passages numbers and shades them by their real ranks (the
// selection's indices), shows k after the reader's window, and was asked
// with ctxsel's DefaultStrategy, as `ctxsel ask` is; choosing the evidence
// selector fills its budget, so the select that follows succeeds.
func TestBrowserAskRanksDefaultAndBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	needChromium(t)
	asker := &subsetAsker{}
	srv, err := server.New(server.DefaultConfig(), server.Options{Logger: slog.New(slog.DiscardHandler), Asker: asker,
		SelectorDeps: ctxsel.DepsOf(map[string]any{ctxsel.DepEmbedder: indextest.HashEmbedder{}})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx := newBrowser(t)
	tctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx,
		chromedp.Navigate(ts.URL),
		chromedp.WaitVisible("#cut-marker"),
		chromedp.SetValue("#question", "Which people did Alvaro Mexia visit?"),
		chromedp.Click("#ask"),
	); err != nil {
		t.Fatal(err)
	}
	type view struct {
		K        string   `json:"k"`
		Selected []string `json:"selected"`
		Ranks    []string `json:"ranks"`
		CutLabel string   `json:"cutLabel"`
		Reason   string   `json:"reason"`
		ListCut  string   `json:"listCut"`
		Note     string   `json:"note"`
	}
	v, err := chromedp.Run(tctx, chromedp.Poll[view](`(() => {
		if (document.querySelector("#answer").hidden) return null;
		const sel = [...document.querySelectorAll("#passages li.passage.selected")];
		return {
			k: document.querySelector("#selected-count").dataset.k,
			selected: sel.map((li) => li.dataset.id),
			ranks: sel.map((li) => li.querySelector(".rank").textContent),
			cutLabel: document.querySelector("#cut-marker text").textContent,
			reason: document.querySelector("#reason").textContent,
			listCut: document.querySelector("#passages .cut-row")?.textContent || "",
			note: document.querySelector("#ask-note").textContent,
		};
	})()`, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("no answer on the page: %v", err)
	}
	var wantIDs, wantRanks []string
	for _, r := range subsetRanks {
		wantIDs = append(wantIDs, fmt.Sprintf("doc%d#0", r))
		wantRanks = append(wantRanks, fmt.Sprintf("#%d", r))
	}
	if !slices.Equal(v.Selected, wantIDs) || !slices.Equal(v.Ranks, wantRanks) {
		t.Errorf("selected %v at %v, want %v at %v", v.Selected, v.Ranks, wantIDs, wantRanks)
	}
	if v.K != "6" || v.CutLabel != "cut · k = 6" || !strings.Contains(v.Reason, "→ k = 6") || strings.Contains(v.Reason+v.CutLabel+v.ListCut, "k = 7") {
		t.Errorf("k after the window: %+v", v)
	}
	asker.mu.Lock()
	specs := slices.Clone(asker.specs)
	asker.mu.Unlock()
	if len(specs) != 1 || specs[0] != ctxsel.DefaultStrategy || !strings.Contains(v.Note, "the default of ask") {
		t.Errorf("asked with %q (note %q), want ctxsel's DefaultStrategy %q", specs, v.Note, ctxsel.DefaultStrategy)
	}

	// The evidence selector, chosen: its budget is filled in (ask's default
	// budget), and the select it runs succeeds.
	if err := chromedp.Do(tctx,
		chromedp.SetValue("#strategy", "evidence"),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`(document.querySelector("#strategy").dispatchEvent(new Event("change")), true)`)(ctx, t)
			return err
		}),
	); err != nil {
		t.Fatal(err)
	}
	type evView struct {
		Budget string `json:"budget"`
		Error  string `json:"error"`
		Why    int    `json:"why"`
	}
	ev, err := chromedp.Run(tctx, chromedp.Poll[evView](`(() => {
		const err = document.querySelector("#error");
		const why = document.querySelectorAll("#passages .why").length;
		if (err.hidden && why === 0) return null;
		return { budget: document.querySelector("#param-budget").value, error: err.hidden ? "" : err.textContent, why };
	})()`, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatalf("no selection after choosing evidence: %v", err)
	}
	if ev.Budget != "1500" || ev.Error != "" || ev.Why == 0 {
		t.Errorf("after choosing evidence: %+v", ev)
	}
}

// TestBrowserNewerRequestWins: a select still in flight when Ask is
// clicked is aborted by the page, so its answer can never replace the
// ask's.
func TestBrowserNewerRequestWins(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a browser")
	}
	needChromium(t)
	srv, err := server.New(server.DefaultConfig(), server.Options{Logger: slog.New(slog.DiscardHandler), Asker: &subsetAsker{}})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		blocking bool
	)
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	ended := make(chan string, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		block := blocking && r.URL.Path == "/v1/select"
		mu.Unlock()
		if block {
			// Read the body first: Go notices a client's disconnect only
			// once the request body has been read.
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			arrived <- struct{}{}
			select {
			case <-r.Context().Done():
				ended <- "aborted"
				return
			case <-release:
				ended <- "answered"
			}
		}
		srv.Handler().ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx := newBrowser(t)
	tctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(ts.URL), chromedp.WaitVisible("#cut-marker"),
		chromedp.SetValue("#question", "Which people did Alvaro Mexia visit?")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	blocking = true
	mu.Unlock()
	if err := chromedp.Do(tctx, chromedp.Click("#run")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-tctx.Done():
		t.Fatal("the select did not reach the server")
	}
	if err := chromedp.Do(tctx, chromedp.Click("#ask")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tctx, chromedp.Poll[bool](`!document.querySelector("#answer").hidden`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("no answer: %v", err)
	}
	var how string
	select {
	case how = <-ended:
	case <-tctx.Done():
		close(release)
		how = <-ended
	}
	if how != "aborted" {
		t.Fatalf("the select in flight when Ask was clicked was %s, not aborted", how)
	}
	k, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.querySelector("#answer").hidden ? "" : document.querySelector("#selected-count").dataset.k`))
	if err != nil || k != "6" {
		t.Fatalf("after the aborted select: k %q %v, want the ask's 6", k, err)
	}
}
