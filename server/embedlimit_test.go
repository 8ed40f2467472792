package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateEmbedder blocks every call until release is closed, whatever its
// context says (as the offline model runs a long text to the end), and
// reports each start on started.
type gateEmbedder struct {
	started chan struct{}
	release chan struct{}
}

func newGate() gateEmbedder {
	return gateEmbedder{started: make(chan struct{}, 64), release: make(chan struct{})}
}

func (g gateEmbedder) ModelID() string { return "gate" }

func (g gateEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.started <- struct{}{}
	<-g.release
	return fakeEmbedder{}.Embed(ctx, texts)
}

func TestEmbedLimiterQueueAndRefusal(t *testing.T) {
	l := newEmbedLimiter(1, 2)
	ctx := context.Background()
	first, err := l.acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Two wait, in arrival order; a third is refused at once.
	order := make(chan int, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := l.acquire(ctx, 1)
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			release()
		}()
		for l.waiting.Load() != int64(i+1) {
			time.Sleep(time.Millisecond)
		}
	}
	_, err = l.acquire(ctx, 1)
	var busy *busyError
	if !errors.As(err, &busy) || busy.running != 1 || busy.waiting != 2 || busy.texts != 2 || busy.retryAfterSeconds() == "" {
		t.Fatalf("third waiter: %v", err)
	}
	first()
	first() // a second release is a no-op
	wg.Wait()
	if a, b := <-order, <-order; a != 0 || b != 1 {
		t.Errorf("served %d then %d, want arrival order", a, b)
	}
	if l.refused.Load() != 1 || l.calls.Load() != 3 || l.running.Load() != 0 || l.waiting.Load() != 0 {
		t.Errorf("refused %d calls %d running %d waiting %d", l.refused.Load(), l.calls.Load(), l.running.Load(), l.waiting.Load())
	}
	// A waiter whose deadline passes gives up without a slot.
	hold, _ := l.acquire(ctx, 1)
	dctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.acquire(dctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", err)
	}
	hold()
	if l.waiting.Load() != 0 || l.waitingTexts.Load() != 0 || !l.sem.TryAcquire(1) {
		t.Errorf("a cancelled waiter kept its place or a slot")
	}
}

// TestEmbedLimiterCountsTexts: the queue holds texts, not calls. With the
// one slot taken and a queue of 4 texts, a 3-text call waits, a 2-text
// call is then refused and a 1-text call waits; a call larger than the
// whole queue waits only when nothing else does.
func TestEmbedLimiterCountsTexts(t *testing.T) {
	l := newEmbedLimiter(1, 4)
	ctx := context.Background()
	hold, err := l.acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wait := func(n int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := l.acquire(ctx, n)
			if err != nil {
				t.Errorf("%d texts: %v", n, err)
				return
			}
			release()
		}()
	}
	waitFor := func(texts int64) {
		for l.waitingTexts.Load() != texts {
			time.Sleep(time.Millisecond)
		}
	}
	wait(3)
	waitFor(3)
	var busy *busyError
	if _, err := l.acquire(ctx, 2); !errors.As(err, &busy) || busy.texts != 3 {
		t.Fatalf("2 texts behind 3 in a queue of 4: %v", err)
	}
	wait(1)
	waitFor(4)
	if _, err := l.acquire(ctx, 100); !errors.As(err, &busy) {
		t.Fatalf("100 texts behind a full queue: %v", err)
	}
	hold()
	wg.Wait()
	hold, _ = l.acquire(ctx, 1)
	wait(100) // larger than the queue, alone in it
	waitFor(4)
	hold()
	wg.Wait()
	if l.refused.Load() != 2 || l.texts.Load() != 1+3+1+1+100 || l.waitingTexts.Load() != 0 {
		t.Errorf("refused %d texts %d waiting %d", l.refused.Load(), l.texts.Load(), l.waitingTexts.Load())
	}
}

// TestEmbedLimitOverHTTP: with every slot taken and the queue full, a
// request that must embed is refused with 503 and Retry-After (in the
// rerank routes' shape there), the slot stays taken until the embedder
// really returns, even after its request timed out, and the metrics count
// it all.
func TestEmbedLimitOverHTTP(t *testing.T) {
	g := newGate()
	s := newTestServer(t, func(c *Config) {
		c.EmbedConcurrency = 1
		c.EmbedQueue = 0
		c.RequestTimeout = Duration(200 * time.Millisecond)
	},
		Options{Embedder: g})
	// The first request takes the one slot and times out holding it.
	done := make(chan int)
	go func() { done <- call(t, s, "POST", "/v1/embeddings", `{"input":"abc"}`).Code }()
	<-g.started
	if code := <-done; code != http.StatusGatewayTimeout {
		t.Fatalf("the held request: %d, want 504", code)
	}
	for _, tc := range []struct{ path, body string }{
		{"/v1/embeddings", `{"input":"abc"}`},
		{"/v1/select", `{"query":"q","candidates":[{"id":"a","text":"abc"}]}`},
		{"/v1/rerank", `{"query":"q","documents":["abc"]}`},
	} {
		rec := call(t, s, "POST", tc.path, tc.body)
		ra, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
		if rec.Code != http.StatusServiceUnavailable || ra < 1 || !strings.Contains(rec.Body.String(), "embedder is busy") {
			t.Errorf("%s while the slot is held: %d Retry-After %q %s", tc.path, rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
		if tc.path == "/v1/rerank" {
			var e rerankErr
			_ = json.Unmarshal(rec.Body.Bytes(), &e)
			if !strings.Contains(e.Message, "busy") || e.Detail != e.Message {
				t.Errorf("rerank's 503 not in its wire shape: %s", rec.Body)
			}
		}
	}
	m := call(t, s, "GET", "/metrics", "").Body.String()
	for _, want := range []string{"ctxsel_embed_running 1", "ctxsel_embed_refused_total 3"} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	close(g.release) // the embedder returns: the slot is free again
	for range 100 {
		if rec := call(t, s, "POST", "/v1/embeddings", `{"input":"abc"}`); rec.Code == http.StatusOK {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the slot was not given back after the embedder returned")
}
