package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/server"
)

func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlags("mcp", `Usage: ctxsel mcp [--index DIR] [--embedder use-lite|none|...]

Runs an MCP server over stdio (JSON-RPC on stdin/stdout, logs on stderr) with
the tools:
  select_context  candidates (scores, vectors or texts) → selected ids, k and why
  search          query → the index's best passages (needs --index)
  ask             question → retrieve, select, answer (needs --index; an LLM from
                  CTXSEL_LLM_* as for ctxsel ask, else no answer)
  strategies      the strategies, their parameters and the caps

No tool takes a path: search and ask read only the index given here. The same
tools are served over streamable HTTP by 'ctxsel serve --mcp' at /mcp.

A malformed line (not JSON, a batch, a bad id, over max_body_bytes) gets a
JSON-RPC error reply, or a note on stderr where the spec defines none, and the
session goes on. At the end of stdin, calls in flight are answered first.

Example client configuration (Claude Desktop, Cursor, ...):
  {"mcpServers": {"ctxsel": {"command": "ctxsel", "args": ["mcp", "--index", "/path/to/index"]}}}`, stderr)
	indexLoc := fs.String("index", "", "index for search and ask (directory or weaviate://host:port/Collection)")
	embedder := fs.String("embedder", "use-lite", "embedder for candidates given as text: none, "+strings.Join(embedders.Names(), ", "))
	logLevel := fs.String("log-level", "warn", "log level (to stderr): debug, info, warn or error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger, err := newServeLogger(stderr, "text", *logLevel)
	if err != nil {
		return err
	}
	policy, err := bandPolicyFromEnv() // read once, at start
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	b, err := serverBackends(ctx, "mcp", *embedder, *indexLoc, askReader{deps: policyDeps(policy)})
	if err != nil {
		return err
	}
	defer b.done()
	src := serverSources(b.indexEmb, b.emb, policy)
	defer src.Close()
	srv, err := server.New(server.DefaultConfig(), server.Options{Logger: logger, Embedder: b.emb, Asker: b.asker, SelectorDeps: src.deps})
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return srv.ServeStdio(ctx, stdin, stdout)
}
