// Package server is ctxsel as an HTTP service: JSON endpoints that select
// context for any retrieval stack (/v1/select, /v1/ask), the strategy catalogue
// (/v1/strategies), health, Prometheus metrics, an OpenAPI 3 document, and a
// web page at / that draws the similarity curve, the cut and the band.
//
// Auth: when Config.APIKeys is non-empty, /v1/* and /metrics require
// "Authorization: Bearer KEY"; /, /assets/*, /healthz, /readyz and
// /openapi.json stay open (they carry no data, and probes and the page's
// shell must load before a key is typed in).
//
// Use it as `ctxsel serve`, or in process:
//
//	srv, err := server.New(server.DefaultConfig(), server.Options{})
//	err = srv.ListenAndServe(ctx) // returns after ctx is done and in-flight requests finish
package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/all" // every registered name, DefaultStrategy included
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/wire"
	"github.com/ctxsel/ctxsel/token"
)

// Options are a Server's collaborators. All are optional.
type Options struct {
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
	// Embedder embeds candidates given as text (and the query). Without
	// one, text-only candidates are refused with 400.
	Embedder embed.Embedder
	// Asker answers /v1/ask. Without one, /v1/ask answers 501.
	Asker Asker
	// MCP serves the MCP tools (see MCPServer) over streamable HTTP at
	// /mcp, with the same auth as /v1/*.
	MCP bool
	// Picker, when set, serves /v1/select requests with "strategy":
	// "picker": an LLM picker configured at start (never from a request).
	Picker ctxsel.TextSelector
	// SelectorDeps, when set, lets requests name the registered text
	// selector kinds it supplies dependencies for, with their parameters:
	// the evidence selector ("evidence:budget=800", and the default of
	// /v1/ask, ctxsel.DefaultStrategy) with its sentence embedder
	// (ctxsel.DepEmbedder). /v1/ask also takes what an Asker that is a
	// DepsSupplier supplies; without either, /v1/ask leaves its default
	// to the Asker and refuses other text selector kinds.
	SelectorDeps ctxsel.Deps
}

// Server is the HTTP service. It is safe for concurrent use.
type Server struct {
	cfg      Config
	log      *slog.Logger
	embedder embed.Embedder
	asker    Asker
	// selectors are the text selectors requests may name: the picker, when
	// Options.Picker set one.
	selectors []ctxsel.TextSelector
	// deps serve the text selectors requests name (Options.SelectorDeps);
	// askDeps those of /v1/ask, the Asker's added (DepsSupplier).
	deps, askDeps ctxsel.Deps
	// The token counter's vocabulary is large: it is loaded on the first
	// candidate that needs counting, not at start.
	counterOnce sync.Once
	counter     token.Counter
	counterErr  error
	metrics     *metrics
	handler     http.Handler
	keys        [][sha256.Size]byte
	// strategies is the /v1/strategies response, built once: strategies
	// register at init and never change afterwards.
	strategies []byte

	// bodies bounds the memory request bodies hold across requests;
	// clients bounds each client's share of it while bodies arrive.
	bodies  byteBudget
	clients clientBudget
	// hosts is which Host values are served (hostcheck.go): set from
	// Config.Addr, then from the listener Serve is given.
	hosts atomic.Pointer[hostPolicy]

	ready atomic.Bool
	// backendDown is the last /readyz verdict of the Asker's check.
	backendDown atomic.Bool
	idPrefix    string
	idCounter   atomic.Uint64

	// stopping is canceled (stop) when shutdown_timeout passes: the
	// requests still running are cut with 503 (shutdown.go).
	stopping context.Context
	stop     context.CancelFunc

	// hook, when set (by tests), runs before every handler: it is how a
	// test forces a panic or holds a request in flight.
	hook func(*http.Request)
}

// route is one entry of the API. The table is the single source of what is
// served: the mux is built from it and the OpenAPI test compares the
// document against it.
type route struct {
	method string // GET or POST; GET also answers HEAD
	path   string // as written in the OpenAPI document
	auth   bool   // requires a bearer key when keys are configured
	h      http.HandlerFunc
}

