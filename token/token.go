// Package token counts tokens exactly, the way the reader LLM will: tiktoken's
// byte-pair encodings (cl100k_base by default, o200k_base selectable), with
// their vocabularies compiled into the binary so counting works offline.
package token

import (
	"fmt"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Default is the encoding used when none is named.
const Default = "cl100k_base"

// Counter counts the tokens of a text. Implementations are safe for
// concurrent use.
type Counter interface {
	Count(text string) int
	// Encoding names the tokenizer, e.g. "cl100k_base".
	Encoding() string
}

// Encodings lists the encodings New accepts.
var Encodings = []string{"cl100k_base", "o200k_base"}

// maxCached bounds the per-passage count cache; when full it starts over,
// which is cheap and keeps memory flat on endless streams of new passages.
const maxCached = 1 << 17

// Tiktoken is an exact BPE counter with a cache of counts per passage text:
// evaluation runs count the same pooled passages thousands of times.
type Tiktoken struct {
	name  string
	codec tokenizer.Codec

	mu    sync.RWMutex
	cache map[string]int
}

var (
	sharedMu sync.Mutex
	shared   = map[string]*Tiktoken{}
)

// New returns the counter for an encoding ("" means Default). Counters are
// shared per encoding, so their caches serve the whole process.
func New(encoding string) (*Tiktoken, error) {
	if encoding == "" {
		encoding = Default
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if t, ok := shared[encoding]; ok {
		return t, nil
	}
	var enc tokenizer.Encoding
	switch encoding {
	case "cl100k_base":
		enc = tokenizer.Cl100kBase
	case "o200k_base":
		enc = tokenizer.O200kBase
	default:
		return nil, fmt.Errorf("token encoding %q: unknown (known: %v)", encoding, Encodings)
	}
	codec, err := tokenizer.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("token encoding %s: %w", encoding, err)
	}
	t := &Tiktoken{name: encoding, codec: codec, cache: map[string]int{}}
	shared[encoding] = t
	return t, nil
}

// Encoding names the tokenizer.
func (t *Tiktoken) Encoding() string { return t.name }

// Count returns the exact token count of text. Invalid UTF-8 is counted as
// tiktoken counts raw bytes; it never fails.
func (t *Tiktoken) Count(text string) int {
	t.mu.RLock()
	n, ok := t.cache[text]
	t.mu.RUnlock()
	if ok {
		return n
	}
	n, err := t.codec.Count(text)
	if err != nil { // only possible in strict UTF-8 mode, which is not used
		n = len(text)
	}
	t.mu.Lock()
	if len(t.cache) >= maxCached {
		clear(t.cache)
	}
	t.cache[text] = n
	t.mu.Unlock()
	return n
}

// Encode returns the token ids of text.
func (t *Tiktoken) Encode(text string) ([]uint, error) {
	ids, _, err := t.codec.Encode(text)
	if err != nil {
		return nil, fmt.Errorf("token encode (%s): %w", t.name, err)
	}
	return ids, nil
}

// Decode turns token ids back into text.
func (t *Tiktoken) Decode(ids []uint) (string, error) {
	s, err := t.codec.Decode(ids)
	if err != nil {
		return "", fmt.Errorf("token decode (%s): %w", t.name, err)
	}
	return s, nil
}
