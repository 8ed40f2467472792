package server

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The metrics are a handful of counters and histograms written in the
// Prometheus text format (version 0.0.4). They are kept here rather than in
// client_golang because four metric families do not justify its protobuf
// dependency tree, and every observation is a few atomic adds.

var (
	latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	kBuckets       = []float64{0, 1, 2, 3, 5, 8, 10, 15, 20, 30, 50, 100, 200, 500, 1000}
	tokenBuckets   = []float64{0, 100, 250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000}
)

// histogram is a Prometheus histogram with fixed bucket bounds.
type histogram struct {
	bounds  []float64
	counts  []atomic.Uint64 // one per bound, then +Inf; not cumulative
	sumBits atomic.Uint64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	h.counts[sort.SearchFloat64s(h.bounds, v)].Add(1)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

func (h *histogram) write(w io.Writer, name, labels string) {
	sep := ""
	if labels != "" {
		sep = ","
	}
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		fmt.Fprintf(w, "%s_bucket{%s%sle=%q} %d\n", name, labels, sep, strconv.FormatFloat(b, 'g', -1, 64), cum)
	}
	cum += h.counts[len(h.bounds)].Load()
	fmt.Fprintf(w, "%s_bucket{%s%sle=\"+Inf\"} %d\n", name, labels, sep, cum)
	brace := func(s string) string {
		if s == "" {
			return ""
		}
		return "{" + s + "}"
	}
	fmt.Fprintf(w, "%s_sum%s %s\n", name, brace(labels), strconv.FormatFloat(math.Float64frombits(h.sumBits.Load()), 'g', -1, 64))
	fmt.Fprintf(w, "%s_count%s %d\n", name, brace(labels), cum)
}

type routeCode struct {
	route string
	code  int
}

type metrics struct {
	start    time.Time
	inFlight atomic.Int64
	latency  map[string]*histogram // by route; fixed after newMetrics
	k        *histogram
	tokens   *histogram

	mu       sync.RWMutex
	requests map[routeCode]*atomic.Uint64
}

func newMetrics(routes []string) *metrics {
	m := &metrics{
		start:    time.Now(),
		latency:  make(map[string]*histogram, len(routes)),
		k:        newHistogram(kBuckets),
		tokens:   newHistogram(tokenBuckets),
		requests: map[routeCode]*atomic.Uint64{},
	}
	for _, r := range routes {
		m.latency[r] = newHistogram(latencyBuckets)
	}
	return m
}

// request records one finished request. route must be one of the routes
// given to newMetrics (or "other"), which bounds the label set.
func (m *metrics) request(route string, code int, d time.Duration) {
	key := routeCode{route, code}
	m.mu.RLock()
	c := m.requests[key]
	m.mu.RUnlock()
	if c == nil {
		m.mu.Lock()
		if c = m.requests[key]; c == nil {
			c = new(atomic.Uint64)
			m.requests[key] = c
		}
		m.mu.Unlock()
	}
	c.Add(1)
	if h := m.latency[route]; h != nil {
		h.observe(d.Seconds())
	}
}

func (m *metrics) selection(k, tokens int) {
	m.k.observe(float64(k))
	m.tokens.observe(float64(tokens))
}

// writeTo writes every metric in the Prometheus text format.
func (m *metrics) writeTo(w io.Writer) {
	var b bytes.Buffer
	b.WriteString("# HELP ctxsel_http_requests_total HTTP requests by route and status code.\n# TYPE ctxsel_http_requests_total counter\n")
	m.mu.RLock()
	keys := make([]routeCode, 0, len(m.requests))
	for k := range m.requests {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b routeCode) int {
		return cmp.Or(cmp.Compare(a.route, b.route), cmp.Compare(a.code, b.code))
	})
	for _, k := range keys {
		fmt.Fprintf(&b, "ctxsel_http_requests_total{route=%q,code=\"%d\"} %d\n", k.route, k.code, m.requests[k].Load())
	}
	m.mu.RUnlock()

	b.WriteString("# HELP ctxsel_http_request_duration_seconds Time from request start to the last byte of the response, by route.\n# TYPE ctxsel_http_request_duration_seconds histogram\n")
	routes := make([]string, 0, len(m.latency))
	for r := range m.latency {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	for _, r := range routes {
		m.latency[r].write(&b, "ctxsel_http_request_duration_seconds", fmt.Sprintf("route=%q", r))
	}

	b.WriteString("# HELP ctxsel_selected_k Passages selected per successful select or ask request.\n# TYPE ctxsel_selected_k histogram\n")
	m.k.write(&b, "ctxsel_selected_k", "")
	b.WriteString("# HELP ctxsel_selected_tokens Tokens selected per successful select or ask request.\n# TYPE ctxsel_selected_tokens histogram\n")
	m.tokens.write(&b, "ctxsel_selected_tokens", "")

	fmt.Fprintf(&b, "# HELP ctxsel_http_requests_in_flight Requests being served now.\n# TYPE ctxsel_http_requests_in_flight gauge\nctxsel_http_requests_in_flight %d\n", m.inFlight.Load())
	fmt.Fprintf(&b, "# HELP ctxsel_start_time_seconds Unix time the server started.\n# TYPE ctxsel_start_time_seconds gauge\nctxsel_start_time_seconds %d\n", m.start.Unix())
	fmt.Fprintf(&b, "# HELP ctxsel_goroutines Goroutines that currently exist.\n# TYPE ctxsel_goroutines gauge\nctxsel_goroutines %d\n", runtime.NumGoroutine())
	_, _ = w.Write(b.Bytes())
}