func (s *Server) routes() []route {
	return []route{
		{http.MethodGet, "/", false, s.handleIndex},
		{http.MethodGet, "/assets/{name}", false, s.handleAsset},
		{http.MethodGet, "/healthz", false, s.handleHealth},
		{http.MethodGet, "/readyz", false, s.handleReady},
		{http.MethodGet, "/openapi.json", false, s.handleOpenAPI},
		{http.MethodGet, "/metrics", true, s.handleMetrics},
		{http.MethodGet, "/v1/strategies", true, s.handleStrategies},
		{http.MethodPost, "/v1/select", true, s.serve(s.selectOp)},
		{http.MethodPost, "/v1/ask", true, s.serve(s.askOp)},
		{http.MethodPost, "/v1/rerank", true, s.handleRerank},
		{http.MethodPost, "/v2/rerank", true, s.handleRerank},
		{http.MethodPost, "/v1/embeddings", true, s.serve(s.embeddingsOp)},
		{http.MethodGet, "/v1/models", true, s.handleModels},
		{http.MethodGet, "/v1/models/{model}", true, s.handleModel},
		{http.MethodPost, "/v1/reward", true, s.serve(s.rewardOp)},
	}
}

// New validates cfg and builds a Server.
func New(cfg Config, opts Options) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: opts.Logger, embedder: opts.Embedder, asker: opts.Asker}
	// One limiter for every embedding call of every request: the served
	// embedder's and the evidence selector's sentence embedder.
	limit := newEmbedLimiter(cfg.EmbedConcurrency, cfg.EmbedQueue)
	if s.embedder != nil {
		s.embedder = boundedEmbedder{inner: s.embedder, limit: limit}
	}
	if _, err := embedModels(opts.Embedder, cfg.EmbeddingAliases); err != nil {
		return nil, err
	}
	s.deps = s.selectorDeps(opts.SelectorDeps, limit)
	s.askDeps = s.deps
	if ds, ok := opts.Asker.(DepsSupplier); ok {
		s.askDeps = s.selectorDeps(ctxsel.ChainDeps(opts.SelectorDeps, ds.SelectorDeps()), limit)
	}
	if opts.Picker != nil {
		s.selectors = []ctxsel.TextSelector{opts.Picker}
	}
	s.stopping, s.stop = context.WithCancel(context.Background())
	s.bodies.limit = cfg.MaxInflightBodyBytes
	s.clients.limit = clientShare(cfg.MaxInflightBodyBytes, cfg.MaxBodyBytes)
	s.hosts.Store(newHostPolicy(cfg.Addr, cfg.AllowedHosts))
	if s.log == nil {
		s.log = slog.Default()
	}
	for _, k := range cfg.APIKeys {
		s.keys = append(s.keys, sha256.Sum256([]byte(k)))
	}
	var seed [6]byte
	_, _ = rand.Read(seed[:])
	s.idPrefix = hex.EncodeToString(seed[:]) + "-"
	var err error
	if s.strategies, err = strategiesJSON(s.deps != nil); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}

	routes := s.routes()
	names := make([]string, 0, len(routes)+1)
	mux := http.NewServeMux()
	for _, rt := range routes {
		names = append(names, rt.path)
		pattern := rt.path
		if pattern == "/" {
			pattern = "/{$}"
		}
		h := rt.h
		if rt.method == http.MethodPost {
			h = requireJSON(h)
		}
		mux.Handle(rt.method+" "+pattern, s.wrap(rt.path, rt.auth, h))
		// Without this, the mux answers a wrong method with a plain-text
		// 405; every error of this API is JSON.
		mux.Handle(pattern, s.wrap(rt.path, false, methodNotAllowed(rt.method)))
	}
	if opts.MCP {
		// Outside the route table: MCP is JSON-RPC, not part of the
		// OpenAPI document. Any method; the SDK answers wrong ones.
		names = append(names, "/mcp")
		mux.Handle("/mcp", s.wrap("/mcp", true, requireJSON(s.mcpHandler(s.MCPServer()))))
	}
	names = append(names, "other")
	mux.Handle("/", s.wrap("other", false, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "", "no such endpoint: "+r.URL.Path)
	}))
	s.metrics = newMetrics(names)
	s.handler = mux
	s.ready.Store(true)
	return s, nil
}

