package llm

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ctxsel/ctxsel/internal/recordlog"
)

// EnvCache configures the LLM-call cache: unset means the user cache
// directory (os.UserCacheDir()/ctxsel/llm), "off" disables it, anything else
// is the directory to use.
const EnvCache = "CTXSEL_LLM_CACHE"

// cacheFile and cacheID name the log inside a cache directory; cacheID
// changes whenever the key or payload encoding does.
const (
	cacheFile = "calls.log"
	cacheID   = "ctxsel llm calls v1"
)

// Cache is a persistent store of LLM replies keyed by (client identity,
// full request): a re-run of the same experiment makes no calls. It is
// safe for concurrent use, by several processes too (see internal/recordlog:
// checksummed append-only records, flock, torn tails truncated, a file
// damaged in the middle moved aside and rebuilt with a note).
type Cache struct {
	log   *recordlog.Log
	mu    sync.RWMutex
	byKey map[recordlog.Key][]byte

	hits, misses atomic.Int64
}

// CacheOptions tune OpenCache.
type CacheOptions struct {
	// Note receives notices such as a quarantined file (default slog.Warn).
	Note func(msg string)
	// FailOnCorrupt makes a file damaged in the middle an error.
	FailOnCorrupt bool
}

// CacheStats count lookups through Cached.
type CacheStats struct {
	Entries      int
	Hits, Misses int64
	// RecoveredBytes and Quarantined report repairs made on disk.
	RecoveredBytes int64
	Quarantined    []string
}

// OpenCache opens (creating) the cache in dir.
func OpenCache(dir string, opts CacheOptions) (*Cache, error) {
	c := &Cache{byKey: map[recordlog.Key][]byte{}}
	l, err := recordlog.Open(filepath.Join(dir, cacheFile), cacheID,
		recordlog.Options{Note: opts.Note, FailOnCorrupt: opts.FailOnCorrupt, Valid: json.Valid},
		func(r recordlog.Record) { c.byKey[r.Key] = append([]byte(nil), r.Payload...) })
	if err != nil {
		return nil, fmt.Errorf("llm: cache: %w", err)
	}
	c.log = l
	return c, nil
}

// CacheDir is the directory EnvCache selects, "" when it says off.
func CacheDir() (string, error) {
	v := strings.TrimSpace(os.Getenv(EnvCache))
	switch {
	case strings.EqualFold(v, "off"):
		return "", nil
	case v != "":
		return v, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("llm: no user cache directory (set %s=/path or off): %w", EnvCache, err)
	}
	return filepath.Join(base, "ctxsel", "llm"), nil
}

// OpenCacheFromEnv opens the cache EnvCache selects; nil (and no error)
// when it is off.
func OpenCacheFromEnv(opts CacheOptions) (*Cache, error) {
	dir, err := CacheDir()
	if err != nil || dir == "" {
		return nil, err
	}
	return OpenCache(dir, opts)
}

// Close releases the cache's files.
func (c *Cache) Close() error {
	if c == nil {
		return nil
	}
	return c.log.Close()
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.RLock()
	n := len(c.byKey)
	c.mu.RUnlock()
	ls := c.log.Stats()
	return CacheStats{Entries: n, Hits: c.hits.Load(), Misses: c.misses.Load(),
		RecoveredBytes: ls.RecoveredBytes, Quarantined: ls.Quarantined}
}

// CacheKey is the key of req sent through client identity id: a hash of
// both, the request's messages, model, temperature, seed and max tokens
// included.
func CacheKey(id string, req Request) [32]byte {
	b, _ := json.Marshal(struct {
		ID  string  `json:"id"`
		Req Request `json:"req"`
	}{id, req})
	return sha256.Sum256(b)
}

func (c *Cache) get(k recordlog.Key) (Response, bool) {
	c.mu.RLock()
	b, ok := c.byKey[k]
	c.mu.RUnlock()
	if !ok {
		return Response{}, false
	}
	var r Response
	if json.Unmarshal(b, &r) != nil || r.Defect() != "" {
		return Response{}, false // a degenerate reply stored by an older version is asked again
	}
	return r, true
}

func (c *Cache) put(k recordlog.Key, r Response) error {
	r.Cached = false
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("llm: cache: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.log.Append([]recordlog.Record{{Key: k, Payload: b}}, func(k recordlog.Key) bool { _, ok := c.byKey[k]; return ok })
	if err != nil {
		return fmt.Errorf("llm: cache: %w", err)
	}
	return nil
}

// Cached returns client with its replies looked up in, and stored to, c.
// A nil c returns client unchanged. Failed calls are not stored, nor are
// degenerate replies (Response.Defect): a re-run asks again rather than
// replaying an empty or cut-off answer as a good one.
func Cached(client Client, c *Cache) Client {
	if c == nil {
		return client
	}
	return &cachedClient{inner: client, cache: c, id: Identity(client)}
}

type cachedClient struct {
	inner Client
	cache *Cache
	id    string
}

func (c *cachedClient) Describe() string { return c.inner.Describe() }
func (c *cachedClient) Identity() string { return c.id }

func (c *cachedClient) Chat(ctx context.Context, req Request) (Response, error) {
	k := recordlog.Key(CacheKey(c.id, req))
	if r, ok := c.cache.get(k); ok {
		c.cache.hits.Add(1)
		r.Cached = true
		return r, nil
	}
	c.cache.misses.Add(1)
	r, err := c.inner.Chat(ctx, req)
	if err != nil || r.Defect() != "" {
		return r, err
	}
	if err := c.cache.put(k, r); err != nil {
		return r, err
	}
	return r, nil
}
