//go:build !(386 || arm || mips || mipsle)

package weaviate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/ask"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
	"github.com/ctxsel/ctxsel/index/weaviate"
	"github.com/ctxsel/ctxsel/internal/loopback"
	"github.com/ctxsel/ctxsel/lexical"
	"github.com/ctxsel/ctxsel/token"
)

// EnvBin names the weaviate-server binary the integration test starts.
// .ci/run builds it (go install github.com/weaviate/weaviate/cmd/weaviate-server@v1.35.2)
// and runs the test in a private network namespace.
const EnvBin = "CTXSEL_WEAVIATE_BIN"

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startWeaviate runs a single-node server on loopback ports for the test's
// lifetime: anonymous access, no vectorizer, no telemetry, data in a
// temporary directory. It returns host:port.
func startWeaviate(t *testing.T, bin string) string {
	t.Helper()
	port, grpcPort, gossip, dataPort, raft, raftRPC := freePort(t), freePort(t), freePort(t), freePort(t), freePort(t), freePort(t)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "weaviate.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--scheme", "http")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true",
		"DEFAULT_VECTORIZER_MODULE=none",
		"DISABLE_TELEMETRY=true",
		"GO_PROFILING_DISABLE=true",
		"RAFT_TIMEOUTS_MULTIPLIER=1",
		"PERSISTENCE_DATA_PATH=" + filepath.Join(dir, "data"),
		"CLUSTER_HOSTNAME=node1",
		"CLUSTER_ADVERTISE_ADDR=127.0.0.1",
		"GRPC_PORT=" + strconv.Itoa(grpcPort),
		"CLUSTER_GOSSIP_BIND_PORT=" + strconv.Itoa(gossip),
		"CLUSTER_DATA_BIND_PORT=" + strconv.Itoa(dataPort),
		"RAFT_PORT=" + strconv.Itoa(raft),
		"RAFT_INTERNAL_RPC_PORT=" + strconv.Itoa(raftRPC),
		"RAFT_JOIN=node1:" + strconv.Itoa(raft),
		"RAFT_BOOTSTRAP_EXPECT=1",
		"LOG_LEVEL=warning",
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	setPdeathsig(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan struct{}) // closed when the server has exited
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		logf.Close()
	})
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	start := time.Now()
	for {
		resp, err := http.Get("http://" + host + "/v1/.well-known/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			b, _ := os.ReadFile(logPath)
			t.Fatalf("weaviate exited (%v):\n%s", waitErr, b)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Since(start) > 90*time.Second {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("weaviate not ready after 90 s:\n%s", b)
		}
	}
	t.Logf("weaviate ready on %s in %v", host, time.Since(start).Round(time.Millisecond))
	return host
}

// corpus generates documents whose sentences draw on topic vocabularies, so
// questions have clear best matches, a long tail and no exact score ties.
func corpus(n int) map[string]string {
	r := rand.New(rand.NewPCG(7, 11))
	topics := [][]string{
		{"volcano", "lava", "magma", "eruption", "crater", "ash", "basalt"},
		{"river", "delta", "flood", "estuary", "current", "sediment", "bank"},
		{"orbit", "planet", "moon", "comet", "telescope", "gravity", "star"},
		{"bread", "yeast", "oven", "flour", "dough", "crust", "knead"},
		{"violin", "melody", "chord", "rhythm", "orchestra", "tempo", "score"},
	}
	filler := strings.Fields("the a of and to in is was it for on with as by at from that this which were are be had")
	docs := map[string]string{}
	for d := range n {
		t := topics[d%len(topics)]
		var b strings.Builder
		for s := range 8 + d%9 {
			words := 6 + r.IntN(10)
			for w := range words {
				if w > 0 {
					b.WriteByte(' ')
				}
				switch x := r.IntN(10); {
				case x < 4:
					b.WriteString(t[r.IntN(len(t))])
				case x < 5:
					b.WriteString(topics[r.IntN(len(topics))][r.IntN(7)])
				case x < 6:
					fmt.Fprintf(&b, "w%d", r.IntN(5000))
				default:
					b.WriteString(filler[r.IntN(len(filler))])
				}
			}
			fmt.Fprintf(&b, " d%ds%d. ", d, s)
		}
		docs[fmt.Sprintf("topic%d/doc%03d.txt", d%len(topics), d)] = strings.TrimSpace(b.String())
	}
	return docs
}