// Handler returns the service as an http.Handler (for httptest or another
// server).
func (s *Server) Handler() http.Handler { return s.handler }

// ListenAndServe listens on Config.Addr and serves until ctx is done, then
// shuts down gracefully (see Serve).
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx is done. It then stops accepting, reports not
// ready, waits up to Config.ShutdownTimeout for in-flight requests to finish
// and returns nil; a failure of the listener is returned as an error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout.D(),
		ReadTimeout:       s.cfg.ReadTimeout.D(),
		WriteTimeout:      s.cfg.WriteTimeout.D(),
		IdleTimeout:       s.cfg.IdleTimeout.D(),
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	addr := ln.Addr().String()
	// The address really listened on decides the Host check.
	s.hosts.Store(newHostPolicy(addr, s.cfg.AllowedHosts))
	s.log.Info("ctxsel serve listening", "addr", addr, "url", "http://"+addr+"/",
		"auth", len(s.keys) > 0, "embedder", s.embedderName(), "ask", s.asker != nil)
	s.ready.Store(true)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(jsonErrorsListener{ln}) }()
	select {
	case err := <-errc:
		s.ready.Store(false)
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.ready.Store(false)
	s.log.Info("shutting down: finishing in-flight requests", "timeout", s.cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout.D())
	defer cancel()
	err := hs.Shutdown(sctx)
	<-errc // http.ErrServerClosed, at once
	if err != nil {
		s.cutInFlight(hs)
		_ = hs.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	s.log.Info("stopped")
	return nil
}

func (s *Server) tokenCounter() (token.Counter, error) {
	s.counterOnce.Do(func() {
		c, err := token.New(s.cfg.TokenEncoding)
		if err != nil {
			s.counterErr = fmt.Errorf("token counter: %w", err)
			return
		}
		s.counter = c
	})
	return s.counter, s.counterErr
}

// selectorDeps serves the text selectors requests name from d: never an
// LLM, the sentence embedder bounded by the server's limiter, and the
// server's token counter where d has none. Nil for nil.
func (s *Server) selectorDeps(d ctxsel.Deps, limit *embedLimiter) ctxsel.Deps {
	if d == nil {
		return nil
	}
	return func(name string) (any, error) {
		switch name {
		case ctxsel.DepLLM:
			// A request never gets an LLM of its own: the picker is
			// the configured one (Selectors), or none.
			return nil, fmt.Errorf("%w: the LLM picker is not configured on this server", ctxsel.ErrNoDep)
		case ctxsel.DepEmbedder:
			// A selector's embedding calls are held to the request's
			// deadline and share the limiter, as the server's own.
			v, err := d(name)
			if e, ok := v.(embed.Embedder); ok && err == nil {
				return boundedEmbedder{inner: e, limit: limit}, nil
			}
			return v, err
		case ctxsel.DepCounter:
			// A pruned text's tokens are counted as the candidates'
			// are, unless d supplies a counter.
			return ctxsel.ChainDeps(d, func(string) (any, error) { return s.tokenCounter() })(name)
		}
		return d(name)
	}
}

// embedderName names the embedder for the start line without opening a
// lazily opened one.
func (s *Server) embedderName() string {
	if s.embedder == nil {
		return "none"
	}
	return embed.ModelName(s.embedder)
}

type ctxKey struct{}

// RequestID returns the id of the request a context belongs to (the
// X-Request-Id header, echoed or generated), or "".
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// requestID accepts a caller's X-Request-Id when it is short and plain, so
// ids can be joined across services without letting a client inject log
// lines; otherwise it makes one.
func (s *Server) requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 128 {
		ok := true
		for i := 0; i < len(id) && ok; i++ {
			c := id[i]
			ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.:/+=", c) >= 0
		}
		if ok {
			return id
		}
	}
	return s.idPrefix + strconv.FormatUint(s.idCounter.Add(1), 10)
}

