package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/wire"
)

// The MCP server exposes the service's operations as tools an agent can
// call: select_context, search, ask and strategies. Each tool runs the op
// of the same operation (ops.go) on its arguments, as /v1/select's and
// /v1/ask's handlers do, so limits, validation, errors and metrics are
// theirs exactly; a 4xx becomes an MCP tool error (IsError) carrying the
// field and message.
// No tool takes a path: search and ask read only the index the server was
// started with.

// Searcher is implemented by Askers that can retrieve without selecting or
// answering (the search tool). An Asker without it is asked with the "full"
// strategy and its answer, if any, is dropped.
type Searcher interface {
	Search(ctx context.Context, query string, topN int) ([]Passage, error)
}

// defaultSearchN is how many passages search returns when top_n is unset.
const defaultSearchN = 10

// MCPCandidate is one candidate of select_context.
type MCPCandidate struct {
	ID     string    `json:"id" jsonschema:"unique id of the candidate"`
	Score  *float64  `json:"score,omitempty" jsonschema:"retrieval score (higher is better); give a score, a vector or a text per candidate, the same kind for all"`
	Text   *string   `json:"text,omitempty" jsonschema:"passage text: embedded and scored against query when no score is given; also counted for max_tokens"`
	Tokens *int      `json:"tokens,omitempty" jsonschema:"token count, for the max_tokens cap and the budget strategy"`
	Vector []float64 `json:"vector,omitempty" jsonschema:"embedding, scored by cosine similarity to query_vector"`
	Above  *string   `json:"above,omitempty" jsonschema:"the lines of the passage's document above it (its heading path, the header row of a table it starts inside), sent with what a text selector (evidence) keeps of it"`
}

// MCPSelectInput is select_context's input.
type MCPSelectInput struct {
	Query       string             `json:"query,omitempty" jsonschema:"the question (needed when candidates are given as text)"`
	QueryVector []float64          `json:"query_vector,omitempty" jsonschema:"query embedding, for candidates given as vectors"`
	Candidates  []MCPCandidate     `json:"candidates" jsonschema:"the retrieved candidates to select from"`
	Strategy    string             `json:"strategy,omitempty" jsonschema:"strategy spec, e.g. adaptivek, topk:k=5, budget:tokens=2000 (see the strategies tool)"`
	Params      map[string]float64 `json:"params,omitempty" jsonschema:"strategy parameters and caps (min_k, max_k, max_tokens)"`
	Order       string             `json:"order,omitempty" jsonschema:"order of the selected ids: rank, document or edges"`
}

// MCPSearchInput is search's input.
type MCPSearchInput struct {
	Query string `json:"query" jsonschema:"what to search the index for"`
	TopN  int    `json:"top_n,omitempty" jsonschema:"how many passages to return (default 10)"`
}

// MCPAskInput is ask's input.
type MCPAskInput struct {
	Query    string             `json:"query" jsonschema:"the question"`
	Strategy string             `json:"strategy,omitempty" jsonschema:"strategy spec (see the strategies tool)"`
	Params   map[string]float64 `json:"params,omitempty" jsonschema:"strategy parameters and caps (min_k, max_k, max_tokens)"`
	Order    string             `json:"order,omitempty" jsonschema:"order of the selected passages: rank, document or edges"`
	TopN     int                `json:"top_n,omitempty" jsonschema:"candidates to retrieve before selecting"`
}

// The tools' published input schemas, inferred from their input types, the
// strategy's description naming the default from the constant (a struct
// tag cannot); TestMCPTools checks they are the full ones. The tools take
// their arguments raw, so the schemas are for clients only.
var (
	selectSchema = schemaFor[MCPSelectInput]("strategy spec, e.g. adaptivek, topk:k=5, budget:tokens=2000, or with candidate texts and a query evidence:budget=500 (sentences, not whole passages) (default " + ctxsel.DefaultSelectStrategy + "; see the strategies tool)")
	searchSchema = schemaFor[MCPSearchInput]("")
	askSchema    = schemaFor[MCPAskInput]("strategy spec, or selfroute (selfroute:k=N, selfroute:prompt=adaptivek) to route through the reader (default " + ctxsel.DefaultStrategy + "; see the strategies tool)")
)

func schemaFor[T any](strategyDoc string) *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		return &jsonschema.Schema{Type: "object"}
	}
	if p := sc.Properties["strategy"]; p != nil {
		p.Description = strategyDoc
	}
	return singleTyped(sc)
}