// noisyEmbedder is the test hash embedder plus a fixed pseudo-random
// component per text: bag-of-words counts alone give many chunks exactly
// equal scores, whose order would then hang on float rounding, which
// differs between any two implementations. Real embeddings do not tie.
type noisyEmbedder struct{}

func (noisyEmbedder) ModelID() string { return "test-noisy-hash-512" }

func (noisyEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = noisyVector(t)
	}
	return out, nil
}

func noisyVector(text string) []float32 {
	v := indextest.HashVector(text)
	h := fnv.New64a()
	h.Write([]byte(text))
	r := rand.New(rand.NewPCG(h.Sum64(), 3))
	for i := range v {
		v[i] += 0.02 * float32(r.NormFloat64())
	}
	return index.Normalize(v)
}

func fill(t *testing.T, stores []index.Store, texts map[string]string) {
	t.Helper()
	tk, _ := token.New("")
	c, _ := chunk.NewSentences(tk, 60)
	cfg := index.Config{Model: noisyEmbedder{}.ModelID(), Chunker: c.Spec(), Encoding: "cl100k_base"}
	var docs []index.Document
	for _, id := range slices.Sorted(mapsKeys(texts)) {
		text := texts[id]
		cs, err := c.Chunk(context.Background(), id, text)
		if err != nil {
			t.Fatal(err)
		}
		d := index.Document{ID: id, Source: "/corpus/" + id, SourceHash: index.Hash([]byte(text)), Hash: index.Hash([]byte(text)), Text: text, Chunks: cs}
		for _, ch := range cs {
			d.Vectors = append(d.Vectors, noisyVector(ch.Text))
		}
		docs = append(docs, d)
	}
	for _, s := range stores {
		for lo := 0; lo < len(docs); lo += 25 {
			if err := s.Add(context.Background(), cfg, docs[lo:min(lo+25, len(docs))]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestIntegration starts a real Weaviate server, fills it and an embedded
// index with the same chunks and vectors, and checks that both return the
// same candidates with the same scores and that ctxsel makes the same
// selections from them. It also exercises List, Stats, replace and Remove.
func TestIntegration(t *testing.T) {
	bin := os.Getenv(EnvBin)
	if bin == "" {
		t.Skipf("set %s to a weaviate-server binary to run the Weaviate integration test (.ci/run does)", EnvBin)
	}
	if err := loopback.Up(); err != nil {
		t.Logf("bringing loopback up: %v", err)
	}
	host := startWeaviate(t, bin)
	ctx := context.Background()
	loc := "weaviate://" + host + "/CtxselParity"
	if _, err := weaviate.Open(ctx, loc, weaviate.Options{}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing collection without Create: %v", err)
	}
	ws, err := index.Open(ctx, loc, index.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ds, err := index.Open(ctx, filepath.Join(t.TempDir(), "idx"), index.OpenOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	texts := corpus(120)
	start := time.Now()
	fill(t, []index.Store{ds, ws}, texts)
	t.Logf("indexed %d documents in both stores in %v", len(texts), time.Since(start).Round(time.Millisecond))

	compareStores(t, ds, ws)
	// a collection keeps no sentence vectors, so it takes none
	if err := ws.Add(ctx, index.Config{Model: "m", SentenceModel: "m"}, nil); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("sentence vectors into a collection: %v", err)
	}

	questions := []string{
		"volcano eruption lava crater", "river flood delta sediment", "planet orbit moon telescope",
		"bread dough yeast oven", "violin orchestra melody", "ash and basalt from the crater of a volcano",
		"w123 w4000 comet", "the of and", "d17s3 volcano",
	}
	strategies := []string{"adaptivek", "adaptivek:head=0.05,buffer=0", "topk:k=5", "topk:k=50", "budget:tokens=800", "knee", "threshold:min=0.3", "topp:p=0.5"}
	checked := 0
	for _, q := range questions {
		qv := noisyVector(q)
		dh, err := ds.Search(ctx, qv, 1000)
		if err != nil {
			t.Fatal(err)
		}
		wh, err := ws.Search(ctx, qv, 1000)
		if err != nil {
			t.Fatal(err)
		}
		compareHits(t, q, dh, wh)
		for _, spec := range strategies {
			for _, order := range []ctxsel.Order{ctxsel.RankOrder, ctxsel.EdgesOrder} {
				da, wa := askBoth(t, ds, ws, q, ask.Options{Strategy: spec, Order: order, Retriever: index.Dense})
				if !slices.Equal(da.Selection.IDs, wa.Selection.IDs) || da.Prompt != wa.Prompt {
					t.Errorf("%q %s %s: selections differ: %s", q, spec, order, diffIDs(da.Selection.IDs, wa.Selection.IDs))
				}
				checked++
			}
		}
	}
	t.Logf("%d selections identical across back ends", checked)

	lexicalParity(t, ds, ws, questions, strategies)

	// replace and remove, then compare again
	texts2 := map[string]string{"topic0/doc000.txt": "A short replacement about magma chambers d0 replaced."}
	fill(t, []index.Store{ds, ws}, texts2)
	for _, s := range []index.Store{ds, ws} {
		n, err := s.Remove(ctx, []string{"topic1/doc001.txt", "topic2/doc002.txt", "no/such/doc"})
		if err != nil || n != 2 {
			t.Fatalf("remove: %d %v", n, err)
		}
	}
	compareStores(t, ds, ws)
	for _, q := range questions[:3] {
		dh, _ := ds.Search(ctx, noisyVector(q), 1000)
		wh, _ := ws.Search(ctx, noisyVector(q), 1000)
		compareHits(t, q+" (after changes)", dh, wh)
		// BM25's corpus statistics follow the replace and remove too
		lq := index.Query{Text: q, Limit: 1000, Retriever: index.BM25}
		dl, err := index.Retrieve(ctx, ds, lq)
		if err != nil {
			t.Fatal(err)
		}
		wl, err := index.Retrieve(ctx, ws, lq)
		if err != nil {
			t.Fatal(err)
		}
		compareCurves(t, q+" bm25 (after changes)", dl, wl, 1+lexical.Default.K1, 0.005*dl[0].Score)
	}

	aboveParity(t, ds, ws)
	olderCollection(t, host, "CtxselParity")

	// a mismatched model is refused by both
	bad := index.Config{Model: "other", Chunker: "sentences:max_tokens=60", Encoding: "cl100k_base"}
	for _, s := range []index.Store{ds, ws} {
		doc := index.Document{ID: "x", Hash: "h", Text: "x", Chunks: []chunk.Chunk{{Doc: "x", End: 1, CharEnd: 1, Text: "x", Tokens: 1}},
			Vectors: [][]float32{noisyVector("x")}}
		if err := s.Add(ctx, bad, []index.Document{doc}); err == nil {
			t.Fatalf("%T accepted another model", s)
		}
	}
	requestsPerAsk(t, host, "CtxselParity")
	if err := ws.(*weaviate.Store).Drop(ctx); err != nil {
		t.Fatal(err)
	}
}

// aboveParity adds a Markdown document whose table runs over many chunks,
// and a text report whose statement does, to both stores and checks that both say the same lines lie above each
// chunk (index.AboveReader: the embedded index from the document's text,
// the collection from what each chunk kept when written), that chunks
// inside the tables get their headers, and that ask sends the same prompt
// from both; then removes it.
func aboveParity(t *testing.T, ds, ws index.Store) {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("# Field guide\n\n## Volcanoes\n\n| Name | Country | Last eruption |\n| --- | --- | --- |\n")
	for i := range 80 {
		fmt.Fprintf(&b, "| Volcano v%d | country c%d | eruption in %d |\n", i, i%9, 1900+i)
	}
	b.WriteString("\n## Rivers\n\nThe river delta holds the flood's sediment.\n")
	const id, report = "guide/field.md", "reports/q1.txt"
	// and a filing exported to text: a statement, columns aligned by spaces
	var r strings.Builder
	r.WriteString("BALANCE SHEETS\n\n                                         March 31,    December 31,\n                                              2024            2023\n")
	for i := range 80 {
		fmt.Fprintf(&r, "%-40s %10s %15s\n", fmt.Sprintf("Account a%d", i), fmt.Sprintf("%d,%03d", 1+i%9, i), fmt.Sprintf("%d,%03d", 2+i%7, 2*i))
	}
	fill(t, []index.Store{ds, ws}, map[string]string{id: b.String(), report: r.String()})
	all, err := ds.Search(ctx, noisyVector("volcano country eruption"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var hits []index.Hit
	for _, h := range all {
		if h.Doc == id || h.Doc == report {
			hits = append(hits, h)
		}
	}
	da, err := ds.(index.AboveReader).Above(ctx, hits)
	if err != nil {
		t.Fatal(err)
	}
	wa, err := ws.(index.AboveReader).Above(ctx, hits)
	if err != nil {
		t.Fatal(err)
	}
	tables, statements := 0, 0
	for i, h := range hits {
		if da[i] != wa[i] {
			t.Errorf("%s: above %q from the embedded index, %q from weaviate", h.ID(), da[i], wa[i])
		}
		if da[i] == "# Field guide\n## Volcanoes\n| Name | Country | Last eruption |\n| --- | --- | --- |" {
			tables++
		}
		if da[i] == "                                         March 31,    December 31,\n                                              2024            2023" {
			statements++
		}
	}
	if len(hits) < 10 || tables < 3 || statements < 3 {
		t.Fatalf("%d chunks of the guide and the report, %d of them inside the guide's table and %d inside the report's statement: want several", len(hits), tables, statements)
	}
	// more hits than one query reads (aboveBatch), each chunk several times
	var many []index.Hit
	for len(many) < 250 {
		many = append(many, hits...)
	}
	wm, err := ws.(index.AboveReader).Above(ctx, many)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range many {
		if want := da[i%len(hits)]; wm[i] != want {
			t.Errorf("%s, hit %d of %d: above %q, want %q", h.ID(), i, len(many), wm[i], want)
		}
	}
	for _, q := range []string{"Which country is volcano v57 in?", "When did volcano v33 last erupt?"} {
		da, wa := askBoth(t, ds, ws, q, ask.Options{Strategy: "evidence:budget=200", Retriever: index.Dense})
		if da.Prompt != wa.Prompt {
			t.Errorf("%q: prompts differ across back ends:\n%s\n---\n%s", q, da.Prompt, wa.Prompt)
		}
		if !strings.Contains(da.Prompt, "| Name | Country | Last eruption |") {
			t.Errorf("%q: no table header in the prompt:\n%s", q, da.Prompt)
		}
	}
	for _, s := range []index.Store{ds, ws} {
		if n, err := s.Remove(ctx, []string{id, report}); err != nil || n != 2 {
			t.Fatalf("remove %s and %s: %d %v", id, report, n, err)
		}
	}
}

// olderCollection makes, beside class, a collection as ctxsel made them
// before chunks kept their lines above (class's schema without the
// property), and checks that Above answers "" for its chunks without
// failing, and that the next add gives it the property and the lines.
func olderCollection(t *testing.T, host, class string) {
	t.Helper()
	ctx := context.Background()
	res, err := http.Get("http://" + host + "/v1/schema/" + class)
	if err != nil {
		t.Fatal(err)
	}
	var cl map[string]any
	err = json.NewDecoder(res.Body).Decode(&cl)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	props, _ := cl["properties"].([]any)
	kept := props[:0]
	for _, p := range props {
		if m, _ := p.(map[string]any); m["name"] != "above" {
			kept = append(kept, p)
		}
	}
	if len(kept) != len(props)-1 {
		t.Fatalf("the collection's schema has no property above: %v", props)
	}
	cl["class"], cl["properties"] = "CtxselOlder", kept
	body, _ := json.Marshal(cl)
	res, err = http.Post("http://"+host+"/v1/schema", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("create the older collection: %s", res.Status)
	}
	old, err := index.Open(ctx, "weaviate://"+host+"/CtxselOlder", index.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer old.(*weaviate.Store).Drop(ctx)
	text := "# Guide\n\n| Code | Meaning |\n| --- | --- |\n" + strings.Repeat("| E1 | a fault of the watchdog |\n", 40)
	hit := index.Hit{}
	hit.Doc, hit.Text = "guide.md", "x"
	// another process's Store, which read the schema before the property
	// was added
	other, err := index.Open(ctx, "weaviate://"+host+"/CtxselOlder", index.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []index.Store{old, other} {
		if got, err := s.(index.AboveReader).Above(ctx, []index.Hit{hit}); err != nil || len(got) != 1 || got[0] != "" {
			t.Fatalf("Above over a collection without the property: %q %v", got, err)
		}
	}
	fill(t, []index.Store{old}, map[string]string{"guide.md": text})
	// the server refuses the property a second time, which is what other's
	// schema says it lacks
	res, err = http.Post("http://"+host+"/v1/schema/CtxselOlder/properties", "application/json", strings.NewReader(`{"name":"above","dataType":["text"]}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusOK {
		t.Errorf("the server took the property above twice")
	}
	// its next add finds the property there: no error
	fill(t, []index.Store{other}, map[string]string{"guide2.md": text})
	hits, err := old.Search(ctx, noisyVector("watchdog fault"), 100)
	if err != nil {
		t.Fatal(err)
	}
	got, err := old.(index.AboveReader).Above(ctx, hits)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i, h := range hits {
		if want := chunk.Above(text, h.Start); got[i] != want {
			t.Errorf("%s: above %q after the add, want %q", h.ID(), got[i], want)
		}
		if got[i] != "" {
			n++
		}
	}
	if len(hits) < 3 || n < 2 {
		t.Errorf("%d chunks, %d with lines above: want several", len(hits), n)
	}
}

// askBoth asks q of the embedded index ds and the collection ws alike.
func askBoth(t *testing.T, ds, ws index.Store, q string, opts ask.Options) (fromDir, fromWeaviate ask.Answer) {
	t.Helper()
	da, err := ask.Ask(context.Background(), ds, noisyEmbedder{}, q, opts)
	if err != nil {
		t.Fatal(err)
	}
	wa, err := ask.Ask(context.Background(), ws, noisyEmbedder{}, q, opts)
	if err != nil {
		t.Fatal(err)
	}
	return da, wa
}

// requestsPerAsk checks the Store's per-process knowledge of the
// collection: once it has read the schema and the statistics, an ask
// sends its query and nothing else; its own Remove refreshes the
// statistics. The requests are counted by a proxy in front of the server.
func requestsPerAsk(t *testing.T, host, class string) {
	t.Helper()
	ctx := context.Background()
	var n atomic.Int64
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ws, err := weaviate.Open(ctx, "weaviate://"+strings.TrimPrefix(srv.URL, "http://")+"/"+class, weaviate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := ask.Options{Strategy: "topk:k=5", Retriever: index.Hybrid}
	first := n.Load()
	if _, err := ask.Ask(ctx, ws, noisyEmbedder{}, "volcano eruption lava", opts); err != nil {
		t.Fatal(err)
	}
	cold := n.Load() - first
	before := n.Load()
	if _, err := ask.Ask(ctx, ws, noisyEmbedder{}, "river flood delta", opts); err != nil {
		t.Fatal(err)
	}
	if warm := n.Load() - before; warm != 1 {
		t.Errorf("a second ask sent %d requests, want 1 (the query alone)", warm)
	}
	t.Logf("requests per ask: %d cold, 1 once the schema and statistics are known", cold)
	st, err := ws.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := ws.List(ctx)
	if err != nil || len(list) == 0 {
		t.Fatalf("list: %d, %v", len(list), err)
	}
	if k, err := ws.Remove(ctx, []string{list[0].ID}); err != nil || k != 1 {
		t.Fatalf("remove: %d %v", k, err)
	}
	after, err := ws.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Docs != st.Docs-1 || after.Chunks != st.Chunks-list[0].Chunks {
		t.Errorf("stats after removing %s (%d chunks): %+v, before %+v", list[0].ID, list[0].Chunks, after, st)
	}
}

func compareStores(t *testing.T, ds, ws index.Store) {
	t.Helper()
	ctx := context.Background()
	dl, err := ds.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := ws.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(dl) != len(wl) {
		t.Fatalf("embedded lists %d documents, weaviate %d", len(dl), len(wl))
	}
	for i := range dl {
		a, b := dl[i], wl[i]
		if a.ID != b.ID || a.Chunks != b.Chunks || a.Tokens != b.Tokens || a.Hash != b.Hash || a.Source != b.Source ||
			a.SourceHash != b.SourceHash || a.Bytes != b.Bytes {
			t.Fatalf("document %d differs:\nembedded %+v\nweaviate %+v", i, a, b)
		}
	}
	dst, _ := ds.Stats(ctx)
	wst, err := ws.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if dst.Docs != wst.Docs || dst.Chunks != wst.Chunks || dst.Tokens != wst.Tokens || dst.Config != wst.Config {
		t.Fatalf("stats differ:\nembedded %+v\nweaviate %+v", dst, wst)
	}
}

// compareHits checks both stores returned the same chunks, in the same
// order except among scores closer than float32 rounding, with the same
// scores and provenance.
func compareHits(t *testing.T, q string, dh, wh []index.Hit) {
	t.Helper()
	if len(dh) != len(wh) || len(dh) == 0 {
		t.Fatalf("%q: %d embedded hits, %d weaviate hits", q, len(dh), len(wh))
	}
	const tol = 1e-5
	for i := range dh {
		a, b := dh[i], wh[i]
		if math.Abs(a.Score-b.Score) > tol {
			t.Fatalf("%q rank %d: embedded %s %.7f, weaviate %s %.7f", q, i, a.ID(), a.Score, b.ID(), b.Score)
		}
		if a.ID() != b.ID() {
			// only a near-tie may swap
			j := slices.IndexFunc(wh, func(h index.Hit) bool { return h.ID() == a.ID() })
			if j < 0 || math.Abs(wh[j].Score-a.Score) > tol {
				t.Fatalf("%q rank %d: embedded %s (%.7f), weaviate %s (%.7f)", q, i, a.ID(), a.Score, b.ID(), b.Score)
			}
			continue
		}
		if a.Text != b.Text || a.Start != b.Start || a.End != b.End || a.CharStart != b.CharStart || a.CharEnd != b.CharEnd ||
			a.Tokens != b.Tokens || a.Source != b.Source {
			t.Fatalf("%q rank %d: provenance differs:\nembedded %+v\nweaviate %+v", q, i, a, b)
		}
	}
}

// diffIDs describes the first difference between two id lists.
func diffIDs(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("position %d: embedded %s, weaviate %s (lengths %d, %d)", i, a[i], b[i], len(a), len(b))
		}
	}
	return fmt.Sprintf("lengths %d, %d", len(a), len(b))
}
