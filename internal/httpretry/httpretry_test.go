package httpretry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		ra, ms string
		want   time.Duration
	}{
		{"", "", -1},
		{"7", "", 7 * time.Second},
		{"0", "", 0},
		{"1.5", "", 1500 * time.Millisecond},
		{"-3", "", -1},
		{"soon", "", -1},
		{now.Add(90 * time.Second).Format(http.TimeFormat), "", 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), "", 0},
		{"7", "250", 250 * time.Millisecond},
		{"7", "junk", 7 * time.Second},
	} {
		h := http.Header{}
		if tc.ra != "" {
			h.Set("Retry-After", tc.ra)
		}
		if tc.ms != "" {
			h.Set("Retry-After-Ms", tc.ms)
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("Retry-After %q, -Ms %q: %v, want %v", tc.ra, tc.ms, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	p := Policy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}
	for attempt := 1; attempt <= 40; attempt++ {
		full := min(100*time.Millisecond<<min(attempt-1, 20), time.Second)
		for range 50 {
			d := p.backoff(attempt)
			if d < full/2 || d > full {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, full/2, full)
			}
		}
	}
	if d := (Policy{}).backoff(1); d < DefaultBaseDelay/2 || d > DefaultBaseDelay {
		t.Fatalf("default backoff %v", d)
	}
}

type recorder struct {
	mu sync.Mutex
	d  []time.Duration
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
	return ctx.Err()
}

func serve(t *testing.T, h func(n int, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(int(calls.Add(1)), w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestDo(t *testing.T) {
	srv, calls := serve(t, func(n int, w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if string(body) != "payload" || r.Header.Get("X-Test") != "yes" {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		switch n {
		case 1:
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.WriteHeader(http.StatusInternalServerError)
		default:
			io.WriteString(w, "ok")
		}
	})
	rec := &recorder{}
	p := Policy{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: time.Minute, Sleep: rec.sleep}
	req := Request{Method: "POST", URL: srv.URL, Header: http.Header{"X-Test": {"yes"}}, Body: []byte("payload")}
	body, err := Do(context.Background(), nil, req, p)
	if err != nil || string(body) != "ok" {
		t.Fatalf("%q, %v", body, err)
	}
	if calls.Load() != 3 || len(rec.d) != 2 || rec.d[0] != 3*time.Second || rec.d[1] > 2*time.Millisecond {
		t.Fatalf("calls %d, waits %v", calls.Load(), rec.d)
	}
}

func TestDoStatusErrors(t *testing.T) {
	for _, tc := range []struct {
		status   int
		attempts int32
	}{
		{400, 1}, {401, 1}, {403, 1}, {404, 1}, {422, 1},
		{429, 3}, {500, 3}, {502, 3}, {503, 3}, {504, 3},
	} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv, calls := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, `{"error":"nope"}`)
			})
			p := Policy{MaxRetries: 2, Sleep: (&recorder{}).sleep,
				ErrorMessage: func(b []byte) string { return "parsed:" + string(b) }}
			_, err := Do(context.Background(), srv.Client(), Request{Method: "GET", URL: srv.URL}, p)
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != tc.status || se.Attempts != int(tc.attempts) {
				t.Fatalf("err = %#v", err)
			}
			if !strings.Contains(err.Error(), fmt.Sprint(tc.status)) || !strings.Contains(err.Error(), `parsed:{"error":"nope"}`) {
				t.Fatalf("err = %v", err)
			}
			if calls.Load() != tc.attempts {
				t.Fatalf("%d calls, want %d", calls.Load(), tc.attempts)
			}
		})
	}
}

func TestDoMaxBody(t *testing.T) {
	srv, calls := serve(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, strings.Repeat("x", 100))
	})
	_, err := Do(context.Background(), nil, Request{Method: "GET", URL: srv.URL}, Policy{MaxRetries: 3, MaxBody: 99})
	if err == nil || !strings.Contains(err.Error(), "exceeds") || calls.Load() != 1 {
		t.Fatalf("err = %v after %d calls", err, calls.Load())
	}
	body, err := Do(context.Background(), nil, Request{Method: "GET", URL: srv.URL}, Policy{MaxBody: 100})
	if err != nil || len(body) != 100 {
		t.Fatalf("%d bytes, %v", len(body), err)
	}
}

func TestDoBadRequest(t *testing.T) {
	_, err := Do(context.Background(), nil, Request{Method: "BAD METHOD", URL: "http://x"}, Policy{MaxRetries: 3})
	if err == nil {
		t.Fatal("want an error")
	}
}

func TestSleepCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
}

func TestBatches(t *testing.T) {
	for _, tc := range []struct{ n, size, workers int }{
		{0, 3, 2}, {1, 3, 2}, {10, 3, 1}, {10, 3, 4}, {9, 3, 9}, {100, 7, 3}, {5, 0, 0},
	} {
		var (
			mu     sync.Mutex
			ranges [][2]int
			active atomic.Int32
			peak   atomic.Int32
		)
		err := Batches(context.Background(), tc.n, tc.size, tc.workers, func(_ context.Context, lo, hi int) error {
			a := active.Add(1)
			defer active.Add(-1)
			for {
				p := peak.Load()
				if a <= p || peak.CompareAndSwap(p, a) {
					break
				}
			}
			mu.Lock()
			ranges = append(ranges, [2]int{lo, hi})
			mu.Unlock()
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
		next := 0
		for _, r := range ranges {
			if r[0] != next || r[1] <= r[0] || r[1]-r[0] > max(tc.size, 1) {
				t.Fatalf("%+v: ranges %v", tc, ranges)
			}
			next = r[1]
		}
		if next != tc.n || int(peak.Load()) > max(tc.workers, 1) {
			t.Fatalf("%+v: covered %d, peak %d", tc, next, peak.Load())
		}
	}
}

func TestBatchesFirstErrorStops(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int32
	err := Batches(context.Background(), 100, 1, 1, func(ctx context.Context, lo, _ int) error {
		calls.Add(1)
		if lo == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls.Load() != 4 {
		t.Fatalf("err %v after %d calls", err, calls.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Batches(ctx, 10, 1, 2, func(context.Context, int, int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestShorten(t *testing.T) {
	if got := Shorten("  héllo  ", 2); got != "h…" {
		t.Fatalf("%q", got)
	}
	if got := Shorten("abc", 3); got != "abc" {
		t.Fatalf("%q", got)
	}
}

func TestRedact(t *testing.T) {
	se := &StatusError{StatusCode: 401, Status: "401 Unauthorized", Message: "bad key sk-1", Body: []byte(`{"k":"sk-1"}`)}
	err := Redact(fmt.Errorf("call: %w", se), "sk-1")
	if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), "sk-1") || strings.Contains(string(se.Body), "sk-1") {
		t.Fatalf("leak: %v / %s", err, se.Body)
	}
	var got *StatusError
	if !errors.As(err, &got) || got.StatusCode != 401 {
		t.Fatal("chain lost")
	}
	plain := errors.New("fine")
	if Redact(plain, "sk-1") != plain || Redact(nil, "x") != nil || Redact(plain, "") != plain {
		t.Fatal("Redact changed an error without the secret")
	}
}
