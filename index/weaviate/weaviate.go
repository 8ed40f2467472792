//go:build !(386 || arm || mips || mipsle)

package weaviate

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v5/weaviate"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/auth"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/fault"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/lexical"
)

// EnvAPIKey names the environment variable holding the server's API key.
const EnvAPIKey = "CTXSEL_WEAVIATE_API_KEY"

func init() {
	index.RegisterBackend("weaviate", open)
	index.RegisterBackend("weaviates", open)
}

func open(ctx context.Context, location string, opts index.OpenOptions) (index.Store, error) {
	return Open(ctx, location, Options{Create: opts.Create, APIKey: os.Getenv(EnvAPIKey)})
}

// Options configure Open.
type Options struct {
	// Create allows a collection that does not exist yet; it is made on the
	// first Add. Without it a missing collection is index.ErrNotFound.
	Create bool
	// APIKey authenticates to the server when set.
	APIKey string
	// Timeout bounds each request (default 2 minutes).
	Timeout time.Duration
	// BatchSize is how many chunks one batch request writes (default 256).
	BatchSize int
}

// Store is a Weaviate collection used as an index.Store.
//
// It keeps, per process, what it read of the collection's schema (ctxsel's
// config and the properties) and its statistics (Stats), so that a search
// or an ask sends the query and nothing else once they are known. Its own
// Add, Remove and Drop update them; statistics read elsewhere expire after
// StatsTTL, and any failed query forgets both (the collection may have
// been dropped or re-created by another process).
type Store struct {
	client   *weaviate.Client
	class    string
	location string
	opts     Options

	mu      sync.Mutex
	known   *knownSchema // nil until read
	stats   index.Stats  // valid while statsAt is set and younger than StatsTTL
	statsAt time.Time
}

// StatsTTL is how long a Store trusts statistics it read: another process
// may add to the collection meanwhile.
const StatsTTL = 30 * time.Second

type knownSchema struct {
	cfg index.Config
	cl  *models.Class
}

// forget drops what the Store knows of the collection.
func (s *Store) forget(schema bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if schema {
		s.known = nil
	}
	s.statsAt = time.Time{}
}

var _ index.Store = (*Store)(nil)

var classRE = regexp.MustCompile(`^[A-Z][_0-9A-Za-z]*$`)