// statusWriter records what a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code  int
	bytes int
	// bodyHeld is what readBody reserved from the server's body budget
	// for this request; wrap gives it back when the handler returns, so
	// every handler that reads a body is covered without a release call.
	bodyHeld int64
	// shape is the route's error shape (wireerrors.go).
	shape errShape
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrap adds what every route gets: a request id, panic recovery, auth,
// metrics and an access log line.
func (s *Server) wrap(name string, auth bool, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.metrics.inFlight.Add(1)
		id := s.requestID(r)
		rw.Header().Set("X-Request-Id", id)
		w := &statusWriter{ResponseWriter: rw, shape: shapeFor(name)}
		// The request's one deadline (the bounds policy's), from here on.
		ctx, cancel := s.limits().bound(context.WithValue(r.Context(), ctxKey{}, id))
		defer cancel()
		ctx, release := s.cutAtShutdown(ctx)
		defer release()
		r = r.WithContext(ctx)
		defer func() {
			s.bodies.give(w.bodyHeld) // the body is no longer used
			p := recover()
			if p == nil {
				s.answerCut(w, r, name)
			}
			started := w.code != 0 // the response was under way before the panic
			if p != nil && p != http.ErrAbortHandler {
				s.log.Error("panic in handler", "request_id", id, "route", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if !started {
					writeError(w, http.StatusInternalServerError, "", "internal error (request "+id+")")
				}
			}
			code := w.code
			if code == 0 {
				code = http.StatusOK
			}
			if p != nil && code < 500 {
				code = http.StatusInternalServerError // a response cut short
			}
			d := time.Since(start)
			s.metrics.inFlight.Add(-1)
			s.metrics.request(name, code, d)
			level := slog.LevelInfo
			if code >= 500 && code != http.StatusNotImplemented {
				level = slog.LevelError
			}
			// No headers are logged: Authorization must never reach a log.
			s.log.LogAttrs(r.Context(), level, "request",
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.String("route", name), slog.Int("status", code), slog.Int("bytes", w.bytes),
				slog.Duration("duration", d), slog.String("remote", r.RemoteAddr))
			if p != nil && started && p != http.ErrAbortHandler {
				// The response is already under way and now incomplete:
				// abort the connection so the client cannot take it as whole.
				panic(http.ErrAbortHandler)
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
		}()
		if !s.hosts.Load().allows(r.Host) {
			refuse(w, http.StatusForbidden, "Host", hostRefusedMsg)
			return
		}
		if auth && len(s.keys) > 0 && !s.authorized(r) {
			unauthorized(w, r, w.shape)
			return
		}
		if s.hook != nil {
			s.hook(r)
		}
		h(w, r)
	})
}

// authorized checks the bearer key. Keys are compared as SHA-256 digests
// with subtle.ConstantTimeCompare, against every configured key without
// stopping early, so timing reveals neither a key's length nor which
// prefix matched.
func (s *Server) authorized(r *http.Request) bool {
	const prefix = "bearer "
	h := r.Header.Get("Authorization")
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(h[len(prefix):])))
	match := 0
	for i := range s.keys {
		match |= subtle.ConstantTimeCompare(sum[:], s.keys[i][:])
	}
	return match == 1
}

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if allow == http.MethodGet {
			allow = "GET, HEAD"
		}
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, "", fmt.Sprintf("method %s not allowed: use %s", r.Method, allow))
	}
}

