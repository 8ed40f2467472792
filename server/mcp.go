package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxsel/ctxsel"
)

// The MCP server exposes the service's operations as tools an agent can
// call: select_context, search, ask and strategies. Each tool hands its
// arguments to the HTTP handler of the same operation in process, so limits,
// validation, errors and metrics are /v1/select's and /v1/ask's exactly; a
// 4xx becomes an MCP tool error (IsError) carrying the field and message.
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

// selectSchema and askSchema are select_context's and ask's published
// input schemas, inferred from their input types, the strategy's
// description naming the default from the constant (a struct tag cannot).
// TestMCPTools checks they are the full ones.
var (
	selectSchema = schemaFor[MCPSelectInput]("strategy spec, e.g. adaptivek, topk:k=5, budget:tokens=2000 (default " + ctxsel.DefaultSelectStrategy + "; see the strategies tool)")
	askSchema    = schemaFor[MCPAskInput]("strategy spec, or selfroute:k=N to route through the reader (default " + ctxsel.DefaultStrategy + "; see the strategies tool)")
)

func schemaFor[T any](strategyDoc string) *jsonschema.Schema {
	sc, err := jsonschema.For[T](nil)
	if err != nil {
		return &jsonschema.Schema{Type: "object"}
	}
	if p := sc.Properties["strategy"]; p != nil {
		p.Description = strategyDoc
	}
	return sc
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
	// select_context takes its arguments raw: /v1/select's decoder checks
	// them (naming the field at fault) faster than the SDK's schema
	// validation and a typed round trip would on 1,000 candidates. The
	// schema is still published for clients.
	m.AddTool(&mcp.Tool{Name: "select_context", InputSchema: selectSchema,
		Description: "Select which retrieved candidates to keep (and how many) with a strategy over their scores; returns the selected ids, k and an explanation of the cut."},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			body := req.Params.Arguments
			if len(bytes.TrimSpace(body)) == 0 || string(bytes.TrimSpace(body)) == "null" {
				body = json.RawMessage(`{}`)
			}
			code, out := s.inProcess(ctx, "/v1/select", s.handleSelect, body)
			if code != http.StatusOK {
				res := &mcp.CallToolResult{}
				res.SetError(toolError(code, out))
				return res, nil
			}
			return toolJSON(out), nil
		})
	mcp.AddTool(m, &mcp.Tool{Name: "search",
		Description: "Search the server's index: the best-matching passages with scores, no selection."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in MCPSearchInput) (*mcp.CallToolResult, any, error) {
			return s.mcpSearch(ctx, in)
		})
	mcp.AddTool(m, &mcp.Tool{Name: "ask", InputSchema: askSchema,
		Description: "Answer a question from the server's index: retrieve, select context with a strategy, and answer when an LLM is configured; returns the answer, the selection and why, and the passages."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in MCPAskInput) (*mcp.CallToolResult, any, error) {
			return s.mcpCall(ctx, "/v1/ask", s.handleAsk, in)
		})
	mcp.AddTool(m, &mcp.Tool{Name: "strategies",
		Description: "List the selection strategies, their parameters and the caps every strategy accepts."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return toolJSON(s.strategies), nil, nil
		})
	return m
}

// mcpHandler serves m over streamable HTTP, statelessly: every request
// carries its own call, so nothing is held between requests.
func (s *Server) mcpHandler(m *mcp.Server) http.HandlerFunc {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return m },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: s.log})
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		h.ServeHTTP(w, r)
	}
}

// mcpCall runs an HTTP handler in process on in (as its JSON body) and
// turns its answer into a tool result.
func (s *Server) mcpCall(ctx context.Context, path string, h http.HandlerFunc, in any) (*mcp.CallToolResult, any, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	code, out := s.inProcess(ctx, path, h, body)
	if code != http.StatusOK {
		return nil, nil, toolError(code, out)
	}
	return toolJSON(out), nil, nil
}

func (s *Server) inProcess(ctx context.Context, path string, h http.HandlerFunc, body []byte) (int, []byte) {
	ctx = context.WithValue(ctx, ctxKey{}, s.requestID(&http.Request{Header: http.Header{}}))
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, path, bytes.NewReader(body))
	if err != nil {
		return http.StatusInternalServerError, []byte(`{"error":{"message":"internal error"}}`)
	}
	r.Header.Set("Content-Type", "application/json")
	w := &memWriter{header: http.Header{}}
	h(w, r)
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.code, w.buf.Bytes()
}

// toolError turns an error response into the error of a tool result.
func toolError(code int, body []byte) error {
	var e struct {
		Error struct{ Message, Field string } `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		return fmt.Errorf("failed with status %d", code)
	}
	if e.Error.Field != "" {
		return errors.New(e.Error.Field + ": " + e.Error.Message)
	}
	return errors.New(e.Error.Message)
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

func (s *Server) mcpSearch(ctx context.Context, in MCPSearchInput) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, nil, errors.New("query: missing: search needs a query")
	}
	if in.TopN < 0 || in.TopN > s.cfg.MaxCandidates {
		return nil, nil, fmt.Errorf("top_n: must be in [0, %d]", s.cfg.MaxCandidates)
	}
	if s.asker == nil {
		return nil, nil, errors.New("search is not available: this server has no index configured (--index)")
	}
	n := cmp.Or(in.TopN, defaultSearchN)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout.D())
	defer cancel()
	var passages []Passage
	var err error
	if sr, ok := s.asker.(Searcher); ok {
		passages, err = sr.Search(ctx, in.Query, n)
	} else {
		var resp AskResponse
		full, rerr := ctxsel.Resolve("full")
		if rerr != nil {
			return nil, nil, rerr
		}
		resp, err = s.asker.Ask(ctx, AskRequest{Query: in.Query, Strategy: full.Strategy, Caps: full.Caps, Spec: full.Spec, TopN: n})
		passages = resp.Passages
	}
	if err != nil {
		s.log.Warn("mcp search failed", "error", err.Error())
		return nil, nil, fmt.Errorf("search failed: %w", err)
	}
	slices.SortStableFunc(passages, func(a, b Passage) int { return cmp.Compare(b.Score, a.Score) })
	if len(passages) > n {
		passages = passages[:n]
	}
	b := []byte(`{"passages":[`)
	for i, p := range passages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendString(b, p.ID)
		b = append(b, `,"rank":`...)
		b = appendInt(b, i)
		b = append(b, `,"score":`...)
		b = appendFloat(b, p.Score)
		b = append(b, `,"tokens":`...)
		b = appendInt(b, p.Tokens)
		b = append(b, `,"text":`...)
		b = appendString(b, p.Text)
		b = append(b, '}')
	}
	return toolJSON(append(b, "]}"...)), nil, nil
}

// memWriter is the ResponseWriter of an in-process call.
type memWriter struct {
	header http.Header
	code   int
	buf    bytes.Buffer
}

func (w *memWriter) Header() http.Header { return w.header }

func (w *memWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *memWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.buf.Write(b)
}