// ParseLocation splits weaviate://host:port/Collection into scheme (http or
// https), host:port and the collection name.
func ParseLocation(location string) (scheme, host, class string, err error) {
	u, err := url.Parse(location)
	if err != nil {
		return "", "", "", fmt.Errorf("%w: weaviate location %q: %v", ctxsel.ErrInvalidInput, location, err)
	}
	switch u.Scheme {
	case "weaviate":
		scheme = "http"
	case "weaviates":
		scheme = "https"
	default:
		return "", "", "", fmt.Errorf("%w: weaviate location %q: scheme must be weaviate or weaviates", ctxsel.ErrInvalidInput, location)
	}
	host = u.Host
	if u.Hostname() == "" {
		return "", "", "", fmt.Errorf("%w: weaviate location %q: no host", ctxsel.ErrInvalidInput, location)
	}
	if u.Port() == "" {
		port := "8080"
		if scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	class = strings.Trim(u.Path, "/")
	if !classRE.MatchString(class) {
		return "", "", "", fmt.Errorf("%w: weaviate location %q: want weaviate://host:port/Collection, where Collection starts with a capital letter (letters, digits, _)",
			ctxsel.ErrInvalidInput, location)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", "", fmt.Errorf("%w: weaviate location %q: no credentials, query or fragment (the API key comes from $%s)", ctxsel.ErrInvalidInput, location, EnvAPIKey)
	}
	return scheme, host, class, nil
}

// Open connects to the collection at location (see the package
// documentation) and checks that the server answers.
func Open(ctx context.Context, location string, opts Options) (*Store, error) {
	scheme, host, class, err := ParseLocation(location)
	if err != nil {
		return nil, err
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	cfg := weaviate.Config{Host: host, Scheme: scheme, Timeout: opts.Timeout}
	if opts.APIKey != "" {
		cfg.AuthConfig = auth.ApiKey{Value: opts.APIKey}
	}
	c, err := weaviate.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("weaviate %s: %w", location, err)
	}
	s := &Store{client: c, class: class, location: location, opts: opts}
	ready, err := c.Misc().ReadyChecker().Do(ctx)
	if err != nil || !ready {
		return nil, fmt.Errorf("weaviate %s: server not ready: %w", location, wrap(err))
	}
	exists, err := s.exists(ctx)
	if err != nil {
		return nil, err
	}
	if !exists && !opts.Create {
		return nil, fmt.Errorf("%w: weaviate collection %s does not exist (create it with: ctxsel index add --index %s PATH...)", index.ErrNotFound, class, location)
	}
	return s, nil
}

// wrap turns the client's *fault.WeaviateClientError into an error whose
// text carries the server's message.
func wrap(err error) error {
	if err == nil {
		return errors.New("no answer")
	}
	var we *fault.WeaviateClientError
	if errors.As(err, &we) {
		msg := we.Msg
		if we.DerivedFromError != nil {
			msg += ": " + we.DerivedFromError.Error()
		}
		if we.StatusCode > 0 {
			return fmt.Errorf("status %d: %s", we.StatusCode, msg)
		}
		return errors.New(msg)
	}
	return err
}

func (s *Store) errf(op string, err error) error {
	return fmt.Errorf("weaviate %s: %s: %w", s.location, op, wrap(err))
}

func (s *Store) exists(ctx context.Context) (bool, error) {
	ok, err := s.client.Schema().ClassExistenceChecker().WithClassName(s.class).Do(ctx)
	if err != nil {
		return false, s.errf("check collection", err)
	}
	return ok, nil
}

// config reads ctxsel's config from the collection description; ok is
// false when the collection does not exist.
func (s *Store) config(ctx context.Context) (cfg index.Config, ok bool, err error) {
	cfg, _, ok, err = s.schema(ctx)
	return cfg, ok, err
}

// schema is config with the collection's schema, read once per Store
// (see Store).
func (s *Store) schema(ctx context.Context) (cfg index.Config, cl *models.Class, ok bool, err error) {
	s.mu.Lock()
	k := s.known
	s.mu.Unlock()
	if k != nil {
		return k.cfg, k.cl, true, nil
	}
	cfg, cl, ok, err = s.readSchema(ctx)
	if ok && err == nil {
		s.mu.Lock()
		s.known = &knownSchema{cfg: cfg, cl: cl}
		s.mu.Unlock()
	}
	return cfg, cl, ok, err
}

// readSchema reads ctxsel's config and the schema from the server.
func (s *Store) readSchema(ctx context.Context) (cfg index.Config, cl *models.Class, ok bool, err error) {
	exists, err := s.exists(ctx)
	if err != nil || !exists {
		return cfg, nil, false, err
	}
	cl, err = s.client.Schema().ClassGetter().WithClassName(s.class).Do(ctx)
	if err != nil {
		return cfg, nil, false, s.errf("read collection", err)
	}
	var d struct {
		Ctxsel int          `json:"ctxsel"`
		Config index.Config `json:"config"`
	}
	if err := json.Unmarshal([]byte(cl.Description), &d); err != nil || d.Ctxsel != 1 {
		return cfg, nil, false, fmt.Errorf("%w: weaviate collection %s was not made by ctxsel (its description holds no ctxsel config)", index.ErrMismatch, s.class)
	}
	if cl.VectorIndexType != "" && cl.VectorIndexType != "flat" && cl.VectorIndexType != "hnsw" {
		return cfg, nil, false, fmt.Errorf("%w: weaviate collection %s uses vector index %q", index.ErrMismatch, s.class, cl.VectorIndexType)
	}
	return d.Config, cl, true, nil
}

// Properties of a chunk object.
const (
	pDoc        = "doc"
	pChunkIndex = "chunkIndex"
	pStart      = "start"
	pEnd        = "end"
	pCharStart  = "charStart"
	pCharEnd    = "charEnd"
	pTokens     = "tokens"
	pText       = "text"
	pAbove      = "above" // chunk.Above at the chunk's start: the lines of its document above it it needs
	pTerms      = "terms"
	pSource     = "source"
	pSourceHash = "sourceHash"
	pDocHash    = "docHash"
	pDocChunks  = "docChunks"
	pDocBytes   = "docBytes"
	pAdded      = "added"
)

// textProperty is a text property read back, never searched (BM25 reads
// pTerms alone), filterable or not.
func textProperty(name string, filterable bool) *models.Property {
	no := false
	return &models.Property{Name: name, DataType: []string{"text"}, Tokenization: "field", IndexFilterable: &filterable, IndexSearchable: &no}
}

func (s *Store) createClass(ctx context.Context, cfg index.Config) error {
	desc, _ := json.Marshal(map[string]any{"ctxsel": 1, "config": cfg})
	yes, no := true, false
	text := textProperty
	num := func(name string) *models.Property {
		return &models.Property{Name: name, DataType: []string{"int"}, IndexFilterable: &yes}
	}
	// BM25 searches pTerms: the chunk's lexical.Terms joined by spaces and
	// split on them, so Weaviate's term frequencies, lengths and document
	// frequencies are ctxsel's (its own tokenizer counts stop words in a
	// chunk's length and has another stop list)
	terms := &models.Property{Name: pTerms, DataType: []string{"text"}, Tokenization: "whitespace", IndexFilterable: &no, IndexSearchable: &yes}
	class := &models.Class{
		Class:             s.class,
		Description:       string(desc),
		Vectorizer:        "none",
		VectorIndexType:   "flat",
		VectorIndexConfig: map[string]any{"distance": "cosine"},
		InvertedIndexConfig: &models.InvertedIndexConfig{
			Bm25:      &models.BM25Config{K1: float32(lexical.Default.K1), B: float32(lexical.Default.B)},
			Stopwords: &models.StopwordConfig{Preset: "none"},
		},
		Properties: []*models.Property{
			text(pDoc, true), num(pChunkIndex), num(pStart), num(pEnd), num(pCharStart), num(pCharEnd), num(pTokens),
			text(pText, false), text(pAbove, false), terms, text(pSource, true), text(pSourceHash, false), text(pDocHash, false), num(pDocChunks), num(pDocBytes),
			{Name: pAdded, DataType: []string{"date"}},
		},
	}
	if err := s.client.Schema().ClassCreator().WithClass(class).Do(ctx); err != nil {
		return s.errf("create collection", err)
	}
	return nil
}

// ChunkUUID is the object id of chunk index of doc: a name-based UUID
// (version 5 layout over SHA-1) of "doc#index", so re-adding overwrites.
func ChunkUUID(doc string, index int) string {
	h := sha1.Sum([]byte("ctxsel-chunk\x00" + chunk.ChunkID(doc, index)))
	h[6] = h[6]&0x0f | 0x50
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// Add implements index.Store: the documents' old chunks are deleted, then
// the new ones written in batches.
func (s *Store) Add(ctx context.Context, cfg index.Config, docs []index.Document) error {
	defer s.forget(false)
	dim, err := index.CheckDocuments(docs)
	if err != nil {
		return err
	}
	if cfg.SentenceModel != "" {
		return fmt.Errorf("%w: a Weaviate collection keeps no sentence vectors (the embedded index does: index add --sentences)", ctxsel.ErrInvalidInput)
	}
	if dim != 0 {
		cfg.Dim = dim
	}
	have, ok, err := s.config(ctx)
	if err != nil {
		return err
	}
	switch {
	case !ok && dim == 0:
		return nil // only documents without chunks: nothing to store
	case !ok:
		err := s.createClass(ctx, cfg)
		s.forget(true)
		if err != nil {
			return err
		}
	default:
		if err := cfg.Compatible(have); err != nil {
			return fmt.Errorf("weaviate %s: %w", s.location, err)
		}
	}
	if err := s.ensureAbove(ctx); err != nil {
		return err
	}
	now := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	var batch []*models.Object
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := s.client.Batch().ObjectsBatcher().WithObjects(batch...).Do(ctx)
		if err != nil {
			return s.errf("write chunks", err)
		}
		for _, r := range res {
			if r.Result != nil && r.Result.Errors != nil && len(r.Result.Errors.Error) > 0 {
				return fmt.Errorf("weaviate %s: write chunk %s: %s", s.location, r.ID, r.Result.Errors.Error[0].Message)
			}
		}
		batch = batch[:0]
		return nil
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	if _, err := s.deleteDocs(ctx, ids); err != nil {
		return err
	}
	for _, d := range docs {
		starts := make([]int, len(d.Chunks))
		for i, c := range d.Chunks {
			starts[i] = c.Start
		}
		above := chunk.AboveAll(d.Text, starts)
		for i, c := range d.Chunks {
			batch = append(batch, &models.Object{
				Class: s.class,
				ID:    strfmt.UUID(ChunkUUID(d.ID, i)),
				Properties: map[string]any{
					pDoc: d.ID, pChunkIndex: c.Index, pStart: c.Start, pEnd: c.End, pCharStart: c.CharStart, pCharEnd: c.CharEnd,
					pTokens: c.Tokens, pText: c.Text, pAbove: above[i], pTerms: strings.Join(lexical.Terms(c.Text), " "), pSource: d.Source, pSourceHash: d.SourceHash, pDocHash: d.Hash,
					pDocChunks: len(d.Chunks), pDocBytes: len(d.Text), pAdded: now,
				},
				Vector: models.C11yVector(index.Normalize(d.Vectors[i])),
			})
			if len(batch) >= s.opts.BatchSize {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// deleteDocs deletes every chunk of the given documents.
func (s *Store) deleteDocs(ctx context.Context, ids []string) (deleted int64, err error) {
	for lo := 0; lo < len(ids); lo += 100 {
		part := ids[lo:min(lo+100, len(ids))]
		for {
			where := filters.Where().WithPath([]string{pDoc}).WithOperator(filters.ContainsAny).WithValueText(part...)
			res, err := s.client.Batch().ObjectsBatchDeleter().WithClassName(s.class).WithWhere(where).WithOutput("minimal").Do(ctx)
			if err != nil {
				return deleted, s.errf("delete chunks", err)
			}
			if res == nil || res.Results == nil {
				break
			}
			if res.Results.Failed > 0 {
				return deleted, fmt.Errorf("weaviate %s: delete chunks: %d failed", s.location, res.Results.Failed)
			}
			deleted += res.Results.Successful
			if res.Results.Matches < res.Results.Limit || res.Results.Matches == 0 {
				break
			}
		}
	}
	return deleted, nil
}

// Remove implements index.Store.
func (s *Store) Remove(ctx context.Context, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	docs, err := s.List(ctx)
	if err != nil {
		return 0, err
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	n := 0
	for _, d := range docs {
		if want[d.ID] {
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	defer s.forget(false)
	if _, err := s.deleteDocs(ctx, ids); err != nil {
		return 0, err
	}
	return n, nil
}

// getObjects runs a Get query and returns its objects.
func (s *Store) getObjects(ctx context.Context, b *graphql.GetBuilder) ([]map[string]any, error) {
	resp, err := b.Do(ctx)
	if err != nil {
		s.forget(true)
		return nil, s.errf("query", err)
	}
	if len(resp.Errors) > 0 {
		s.forget(true)
		var msgs []string
		for _, e := range resp.Errors {
			msgs = append(msgs, e.Message)
		}
		return nil, fmt.Errorf("weaviate %s: query: %s", s.location, strings.Join(msgs, "; "))
	}
	get, _ := resp.Data["Get"].(map[string]any)
	list, _ := get[s.class].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, o := range list {
		if m, ok := o.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

func str(m map[string]any, k string) string { v, _ := m[k].(string); return v }

func num(m map[string]any, k string) int {
	switch v := m[k].(type) {
	case float64:
		return int(v)
	case json.Number:
		n, _ := v.Int64()
		return int(n)
	}
	return 0
}

func additional(m map[string]any) map[string]any { a, _ := m["_additional"].(map[string]any); return a }

func fields(names ...string) []graphql.Field {
	out := make([]graphql.Field, len(names))
	for i, n := range names {
		out[i] = graphql.Field{Name: n}
	}
	return out
}

// List implements index.Store by walking the collection with the cursor
// API. Documents with fewer chunks than they were written with (an
// interrupted add) are listed with an empty Hash, so the next add replaces
// them.
func (s *Store) List(ctx context.Context) ([]index.DocInfo, error) {
	exists, err := s.exists(ctx)
	if err != nil || !exists {
		return nil, err
	}
	type acc struct {
		info      index.DocInfo
		seen, all int
		added     string
	}
	docs := map[string]*acc{}
	after := ""
	for {
		fs := append(fields(pDoc, pSource, pSourceHash, pDocHash, pDocChunks, pDocBytes, pTokens, pAdded),
			graphql.Field{Name: "_additional", Fields: fields("id")})
		b := s.client.GraphQL().Get().WithClassName(s.class).WithFields(fs...).WithLimit(1000)
		if after != "" {
			b = b.WithAfter(after)
		}
		objs, err := s.getObjects(ctx, b)
		if err != nil {
			return nil, err
		}
		if len(objs) == 0 {
			break
		}
		for _, o := range objs {
			id := str(o, pDoc)
			a := docs[id]
			if a == nil {
				a = &acc{info: index.DocInfo{ID: id, Source: str(o, pSource), SourceHash: str(o, pSourceHash), Hash: str(o, pDocHash),
					Bytes: num(o, pDocBytes)}, all: num(o, pDocChunks), added: str(o, pAdded)}
				docs[id] = a
			}
			a.seen++
			a.info.Tokens += num(o, pTokens)
		}
		after = str(additional(objs[len(objs)-1]), "id")
		if after == "" {
			break
		}
	}
	out := make([]index.DocInfo, 0, len(docs))
	for _, a := range docs {
		a.info.Chunks = a.seen
		if a.seen != a.all {
			a.info.Hash, a.info.SourceHash = "", "" // torn: make the next add replace it
		}
		if t, err := time.Parse(time.RFC3339, a.added); err == nil {
			a.info.Added = t
		}
		out = append(out, a.info)
	}
	slices.SortFunc(out, func(a, b index.DocInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Stats implements index.Store with two aggregations: chunks and their
// tokens, and documents (as their first chunks); read once per StatsTTL
// (see Store).
func (s *Store) Stats(ctx context.Context) (index.Stats, error) {
	s.mu.Lock()
	if !s.statsAt.IsZero() && time.Since(s.statsAt) < StatsTTL {
		st := s.stats
		s.mu.Unlock()
		return st, nil
	}
	s.mu.Unlock()
	st, err := s.readStats(ctx)
	if err == nil && st.Chunks > 0 {
		s.mu.Lock()
		s.stats, s.statsAt = st, time.Now()
		s.mu.Unlock()
	}
	return st, err
}

func (s *Store) readStats(ctx context.Context) (index.Stats, error) {
	st := index.Stats{Location: s.location, Backend: "weaviate"}
	cfg, ok, err := s.config(ctx)
	if err != nil || !ok {
		return st, err
	}
	st.Config = cfg
	all, err := s.aggregate(ctx, nil)
	if err != nil {
		return st, err
	}
	first, err := s.aggregate(ctx, filters.Where().WithPath([]string{pChunkIndex}).WithOperator(filters.Equal).WithValueInt(0))
	if err != nil {
		return st, err
	}
	st.Chunks, st.Tokens, st.Docs = all.count, all.tokens, first.count
	return st, nil
}

type agg struct{ count, tokens int }

func (s *Store) aggregate(ctx context.Context, where *filters.WhereBuilder) (agg, error) {
	b := s.client.GraphQL().Aggregate().WithClassName(s.class).WithFields(
		graphql.Field{Name: "meta", Fields: fields("count")},
		graphql.Field{Name: pTokens, Fields: fields("sum")})
	if where != nil {
		b = b.WithWhere(where)
	}
	resp, err := b.Do(ctx)
	if err != nil {
		return agg{}, s.errf("aggregate", err)
	}
	if len(resp.Errors) > 0 {
		return agg{}, fmt.Errorf("weaviate %s: aggregate: %s", s.location, resp.Errors[0].Message)
	}
	a, _ := resp.Data["Aggregate"].(map[string]any)
	list, _ := a[s.class].([]any)
	if len(list) == 0 {
		return agg{}, nil
	}
	m, _ := list[0].(map[string]any)
	meta, _ := m["meta"].(map[string]any)
	tok, _ := m[pTokens].(map[string]any)
	return agg{count: num(meta, "count"), tokens: num(tok, "sum")}, nil
}

// Search implements index.Store: nearVector with the given limit; scores
// are 1 − cosine distance.
func (s *Store) Search(ctx context.Context, vec []float32, limit int) ([]index.Hit, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("%w: search limit %d, want at least 1", ctxsel.ErrInvalidInput, limit)
	}
	for _, x := range vec {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("%w: query vector has a non-finite component", ctxsel.ErrInvalidInput)
		}
	}
	cfg, ok, err := s.config(ctx)
	if err != nil || !ok {
		return nil, err
	}
	if len(vec) != cfg.Dim {
		return nil, fmt.Errorf("%w: query vector has dimension %d, the index %d", index.ErrMismatch, len(vec), cfg.Dim)
	}
	near := s.client.GraphQL().NearVectorArgBuilder().WithVector(index.Normalize(vec))
	fs := append(fields(pDoc, pChunkIndex, pStart, pEnd, pCharStart, pCharEnd, pTokens, pText, pSource),
		graphql.Field{Name: "_additional", Fields: fields("distance")})
	objs, err := s.getObjects(ctx, s.client.GraphQL().Get().WithClassName(s.class).WithNearVector(near).WithFields(fs...).WithLimit(limit))
	if err != nil {
		return nil, err
	}
	hits := make([]index.Hit, 0, len(objs))
	for _, o := range objs {
		d, ok := additional(o)["distance"].(float64)
		if !ok {
			return nil, fmt.Errorf("weaviate %s: search: result without a distance", s.location)
		}
		h := index.Hit{Source: str(o, pSource), Score: 1 - d}
		h.Doc, h.Index, h.Text = str(o, pDoc), num(o, pChunkIndex), str(o, pText)
		h.Start, h.End, h.CharStart, h.CharEnd, h.Tokens = num(o, pStart), num(o, pEnd), num(o, pCharStart), num(o, pCharEnd), num(o, pTokens)
		hits = append(hits, h)
	}
	index.SortHits(hits)
	return hits, nil
}

// hasAbove reports a collection whose chunks keep what lies above them
// (pAbove): one made before it keeps none until its documents are added
// again.
func hasAbove(cl *models.Class) bool {
	for _, p := range cl.Properties {
		if p.Name == pAbove {
			return true
		}
	}
	return false
}

// ensureAbove adds pAbove to a collection made before it, so that the
// chunks written now keep it (Weaviate's own guess of a new property's
// type and index is not left to its auto-schema).
func (s *Store) ensureAbove(ctx context.Context) error {
	_, cl, ok, err := s.schema(ctx)
	if err != nil || !ok || hasAbove(cl) {
		return err
	}
	err = s.client.Schema().PropertyCreator().WithClassName(s.class).WithProperty(textProperty(pAbove, false)).Do(ctx)
	s.forget(true)
	if err != nil {
		// another writer may have added it since this Store read the
		// schema (kept per process): the server refuses it twice
		if _, cl, ok, rerr := s.schema(ctx); rerr == nil && ok && hasAbove(cl) {
			return nil
		}
		return s.errf("add the property "+pAbove, err)
	}
	return nil
}

var _ index.AboveReader = (*Store)(nil)

// aboveBatch is how many chunks one Above query reads.
const aboveBatch = 100

// Above implements index.AboveReader from what each chunk kept when it
// was written (pAbove), for the hits whose chunk is the one stored now;
// "" for every hit of a collection made before chunks kept it.
func (s *Store) Above(ctx context.Context, hits []index.Hit) ([]string, error) {
	out := make([]string, len(hits))
	_, cl, ok, err := s.schema(ctx)
	if err != nil || !ok || !hasAbove(cl) {
		return out, err
	}
	for lo := 0; lo < len(hits); lo += aboveBatch {
		part := hits[lo:min(lo+aboveBatch, len(hits))]
		ids := make([]string, len(part))
		for i, h := range part {
			ids[i] = ChunkUUID(h.Doc, h.Index)
		}
		where := filters.Where().WithPath([]string{"id"}).WithOperator(filters.ContainsAny).WithValueText(ids...)
		fs := append(fields(pStart, pEnd, pText, pAbove), graphql.Field{Name: "_additional", Fields: fields("id")})
		objs, err := s.getObjects(ctx, s.client.GraphQL().Get().WithClassName(s.class).WithWhere(where).WithFields(fs...).WithLimit(len(ids)))
		if err != nil {
			return nil, err
		}
		byID := make(map[string]map[string]any, len(objs))
		for _, o := range objs {
			byID[str(additional(o), "id")] = o
		}
		for i, h := range part {
			o := byID[ids[i]]
			if o == nil || num(o, pStart) != h.Start || num(o, pEnd) != h.End || str(o, pText) != h.Text {
				continue // not the chunk the collection holds now
			}
			out[lo+i] = str(o, pAbove)
		}
	}
	return out, nil
}

// Close implements index.Store.
func (s *Store) Close() error { return nil }

// Drop deletes the whole collection (tests and clean-up).
func (s *Store) Drop(ctx context.Context) error {
	defer s.forget(true)
	exists, err := s.exists(ctx)
	if err != nil || !exists {
		return err
	}
	if err := s.client.Schema().ClassDeleter().WithClassName(s.class).Do(ctx); err != nil {
		return s.errf("drop collection", err)
	}
	return nil
}
