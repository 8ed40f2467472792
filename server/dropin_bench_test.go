package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/cache"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/token"
)

// rerankBenchDocs builds n documents of about 200 tokens from HotpotQA
// passages (consecutive passages joined until 200 tokens), and a question.
func rerankBenchDocs(b *testing.B, n int) (string, []string) {
	recs, err := dataset.LoadFile("../../shared/data/hotpotqa_dev500.jsonl")
	if err != nil {
		b.Fatalf("the benchmark reads HotpotQA from ../shared: %v", err)
	}
	counter, err := token.New(token.Default)
	if err != nil {
		b.Fatal(err)
	}
	var docs []string
	var cur strings.Builder
	for _, r := range recs {
		for _, p := range r.Passages {
			cur.WriteString(p.Text + " ")
			if counter.Count(cur.String()) >= 200 {
				docs = append(docs, strings.TrimSpace(cur.String()))
				cur.Reset()
				if len(docs) == n {
					return recs[0].Question, docs
				}
			}
		}
	}
	b.Fatalf("only %d documents", len(docs))
	return "", nil
}

// loadRun posts body to url from conc clients until b.N requests are done
// and reports req/s, p50 and p99.
func loadRun(b *testing.B, url string, body []byte, conc int) {
	tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := processCPU()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(lat) {
					return
				}
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					failed.Store(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				lat[i] = time.Since(t0)
				if res.StatusCode != http.StatusOK {
					failed.Store(fmt.Errorf("status %d", res.StatusCode))
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := processCPU() - cpu0
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(q(0.50), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	if cpu > 0 {
		// Steadier than wall time on a shared machine (client included).
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/req")
	}
}

// BenchmarkRerank measures POST /v1/rerank with 100 documents of about 200
// tokens, scored by the embedded USE-Lite model (no embedding cache, so
// every request embeds its documents: cold), in each precision, fp32 first
// as the baseline of the same run:
//
//   - PRECISION/embed: the embedder alone on the same 100 documents and
//     the query, the part of a request that cannot be avoided;
//   - PRECISION/http/c=N: a loopback listener with N concurrent clients:
//     req/s, p50/p99 and passages embedded per second. embed's ns/op over
//     http/c=1's is the share of a request spent embedding.
//   - handler-no-embedding: the handler with the vectors precomputed.
func BenchmarkRerank(b *testing.B) {
	query, docs := rerankBenchDocs(b, 100)
	body, _ := json.Marshal(map[string]any{"model": "ctxsel-adaptivek", "query": query, "documents": docs, "top_n": 20})
	for _, p := range []uselite.Precision{uselite.FP32, uselite.Int8} {
		emb, err := uselite.New(uselite.Options{Precision: p})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(p.String()+"/embed", func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				if _, err := emb.Embed(b.Context(), docs); err != nil {
					b.Fatal(err)
				}
				if _, err := emb.Embed(b.Context(), []string{query}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(docs))/b.Elapsed().Seconds(), "passages/s")
			if cpu := processCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/req")
			}
		})
		// Eight requests embedding at once on a small shared machine can
		// pass the default 60 s request timeout; the benchmark measures,
		// not bounds.
		s := newTestServer(b, func(c *Config) { c.RequestTimeout = Duration(10 * time.Minute) }, Options{Embedder: emb})
		ts := httptest.NewServer(s.Handler())
		for _, conc := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/http/c=%d", p, conc), func(b *testing.B) {
				loadRun(b, ts.URL+"/v1/rerank", body, conc)
				b.ReportMetric(float64(b.N*len(docs))/b.Elapsed().Seconds(), "passages/s")
			})
		}
		ts.Close()
	}

	// The same requests with the vectors precomputed: what a request costs
	// besides embedding (decode, BM25-free dense scoring, token counts,
	// selection, encode).
	emb, err := uselite.New(uselite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	memo := memoEmbedder{vecs: map[string][]float32{}}
	all := append([]string{query}, docs...)
	vecs, err := emb.Embed(b.Context(), all)
	if err != nil {
		b.Fatal(err)
	}
	for i, t := range all {
		memo.vecs[t] = vecs[i]
	}
	b.Run("handler-no-embedding", func(b *testing.B) {
		ms := newTestServer(b, nil, Options{Embedder: memo})
		cpu0 := processCPU()
		for b.Loop() {
			rec := call(b, ms, http.MethodPost, "/v1/rerank", string(body))
			if rec.Code != http.StatusOK {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
		if cpu := processCPU() - cpu0; cpu > 0 {
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/req")
		}
	})
}

// BenchmarkMCPSelectContext measures one select_context call with 1,000
// scored candidates, round trip through the Go SDK client: over the
// in-memory transport and over streamable HTTP on loopback, beside the same
// selection as a plain POST /v1/select (the baseline the MCP layer adds to).
func BenchmarkMCPSelectContext(b *testing.B) {
	cands := benchCandidates(1000)
	args := MCPSelectInput{Strategy: "adaptivek"}
	for _, c := range cands {
		score, tokens := c.Score, c.Tokens
		args.Candidates = append(args.Candidates, MCPCandidate{ID: c.ID, Score: &score, Tokens: &tokens})
	}
	s := newTestServer(b, nil, Options{MCP: true})
	call := func(b *testing.B, cs *mcp.ClientSession) {
		cpu0 := processCPU()
		for b.Loop() {
			res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: "select_context", Arguments: args})
			if err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
		}
		if cpu := processCPU() - cpu0; cpu > 0 {
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		}
	}
	b.Run("memory", func(b *testing.B) {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := s.MCPServer().Connect(b.Context(), st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(b.Context(), ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		call(b, cs)
	})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	b.Run("http", func(b *testing.B) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(b.Context(),
			&mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		call(b, cs)
	})
	b.Run("v1-select", func(b *testing.B) {
		loadRun(b, ts.URL+"/v1/select", benchBody(cands, "adaptivek"), 1)
	})
}

// memoEmbedder returns precomputed vectors.
type memoEmbedder struct{ vecs map[string][]float32 }

func (m memoEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := m.vecs[t]
		if !ok {
			return nil, fmt.Errorf("memo: text %d not precomputed", i)
		}
		out[i] = v
	}
	return out, nil
}

func (memoEmbedder) ModelID() string { return "memo" }

// BenchmarkRerankScoringHotpotQA is the measurement behind
// defaultRerankScoring: every HotpotQA dev question (500) reranked through
// the /v1/rerank handler with its own passages, by the default strategy, once
// per scoring mode; it reports the recall of the gold passages among the
// selected ones and the mean k, and hybrid's paired difference to dense
// (mean and standard error). Embeddings come from the user's embedding
// cache (as ctxsel eval keeps it), so repeated runs do not re-embed.
func BenchmarkRerankScoringHotpotQA(b *testing.B) {
	recs, err := dataset.LoadFile("../../shared/data/hotpotqa_dev500.jsonl")
	if err != nil {
		b.Fatalf("reads HotpotQA from ../shared: %v", err)
	}
	m, err := uselite.New(uselite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var emb embed.Embedder = m
	if dir, err := os.UserCacheDir(); err == nil {
		if store, err := cache.Open(filepath.Join(dir, "ctxsel", "embeddings")); err == nil {
			defer store.Close()
			emb = cache.Wrap(m, store)
		}
	}
	s := newTestServer(b, nil, Options{Embedder: emb})
	modes := []string{scoringDense, scoringHybrid, scoringBM25}
	for b.Loop() {
		recall := map[string][]float64{}
		k := map[string]float64{}
		for _, r := range recs {
			texts := make([]string, len(r.Passages))
			gold := 0
			for i, p := range r.Passages {
				texts[i] = p.Text
				if p.Gold {
					gold++
				}
			}
			if gold == 0 {
				continue
			}
			for _, mode := range modes {
				body, _ := json.Marshal(map[string]any{"query": r.Question, "documents": texts, "scoring": mode})
				rec := call(b, s, http.MethodPost, "/v1/rerank", string(body))
				var out rerankResponse
				if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
					b.Fatalf("%s: %d %s", r.ID, rec.Code, rec.Body)
				}
				hit := 0
				for _, res := range out.Results {
					if r.Passages[res.Index].Gold {
						hit++
					}
				}
				recall[mode] = append(recall[mode], float64(hit)/float64(gold))
				k[mode] += float64(len(out.Results))
			}
		}
		n := float64(len(recall[scoringDense]))
		for _, mode := range modes {
			b.ReportMetric(meanOf(recall[mode]), mode+"-recall")
			b.ReportMetric(k[mode]/n, mode+"-k")
		}
		diff := make([]float64, len(recall[scoringDense]))
		for i := range diff {
			diff[i] = recall[scoringHybrid][i] - recall[scoringDense][i]
		}
		mu := meanOf(diff)
		ss := 0.0
		for _, d := range diff {
			ss += (d - mu) * (d - mu)
		}
		b.ReportMetric(mu, "hybrid-dense-recall")
		b.ReportMetric(math.Sqrt(ss/(n-1)/n), "hybrid-dense-se")
	}
}

func meanOf(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