// MCPServer returns a new MCP server whose tools run on s; serve it over
// stdio (ctxsel mcp) or streamable HTTP (Options.MCP mounts one at /mcp).
func (s *Server) MCPServer() *mcp.Server {
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	m := mcp.NewServer(&mcp.Implementation{Name: "ctxsel", Version: version}, &mcp.ServerOptions{
		Instructions: "ctxsel decides how much, and which, retrieved context to hand an LLM. " +
			"Call select_context with retrieved candidates to get the ones worth keeping and why; " +
			"search and ask work over the index this server was started with.",
	})
	m.AddTool(&mcp.Tool{Name: "select_context", InputSchema: selectSchema,
		Description: "Select which retrieved candidates to keep (and how many) with a strategy over their scores; returns the selected ids, k and an explanation of the cut, and with a pruning selector (evidence:budget=N) each kept passage's evidence: the sentences kept (byte spans) and the text to send."},
		s.tool(s.selectOp))
	m.AddTool(&mcp.Tool{Name: "search", InputSchema: searchSchema,
		Description: "Search the server's index: the best-matching passages with scores, no selection."},
		s.tool(s.searchOp))
	m.AddTool(&mcp.Tool{Name: "ask", InputSchema: askSchema,
		Description: "Answer a question from the server's index: retrieve, select context with a strategy, and answer when an LLM is configured; returns the answer, the selection and why (with the evidence kept of each passage when the selection pruned them, as the default does), and the passages."},
		s.tool(s.askOp))
	mcp.AddTool(m, &mcp.Tool{Name: "strategies",
		Description: "List the selection strategies, their parameters and the caps every strategy accepts; the text selectors the server offers and the answering routes the ask tool runs."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return toolJSON(s.strategies), nil, nil
		})
	return m
}

// mcpHandler serves m over streamable HTTP, statelessly: every request
// carries its own call, so nothing is held between requests.
//
// A POST's body is read here under the bounds policy (max_body_bytes and
// the in-flight budget, as /v1/*) and its frame checked as ctxsel mcp checks
// a stdio line, before the SDK sees it; a malformed one is answered with a
// JSON-RPC error object, and so is every error the SDK itself would answer
// in plain text.
func (s *Server) mcpHandler(m *mcp.Server) http.HandlerFunc {
	opts := mcp.StreamableHTTPOptions{Stateless: true, Logger: s.log, MaxRequestBodyBytes: s.cfg.MaxBodyBytes + 1,
		// wrap checks Host on every route (hostcheck.go); the SDK's
		// own check would refuse the names --allowed-hosts adds.
		DisableLocalhostProtection: len(s.cfg.AllowedHosts) > 0}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m }, &opts)
	// The members of a batch are answered in JSON, to be gathered into
	// the batch's reply (mcpbatch.go).
	batchOpts := opts
	batchOpts.JSONResponse = true
	hb := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m }, &batchOpts)
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := s.readBody(w, r)
			if err != nil {
				var fe *wire.FieldError
				status := http.StatusBadRequest
				if errors.As(err, &fe) && fe.Status != 0 {
					status = fe.Status
				}
				writeRPCError(w, status, nil, -32600, err.Error())
				return
			}
			if id, code, msg := checkPost([]byte(body)); code != 0 {
				s.log.Warn("mcp: malformed request answered with an error", "request_id", RequestID(r.Context()), "code", code, "reason", msg)
				writeRPCError(w, http.StatusBadRequest, id, code, msg)
				return
			}
			if members, ok := batchMembers(r, body); ok {
				s.serveBatch(w, r, hb, members)
				return
			}
			r.Body = io.NopCloser(strings.NewReader(body))
			r.ContentLength = int64(len(body))
		}
		rw := &rpcErrorWriter{ResponseWriter: w}
		h.ServeHTTP(rw, r)
		rw.finish()
	}
}

// checkPost checks an /mcp POST body as checkFrame checks a stdio line; a
// batch (which the SDK still takes under protocol versions before
// 2025-06-18) is checked message by message. code 0 means sound, and so
// does a stray response, which the SDK acknowledges.
func checkPost(body []byte) (json.RawMessage, int64, string) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' && json.Valid(body) {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil || len(batch) == 0 {
			return nil, jsonrpc.CodeInvalidRequest, "invalid request: an empty or malformed batch"
		}
		for _, m := range batch {
			if id, code, msg := checkPost(m); code != 0 || (len(m) > 0 && m[0] == '[') {
				if code == 0 {
					code, msg = jsonrpc.CodeInvalidRequest, "invalid request: a batch inside a batch"
				}
				return id, code, msg
			}
		}
		return nil, 0, ""
	}
	_, id, code, msg := checkFrame(body)
	if code == noReply {
		return nil, 0, ""
	}
	return id, code, msg
}

