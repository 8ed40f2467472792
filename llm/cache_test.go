package llm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/llm/llmtest"
)

func TestCachedWarmRunMakesNoCalls(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(nil)
	defer srv.Close()
	prompts := []string{"alpha", "beta", "gamma"}
	run := func() []Response {
		cache, err := OpenCache(dir, CacheOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer cache.Close()
		c, err := Open(Spec{Provider: "openai", Model: "m", BaseURL: srv.URL + "/v1"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		c = Cached(c, cache)
		var out []Response
		for _, p := range prompts {
			r, err := Ask(context.Background(), c, p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	cold := run()
	if srv.Requests() != 3 {
		t.Fatalf("cold run: %d requests", srv.Requests())
	}
	warm := run()
	if srv.Requests() != 3 {
		t.Fatalf("warm run made %d calls, want 0", srv.Requests()-3)
	}
	for i := range cold {
		if warm[i].Content != cold[i].Content || warm[i].PromptTokens != cold[i].PromptTokens || !warm[i].Cached || cold[i].Cached {
			t.Fatalf("reply %d: cold %+v warm %+v", i, cold[i], warm[i])
		}
	}
	// Any change to the request, or to the client's identity, misses.
	cache, _ := OpenCache(dir, CacheOptions{})
	defer cache.Close()
	seed := 1
	c, _ := Open(Spec{Provider: "openai", Model: "m", BaseURL: srv.URL + "/v1"}, Options{Seed: &seed})
	if r, err := Ask(context.Background(), Cached(c, cache), "alpha"); err != nil || r.Cached {
		t.Fatalf("seeded client hit the unseeded entry: %+v %v", r, err)
	}
	c2, _ := Open(Spec{Provider: "openai", Model: "m2", BaseURL: srv.URL + "/v1"}, Options{})
	if r, _ := Ask(context.Background(), Cached(c2, cache), "alpha"); r.Cached {
		t.Fatal("another model hit the cache")
	}
	if st := cache.Stats(); st.Entries != 5 || st.Hits != 0 || st.Misses != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCacheMiddleDamageRebuiltWithNote(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(nil)
	defer srv.Close()
	cache, _ := OpenCache(dir, CacheOptions{})
	c, _ := Open(Spec{Provider: "ollama", Model: "m", BaseURL: srv.URL}, Options{})
	for _, p := range []string{"one", "two", "three"} {
		if _, err := Ask(context.Background(), Cached(c, cache), p); err != nil {
			t.Fatal(err)
		}
	}
	cache.Close()
	path := filepath.Join(dir, cacheFile)
	b, _ := os.ReadFile(path)
	i := strings.Index(string(b), "two")
	b[i] = 'X' // inside the second record's payload
	os.WriteFile(path, b, 0o644)

	var notes []string
	cache, err := OpenCache(dir, CacheOptions{Note: func(m string) { notes = append(notes, m) }})
	if err != nil {
		t.Fatalf("damaged cache must be rebuilt, not fail: %v", err)
	}
	defer cache.Close()
	st := cache.Stats()
	if st.Entries != 2 || len(st.Quarantined) != 1 || len(notes) != 1 {
		t.Fatalf("stats %+v notes %v", st, notes)
	}
	n := srv.Requests()
	for _, p := range []string{"one", "two", "three"} {
		if _, err := Ask(context.Background(), Cached(c, cache), p); err != nil {
			t.Fatal(err)
		}
	}
	if srv.Requests()-n != 1 {
		t.Fatalf("%d calls after rebuild, want 1 (the damaged entry)", srv.Requests()-n)
	}
}

func TestCacheEnv(t *testing.T) {
	t.Setenv(EnvCache, "off")
	if c, err := OpenCacheFromEnv(CacheOptions{}); c != nil || err != nil {
		t.Fatalf("off: %v %v", c, err)
	}
	if Cached(nil, nil) != nil {
		t.Fatal("Cached(c, nil) must return c")
	}
	dir := t.TempDir()
	t.Setenv(EnvCache, dir)
	c, err := OpenCacheFromEnv(CacheOptions{})
	if err != nil || c == nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := os.Stat(filepath.Join(dir, cacheFile+".lock")); err != nil {
		t.Fatalf("cache not in %s: %v", dir, err)
	}
	t.Setenv(EnvCache, "")
	d, err := CacheDir()
	if err == nil && !strings.HasSuffix(d, filepath.Join("ctxsel", "llm")) {
		t.Fatalf("default dir %q", d)
	}
}

// A call cache overwritten with garbage, or with its last record damaged,
// is moved aside or cut with one note and a copy, never emptied silently.
func TestCacheGarbageAndDamagedTailNoted(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(nil)
	defer srv.Close()
	fill := func() {
		cache, err := OpenCache(dir, CacheOptions{Note: func(string) {}})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := Open(Spec{Provider: "openai", Model: "m", BaseURL: srv.URL + "/v1"}, Options{})
		c = Cached(c, cache)
		for _, p := range []string{"alpha", "beta"} {
			if _, err := Ask(context.Background(), c, p); err != nil {
				t.Fatal(err)
			}
		}
		cache.Close()
	}
	open := func() (CacheStats, []string) {
		var notes []string
		cache, err := OpenCache(dir, CacheOptions{Note: func(m string) { notes = append(notes, m) }})
		if err != nil {
			t.Fatal(err)
		}
		defer cache.Close()
		return cache.Stats(), notes
	}
	path := filepath.Join(dir, cacheFile)
	fill()
	b, _ := os.ReadFile(path)
	b[len(b)-10] ^= 0xFF // inside the last record
	os.WriteFile(path, b, 0o644)
	if st, notes := open(); st.Entries != 1 || len(notes) != 1 || len(st.Quarantined) != 1 {
		t.Fatalf("damaged last record: %+v %q", st, notes)
	}
	if _, notes := open(); len(notes) != 0 {
		t.Fatalf("noted twice: %q", notes)
	}
	os.WriteFile(path, []byte(strings.Repeat("garbage!", 100)), 0o644)
	if st, notes := open(); st.Entries != 0 || len(notes) != 1 || len(st.Quarantined) != 1 {
		t.Fatalf("garbage: %+v %q", st, notes)
	}
}