// writeError writes {"error": {"message": ..., "field": ...}}, or the
// route's own error shape (wireerrors.go).
func writeError(w http.ResponseWriter, status int, field, msg string) {
	writeJSON(w, status, appendError(make([]byte, 0, 128+3*len(msg)), routeShape(w), status, field, msg))
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeFailure writes failure's answer to err, a busy embedder's (503)
// with Retry-After.
func (s *Server) writeFailure(w http.ResponseWriter, r *http.Request, err error) {
	var busy *busyError
	if errors.As(err, &busy) {
		w.Header().Set("Retry-After", busy.retryAfterSeconds())
	}
	status, field, msg := s.failure(r.Context(), err)
	writeError(w, status, field, msg)
}

// failure turns an error into the right answer: a field error (or any
// ctxsel.ErrInvalidInput) is the caller's to fix, a backend's failure is
// 502 and a timeout 504, and anything else is 500; backend and internal
// details stay in the log. ctx is the request's.
func (s *Server) failure(ctx context.Context, err error) (status int, field, msg string) {
	var fe *wire.FieldError
	var be *backendError
	var ue *upstreamError
	var busy *busyError
	id := RequestID(ctx)
	switch {
	case errors.Is(err, ErrUnavailable):
		s.log.Error("request failed: the index is unavailable", "request_id", id, "error", logDetail(err))
		return http.StatusServiceUnavailable, "", "the index is unavailable (request " + id + "; details in the server log)"
	case errors.As(err, &busy):
		return http.StatusServiceUnavailable, "", busy.Error()
	case errors.As(err, &be):
		s.log.Warn("embedding failed", "request_id", id, "error", err.Error())
		return http.StatusBadGateway, "", "embedder failed (request " + id + ")"
	case errors.As(err, &ue):
		s.log.Warn(ue.what+" failed", "request_id", id, "error", logDetail(ue.err))
		return http.StatusBadGateway, "", ue.what + " failed: a service behind this server failed (request " + id + "; details in the server log)"
	case errors.As(err, &fe):
		status := fe.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		return status, fe.Field(), fe.Msg
	case errors.Is(err, ctxsel.ErrInvalidInput):
		return http.StatusBadRequest, "", err.Error()
	case cutByShutdown(ctx):
		return http.StatusServiceUnavailable, "", shutdownCutMsg
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		return http.StatusGatewayTimeout, "", "timed out after " + s.cfg.RequestTimeout.String() + " (request_timeout)"
	case errors.Is(err, context.DeadlineExceeded):
		// A deadline of a service behind this one (an LLM's own timeout)
		// expired before the request's: say so, not request_timeout.
		s.log.Warn("upstream call timed out", "request_id", id, "error", err.Error())
		return http.StatusGatewayTimeout, "", "a service behind this server timed out before the request's deadline (request " + id + ")"
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// The client went away mid-request: nobody reads this, and it is
		// not a server fault. 499 is nginx's "client closed request".
		return 499, "", "request canceled by the client"
	default:
		s.log.Error("request failed", "request_id", id, "error", logDetail(err))
		return http.StatusInternalServerError, "", "internal error (request " + id + ")"
	}
}

// upstreamError is the failure of a service behind this one (the index, an
// embedder, an LLM) that the client cannot fix. Its text may carry what the
// service said (an error body echoing a key or a path), its address, or a
// damaged file's path and checksum: writeFailure logs it with the request
// id and answers 502 naming only what failed.
type upstreamError struct {
	what string // "ask", "search", "picker"
	err  error
}

// ErrUnavailable marks an Asker's error as the index's unavailability
// (deleted, unreadable or damaged under the running server, failing its
// ReadyChecker check as well): the request is answered 503, not as the
// client's fault, and the detail is logged.
var ErrUnavailable = errors.New("the index is unavailable")

// logDetail is err's text for the log: an error rewritten for clients (an
// index location replaced by "the index") gives its original text there.
func logDetail(err error) string {
	var d interface{ LogDetail() string }
	if errors.As(err, &d) {
		return d.LogDetail()
	}
	return err.Error()
}

func (e *upstreamError) Error() string { return e.what + " failed: " + e.err.Error() }
func (e *upstreamError) Unwrap() error { return e.err }

// upstream classifies an error of a call behind the request: the caller's
// bad input and the deadlines pass as they are, anything else is an
// upstreamError.
func upstream(what string, err error) error {
	if err == nil || errors.Is(err, ctxsel.ErrInvalidInput) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	return &upstreamError{what: what, err: err}
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok"}`+"\n"))
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if !s.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, []byte(`{"status":"shutting down"}`+"\n"))
		return
	}
	if s.bodies.free() < min(readyBodyBytes, s.bodies.limit) {
		// Every POST would be refused now: say so.
		writeJSON(w, http.StatusServiceUnavailable, []byte(`{"status":"busy","reason":"request bodies in flight hold the memory budget for them (max_inflight_body_bytes)"}`+"\n"))
		return
	}
	if rc, ok := s.asker.(ReadyChecker); ok {
		err := rc.Ready(r.Context())
		// Logged when the state changes, not on every probe.
		if was := s.backendDown.Swap(err != nil); err != nil && !was {
			s.log.Error("not ready: the index failed its check", "request_id", RequestID(r.Context()), "error", err.Error())
		} else if err == nil && was {
			s.log.Info("ready again: the index passes its check")
		}
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, []byte(`{"status":"not ready","reason":"the index failed its check: see the server log"}`+"\n"))
			return
		}
	}
	writeJSON(w, http.StatusOK, []byte(`{"status":"ready"}`+"\n"))
}