// writeRPCError writes a JSON-RPC error response object (id null when none
// could be read).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	writeJSON(w, status, append(rpcError(id, code, msg), '\n'))
}

// rpcErrorWriter turns the plain-text errors the SDK writes (http.Error:
// a wrong method, Accept header or protocol version) into JSON-RPC error
// objects; everything else, event streams included, passes through.
type rpcErrorWriter struct {
	http.ResponseWriter
	status int          // of a plain-text error held back, or 0
	text   bytes.Buffer // its text
}

func (w *rpcErrorWriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *rpcErrorWriter) Write(b []byte) (int, error) {
	if w.status != 0 {
		if w.text.Len() < 1024 {
			w.text.Write(b[:min(len(b), 1024)])
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *rpcErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

func (w *rpcErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *rpcErrorWriter) finish() {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(w.text.String())
	if msg == "" || strings.Contains(msg, "Go value") || strings.Contains(msg, "Go struct") {
		msg = http.StatusText(w.status)
	}
	code := int64(jsonrpc.CodeInvalidRequest)
	if w.status >= 500 {
		code = jsonrpc.CodeInternalError
	}
	writeRPCError(w.ResponseWriter, w.status, nil, code, msg)
}

// toolJSON is a result carrying a JSON document, as text for any client and
// as structured content for those that read it.
func toolJSON(b []byte) *mcp.CallToolResult {
	b = bytes.TrimSpace(b)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
	}
}

// searchRequest is the search tool's decoded arguments.
type searchRequest struct {
	query string
	topN  int
	seen  uint16
}

func decodeSearch(body string, r *searchRequest, lim limits) error {
	d := newDecoder(body)
	return d.Object(func(key string) error {
		var bit uint16
		switch key {
		case "query":
			bit = 1
		case "top_n":
			bit = 2
		default:
			return wire.Bad(key, "unknown field (known: query, top_n)")
		}
		read, err := d.Given(&r.seen, bit, key)
		if !read {
			return err
		}
		if key == "query" {
			r.query, err = d.Text(wire.Field(key), lim.Limits)
			return err
		}
		if r.topN, err = d.Count(wire.Field(key)); err == nil {
			err = lim.CheckTopN(key, r.topN)
		}
		return err
	})
}

// searchOp serves the search tool (it is no HTTP route): the index's
// best passages for a query, under the same bounds as /v1/ask.
func (s *Server) searchOp(ctx context.Context, body string, b []byte) ([]byte, error) {
	var req searchRequest
	if err := decodeSearch(body, &req, s.limits()); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.query) == "" {
		return nil, wire.Bad("query", "missing: search needs a query")
	}
	if s.asker == nil {
		return nil, &wire.FieldError{Status: http.StatusNotImplemented, Path: wire.Field(""),
			Msg: "search is not available: this server has no index configured (--index)"}
	}
	n := cmp.Or(req.topN, defaultSearchN)
	query := strings.Clone(req.query) // not a slice of the body
	passages, err := within(ctx, func() ([]Passage, error) { return s.search(ctx, query, n) })
	if err != nil {
		return nil, upstream("search", err)
	}
	slices.SortStableFunc(passages, func(a, b Passage) int { return cmp.Compare(b.Score, a.Score) })
	if len(passages) > n {
		passages = passages[:n]
	}
	b = append(b, `{"passages":`...)
	b = appendPassages(b, passages, nil)
	return append(b, "}\n"...), nil
}

// search retrieves with the Asker's Search, or else asks with the "full"
// strategy and keeps the passages.
func (s *Server) search(ctx context.Context, query string, n int) ([]Passage, error) {
	if sr, ok := s.asker.(Searcher); ok {
		return sr.Search(ctx, query, n)
	}
	full, err := ctxsel.Resolve("full")
	if err != nil {
		return nil, err
	}
	resp, err := s.asker.Ask(ctx, AskRequest{Query: query, Strategy: full, TopN: n})
	return resp.Passages, err
}
