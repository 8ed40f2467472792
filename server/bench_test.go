package server

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel"
)

// benchCandidates is a retriever-shaped curve: a few strong passages, then a
// long slowly decaying tail with noise; ids and token counts as a real
// index would send them.
func benchCandidates(n int) []ctxsel.Candidate {
	rng := rand.New(rand.NewPCG(7, 11))
	cands := make([]ctxsel.Candidate, n)
	for i := range cands {
		score := 0.35 + 0.3*math.Exp(-float64(i)/40) + 0.02*rng.NormFloat64()
		if i < 4 {
			score += 0.2
		}
		cands[i] = ctxsel.Candidate{ID: fmt.Sprintf("doc-%06d#%d", rng.IntN(1_000_000), i), Score: math.Round(score*1e6) / 1e6, Tokens: 60 + rng.IntN(340)}
	}
	rng.Shuffle(n, func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	return cands
}

func benchBody(cands []ctxsel.Candidate, strategy string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"strategy":"` + strategy + `","candidates":[`)
	for i, c := range cands {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%q,"score":%s,"tokens":%d}`, c.ID, strconv.FormatFloat(c.Score, 'g', -1, 64), c.Tokens)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// BenchmarkSelect measures POST /v1/select with 1,000 scored candidates:
//
//   - inprocess: ctxsel.NewCurve + ctxsel.Select on the same candidates, what
//     a Go caller pays;
//   - handler: the handler called directly (decode, select, encode), no
//     network;
//   - http/c=N: a real loopback listener with N concurrent clients, reporting
//     req/s, p50/p99 latency and the process CPU time per request. Client and
//     server share the machine's cores (and, on a shared machine, everything
//     else that runs), so cpu-µs/req is the steadier figure: 2e6/cpu-µs/req
//     is the rate two dedicated cores would sustain, client included.
func BenchmarkSelect(b *testing.B) {
	const n = 1000
	const strategy = "adaptivek"
	cands := benchCandidates(n)
	body := benchBody(cands, strategy)
	st, caps, err := ctxsel.Parse(strategy)
	if err != nil {
		b.Fatal(err)
	}

	b.Run("inprocess", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			curve, err := ctxsel.NewCurve(cands)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ctxsel.Select(curve, st, caps, ctxsel.RankOrder); err != nil {
				b.Fatal(err)
			}
		}
	})

	s := newTestServer(b, nil, Options{})
	b.Run("handler", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		h := s.Handler()
		cpu0 := processCPU()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/v1/select", bytes.NewReader(body))
			req.Host = "127.0.0.1" // the server listens on loopback: only loopback Host values are served
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("%d %s", rec.Code, rec.Body)
			}
		}
		// CPU time per request: steadier than ns/op on a shared machine.
		if cpu := processCPU() - cpu0; cpu > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/1000/float64(b.N), "cpu-µs/req")
		}
	})

	for _, conc := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("http/c=%d", conc), func(b *testing.B) {
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()
			// Buffers that hold a whole request and response: the default 4 KiB
			// turns a 45 KB body into a dozen write calls.
			tr := &http.Transport{MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc, DisableCompression: true,
				WriteBufferSize: 64 << 10, ReadBufferSize: 64 << 10}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			url := ts.URL + "/v1/select"
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var failed atomic.Value
			var wg sync.WaitGroup
			b.ReportAllocs()
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
				// Client and server together, so 2 s / this is what two
				// dedicated cores could serve with this client.
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/req")
			}
		})
	}
}
