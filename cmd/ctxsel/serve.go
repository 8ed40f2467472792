package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/picker"
	"github.com/ctxsel/ctxsel/server"
)

// serveFile is the config file of `ctxsel serve`: the server's settings plus
// the command's own.
type serveFile struct {
	server.Config
	Embedder  string `json:"embedder"`
	LogFormat string `json:"log_format"`
	LogLevel  string `json:"log_level"`
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	srv, done, err := newServe(ctx, args, stderr)
	if err != nil {
		return err
	}
	defer done()
	start := time.Now()
	if err := srv.ListenAndServe(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ctxsel serve: stopped after %s\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// newServe parses serve's flags and builds the server with its back ends;
// done releases them (index, embedder, LLM call cache).
func newServe(ctx context.Context, args []string, stderr io.Writer) (srv *server.Server, done func(), err error) {
	def := server.DefaultConfig()
	fs := newFlags("serve", `Usage: ctxsel serve [--addr HOST:PORT] [--config FILE] [flags]

Runs the HTTP selection service and its web page (open http://ADDR/):
  POST /v1/select      candidates (scores, vectors or texts) → selected ids and why
  POST /v1/ask         question → retrieve, select, answer (needs --index; else 501)
  POST /v1/rerank      Cohere/Jina rerank format → only the selected documents (also /v2/rerank)
  POST /v1/embeddings  OpenAI embeddings format (Jina's fields too), from --embedder
  GET  /v1/models      OpenAI models list: the embedding model, its aliases, ctxsel-STRATEGY rerank models
  /mcp                 MCP over streamable HTTP (with --mcp)
  GET  /v1/strategies  strategies and parameters
  GET  /healthz /readyz /metrics /openapi.json

Auth: set CTXSEL_API_KEYS=key1,key2 to require "Authorization: Bearer KEY" on
/v1/* and /metrics. A non-loopback --addr without keys is refused unless
--insecure-public is given. On a loopback --addr every route answers only
requests whose Host is localhost, 127.0.0.1 or [::1] (so a web page that
rebinds its DNS name to 127.0.0.1 cannot read answers): name others with
--allowed-hosts. Every POST must send Content-Type: application/json.

The config file is JSON; flags given on the command line win over it:
  {"addr": "127.0.0.1:8080", "allowed_hosts": ["ctxsel.lan"], "max_body_bytes": 16777216, "max_inflight_body_bytes": 67108864,
   "max_candidates": 100000,
   "max_text_bytes": 65536, "max_vector_dim": 8192, "max_curve_points": 2000,
   "read_header_timeout": "5s", "read_timeout": "30s", "write_timeout": "90s",
   "idle_timeout": "120s", "request_timeout": "60s", "shutdown_timeout": "30s",
   "token_encoding": "cl100k_base", "insecure_public": false,
   "embed_concurrency": 2, "embed_queue": 4096,
   "embedding_aliases": {"text-embedding-ada-002": "use-lite"},
   "embedder": "use-lite", "log_format": "text", "log_level": "info"}

Texts (text candidates, rerank documents, /v1/embeddings) are embedded with
--embedder, by default use-lite, the offline model, loaded on first use: a
server only ever sent scores never loads it. --embedder none refuses texts
(/v1/rerank then scores with BM25, and every rerank response says which
scoring it used). Embedding calls share one limit across requests
(--embed-concurrency calls, default one per core, and --embed-queue texts
waiting); past it a request gets 503 with Retry-After.

Clients that hard-code a model name (LangChain's and LlamaIndex's OpenAI
embeddings send text-embedding-ada-002) can be pointed at the served model
with --embedding-alias NAME=MODEL (repeatable; "embedding_aliases" in the
file, merged, the flag winning); without one such a name is refused with a
400 naming the served model.

/v1/ask answers with the --reader LLM; without --reader, with the one the
CTXSEL_LLM_* environment configures (see ctxsel ask -h), else it only selects.
The reader's #window=N is Self-Route's long-context window ("strategy":
"selfroute:k=5"; default 32000). The reader and the --picker share one
concurrency limit (--llm-concurrency) and the LLM call cache.

`+llmHelp+`

SIGTERM or Ctrl-C stops accepting connections and finishes in-flight requests;
those still running after --shutdown-timeout are answered 503.

Examples:
  ctxsel serve --addr 127.0.0.1:8080
  ctxsel serve --embedding-alias text-embedding-ada-002=use-lite
  ctxsel serve --index ./idx --reader ollama:llama3.2@127.0.0.1:11434#window=128000`, stderr)
	addr := fs.String("addr", def.Addr, "host:port to listen on")
	configPath := fs.String("config", "", "JSON config file (see above)")
	insecure := fs.Bool("insecure-public", false, "allow a non-loopback address without CTXSEL_API_KEYS")
	var allowedHosts []string
	fs.Func("allowed-hosts", "HOST[:PORT],...: Host header values served besides localhost, 127.0.0.1 and [::1] (a name a reverse proxy or container forwards; * for any). On a loopback --addr only loopback Host values are served without it (a guard against DNS rebinding); on another address it turns the Host check on", func(v string) error {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				allowedHosts = append(allowedHosts, h)
			}
		}
		return nil
	})
	embedder := fs.String("embedder", "use-lite", "embedder for texts (text candidates, rerank documents, /v1/embeddings): "+strings.Join(embedders.Names(), ", ")+
		", or none to refuse texts (use-lite runs offline, loaded on first use; openai and ollama read CTXSEL_EMBED_MODEL, CTXSEL_EMBED_BASE_URL, … as ctxsel eval does)")
	aliases := map[string]string{}
	fs.Func("embedding-alias", "NAME=MODEL: /v1/embeddings serves MODEL (the embedder's name, e.g. use-lite) when a client asks for NAME (e.g. text-embedding-ada-002); repeatable", func(v string) error {
		name, model, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(name) == "" || strings.TrimSpace(model) == "" {
			return fmt.Errorf("%q: want NAME=MODEL, e.g. text-embedding-ada-002=use-lite", v)
		}
		aliases[strings.TrimSpace(name)] = strings.TrimSpace(model)
		return nil
	})
	embedConc := fs.Int("embed-concurrency", def.EmbedConcurrency, "embedding calls that run at once, across requests (default: the cores)")
	embedQueue := fs.Int("embed-queue", def.EmbedQueue, "texts that may wait for an embedding slot; past it: 503 with Retry-After")
	maxBody := fs.Int64("max-body-bytes", def.MaxBodyBytes, "largest request body")
	maxInflight := fs.Int64("max-inflight-body-bytes", def.MaxInflightBodyBytes, "most bytes all request bodies in flight may hold together (past it: 503); at least --max-body-bytes")
	maxCands := fs.Int("max-candidates", def.MaxCandidates, "most candidates per request")
	maxText := fs.Int("max-text-bytes", def.MaxTextBytes, "longest candidate text or query, in bytes")
	maxDim := fs.Int("max-vector-dim", def.MaxVectorDim, "largest vector dimension")
	maxPoints := fs.Int("max-curve-points", def.MaxCurvePoints, "most curve points in an explanation")
	encoding := fs.String("token-encoding", def.TokenEncoding, "token encoding for candidates given as text")
	readHeader := fs.Duration("read-header-timeout", def.ReadHeaderTimeout.D(), "time to read request headers")
	readTimeout := fs.Duration("read-timeout", def.ReadTimeout.D(), "time to read a whole request")
	writeTimeout := fs.Duration("write-timeout", def.WriteTimeout.D(), "time to write a response")
	idleTimeout := fs.Duration("idle-timeout", def.IdleTimeout.D(), "how long an idle keep-alive connection stays open")
	requestTimeout := fs.Duration("request-timeout", def.RequestTimeout.D(), "bound on one request's embedding or ask")
	shutdownTimeout := fs.Duration("shutdown-timeout", def.ShutdownTimeout.D(), "how long shutdown waits for in-flight requests")
	indexLoc := fs.String("index", "", "answer /v1/ask from this index (directory or weaviate://host:port/Collection); none: /v1/ask answers 501")
	reader := fs.String("reader", "", "LLM that answers /v1/ask: PROVIDER:MODEL[@BASE_URL][#window=N] (default: the CTXSEL_LLM_* environment); needs --index")
	pickerLLM := fs.String("picker", "", "picker LLM endpoint (PROVIDER:MODEL[@BASE_URL]): enables \"strategy\": \"picker\" in /v1/select; requests cannot name another")
	pickerSpec := fs.String("picker-strategy", "picker", "the picker's settings for every request: picker[:budget=4000,fallback=adaptivek,order=rank]")
	llmf := addLLMFlags(fs)
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	mcpHTTP := fs.Bool("mcp", false, "also serve the MCP tools (see ctxsel mcp) over streamable HTTP at /mcp")
	if err := parseFlags(fs, args); err != nil {
		return nil, nil, err
	}

	file := serveFile{Config: def, Embedder: "use-lite", LogFormat: "text", LogLevel: "info"}
	if *configPath != "" {
		if err := server.LoadConfigFile(*configPath, &file); err != nil {
			return nil, nil, usageError{err}
		}
	}
	cfg := file.Config
	// Flags given explicitly win over the file.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "addr":
			cfg.Addr = *addr
		case "insecure-public":
			cfg.InsecurePublic = *insecure
		case "allowed-hosts":
			cfg.AllowedHosts = allowedHosts
		case "embedder":
			file.Embedder = *embedder
		case "embedding-alias":
			if cfg.EmbeddingAliases == nil {
				cfg.EmbeddingAliases = map[string]string{}
			}
			for name, model := range aliases {
				cfg.EmbeddingAliases[name] = model
			}
		case "embed-concurrency":
			cfg.EmbedConcurrency = *embedConc
		case "embed-queue":
			cfg.EmbedQueue = *embedQueue
		case "max-body-bytes":
			cfg.MaxBodyBytes = *maxBody
		case "max-inflight-body-bytes":
			cfg.MaxInflightBodyBytes = *maxInflight
		case "max-candidates":
			cfg.MaxCandidates = *maxCands
		case "max-text-bytes":
			cfg.MaxTextBytes = *maxText
		case "max-vector-dim":
			cfg.MaxVectorDim = *maxDim
		case "max-curve-points":
			cfg.MaxCurvePoints = *maxPoints
		case "token-encoding":
			cfg.TokenEncoding = *encoding
		case "read-header-timeout":
			cfg.ReadHeaderTimeout = server.Duration(*readHeader)
		case "read-timeout":
			cfg.ReadTimeout = server.Duration(*readTimeout)
		case "write-timeout":
			cfg.WriteTimeout = server.Duration(*writeTimeout)
		case "idle-timeout":
			cfg.IdleTimeout = server.Duration(*idleTimeout)
		case "request-timeout":
			cfg.RequestTimeout = server.Duration(*requestTimeout)
		case "shutdown-timeout":
			cfg.ShutdownTimeout = server.Duration(*shutdownTimeout)
		case "log-format":
			file.LogFormat = *logFormat
		case "log-level":
			file.LogLevel = *logLevel
		}
	})
	cfg.APIKeys = server.ParseAPIKeys(os.Getenv("CTXSEL_API_KEYS"))
	if err := cfg.Validate(); err != nil {
		return nil, nil, usageError{err}
	}
	logger, err := newServeLogger(stderr, file.LogFormat, file.LogLevel)
	if err != nil {
		return nil, nil, err
	}
	if *reader != "" && *indexLoc == "" {
		return nil, nil, usageError{fmt.Errorf("serve: --reader answers /v1/ask, which needs --index")}
	}
	// The band's policy is read once, at start: a bad file is refused
	// here, never named to a client.
	policy, err := bandPolicyFromEnv()
	if err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	// One opener and call cache for every role of the server: the reader
	// and the picker.
	var open func(string) (llm.Client, error)
	rd := askReader{deps: policyDeps(policy)}
	closeCache := func() error { return nil }
	if *reader != "" || *pickerLLM != "" {
		o, cache, err := llmf.open(stderr)
		if err != nil {
			return nil, nil, err
		}
		open, closeCache = o, cache.Close
	}
	if *reader != "" {
		sp, err := llm.ParseSpec(*reader)
		if err == nil {
			rd.client, err = open(*reader)
		}
		if err != nil {
			closeCache()
			return nil, nil, usageError{fmt.Errorf("serve --reader: %w", err)}
		}
		rd.window = sp.Window
	}
	b, err := serverBackends(ctx, "serve", file.Embedder, *indexLoc, rd)
	if err != nil {
		closeCache()
		return nil, nil, err
	}
	release := func() { b.done(); closeCache() }
	defer func() {
		if err != nil {
			release()
		}
	}()
	var pick ctxsel.TextSelector
	if *pickerLLM != "" {
		pcfg, err := picker.ParseSpec(*pickerSpec)
		if err != nil {
			return nil, nil, err
		}
		if pick, err = newPicker(open, *pickerLLM, pcfg, policyDeps(policy)); err != nil {
			return nil, nil, err
		}
	}
	src := serverSources(b.indexEmb, b.emb, policy)
	release = func() { b.done(); closeCache(); src.Close() }
	srv, err = server.New(cfg, server.Options{Logger: logger, Embedder: b.emb, Asker: b.asker, MCP: *mcpHTTP, Picker: pick, SelectorDeps: src.deps})
	if err != nil {
		return nil, nil, fmt.Errorf("serve: %w", err)
	}
	return srv, release, nil
}

func newServeLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Errorf("serve: log level %q: want debug, info, warn or error", level)}
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError{fmt.Errorf("serve: log format %q: want text or json", format)}
}