// ReadyChecker is implemented by Askers that can tell whether they are fit
// to serve, cheaply enough for every readiness probe (an index's cheap
// check: its manifest and every file's size, header and checksum trailer).
// /readyz answers 503 while Ready returns an error; the error is logged,
// never shown.
type ReadyChecker interface {
	Ready(ctx context.Context) error
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	s.metrics.writeTo(w)
	if b, ok := s.embedder.(boundedEmbedder); ok {
		b.limit.writeMetrics(w)
	}
}

func (s *Server) handleStrategies(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.strategies)
}

// strategiesJSON is the /v1/strategies document; withSelectors lists the
// registered text selector kinds, which a server with SelectorDeps serves.
func strategiesJSON(withSelectors bool) ([]byte, error) {
	type strategy struct {
		Name   string            `json:"name"`
		Doc    string            `json:"doc"`
		Params []ctxsel.ParamDef `json:"params"`
	}
	// default is the shipped default, ctxsel.DefaultStrategy: /v1/ask's,
	// ctxsel ask's and the spec name "default"'s; select_default,
	// ctxsel.DefaultSelectStrategy, is what /v1/select, /v1/rerank and the
	// web page cut with when a request names none.
	// selectors are named by their spec ("evidence:budget=500", or after
	// a strategy: "topk:k=30+evidence:budget=500"), parameters included:
	// they take no "params" object. routes, the answering routes, only
	// /v1/ask and the MCP ask tool run: they need the reader's reply.
	doc := struct {
		Default       string               `json:"default"`
		SelectDefault string               `json:"select_default"`
		Strategies    []strategy           `json:"strategies"`
		Selectors     []ctxsel.SelectorDef `json:"selectors,omitempty"`
		Routes        []ctxsel.RouteDef    `json:"routes"`
		Caps          []ctxsel.ParamDef    `json:"caps"`
		Orders        []string             `json:"orders"`
	}{Default: ctxsel.DefaultStrategy, SelectDefault: ctxsel.DefaultSelectStrategy, Routes: ctxsel.RouteDefs(), Caps: ctxsel.CapParams(), Orders: []string{"rank", "document", "edges"}}
	if withSelectors {
		doc.Selectors = ctxsel.SelectorDefs()
	}
	if doc.Routes == nil {
		doc.Routes = []ctxsel.RouteDef{}
	}
	for _, d := range ctxsel.Defs() {
		params := d.Params
		if params == nil {
			params = []ctxsel.ParamDef{}
		}
		doc.Strategies = append(doc.Strategies, strategy{Name: d.Name, Doc: d.Doc, Params: params})
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("strategies: %w", err)
	}
	return append(b, '\n'), nil
}
