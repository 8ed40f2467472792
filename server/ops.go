package server

import (
	"bytes"
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An op is one operation of the service over a request body: it decodes
// the body under the request-bounds policy, does the work and appends the
// JSON response to dst. Every POST route runs one (select, ask, rerank,
// embeddings, reward), and the MCP tools run the same ones (select, ask,
// and search, which has no route): a route reads the body and writes what
// the op returns, or its error (writeFailure); a tool hands the op its
// arguments and turns an error into a tool error (toolFailure). Neither
// goes through the other.
type op func(ctx context.Context, body string, dst []byte) ([]byte, error)

// serve is op as an HTTP handler.
func (s *Server) serve(o op) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.runOp(w, r, o) }
}

// runOp answers r with o: its response, or its error (writeFailure). An
// op may set response headers on w before it returns.
func (s *Server) runOp(w http.ResponseWriter, r *http.Request, o op) {
	body, err := s.readBody(w, r)
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	bp := getBuf()
	defer putBuf(bp)
	b, err := o(r.Context(), body, (*bp)[:0])
	if err != nil {
		s.writeFailure(w, r, err)
		return
	}
	*bp = b
	writeJSON(w, http.StatusOK, b)
}

// tool is op as an MCP tool taking its arguments raw: the op's decoder
// checks them under the request-bounds policy (sizes, UTF-8, counts),
// naming the field at fault, faster than the SDK's schema validation and a
// typed round trip would on 1,000 candidates, and a malformed value never
// reaches a client as a message naming Go types.
func (s *Server) tool(o op) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := bytes.TrimSpace(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = []byte(`{}`)
		}
		// The request's one deadline and id, as wrap gives an HTTP
		// request (the tool's context may carry none: the SDK detaches
		// handlers from the transport's).
		ctx, cancel := s.limits().bound(context.WithValue(ctx, ctxKey{}, s.requestID(&http.Request{Header: http.Header{}})))
		defer cancel()
		var b []byte
		var err error
		if int64(len(args)) > s.cfg.MaxBodyBytes {
			err = s.bodyTooLarge()
		} else {
			b, err = o(ctx, string(args), nil)
		}
		if err != nil {
			res := &mcp.CallToolResult{}
			res.SetError(s.toolFailure(ctx, err))
			return res, nil
		}
		return toolJSON(b), nil
	}
}

// toolFailure is err as an MCP tool error: the message an HTTP client
// would get, after the field at fault.
func (s *Server) toolFailure(ctx context.Context, err error) error {
	_, field, msg := s.failure(ctx, err)
	if field != "" {
		return errors.New(field + ": " + msg)
	}
	return errors.New(msg)
}
