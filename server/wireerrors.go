package server

import (
	"net/http"

	"github.com/ctxsel/ctxsel/internal/wire"
)

// Errors in each wire format's own shape. A drop-in route is read by
// clients written for another service, and they show the user only what
// that service's error shape carries:
//
//   - the rerank routes (/v1/rerank, /v2/rerank) add Cohere's top-level
//     "message" (what the Cohere SDKs and Vercel's @ai-sdk/cohere show)
//     and Jina's "detail" (what Jina clients read) to ctxsel's own
//     {"error": {"message", "field"}}, the same text in each, naming the
//     field at fault;
//   - /v1/embeddings needs nothing more: OpenAI's {"error": {"message"}}
//     is already ctxsel's shape;
//   - /mcp answers a missing or wrong key with a JSON-RPC error object and
//     403, not 401: MCP clients take any 401 as the start of an OAuth flow
//     (the TypeScript SDK runs its auth provider on every 401, with or
//     without a WWW-Authenticate challenge), which fails against a server
//     that uses API keys with a message about OAuth metadata. A 403
//     carrying no challenge reaches the user as ctxsel's own message.

// errShape is the error shape of a route.
type errShape uint8

const (
	shapeCtxsel errShape = iota // {"error": {"message", "field"}}
	shapeRerank                 // plus Cohere's "message" and Jina's "detail"
	shapeMCP                    // a JSON-RPC error object
)

// shapeFor is the error shape of the route named name (as in routes()).
func shapeFor(name string) errShape {
	switch name {
	case "/v1/rerank", "/v2/rerank":
		return shapeRerank
	case "/mcp":
		return shapeMCP
	}
	return shapeCtxsel
}

// routeShape is the shape writeError must use on w: the route's, when w
// is the writer wrap gave the handler.
func routeShape(w http.ResponseWriter) errShape {
	if sw, ok := w.(*statusWriter); ok {
		return sw.shape
	}
	return shapeCtxsel
}

// appendRerankError appends the rerank routes' error body.
func appendRerankError(b []byte, field, msg string) []byte {
	text := msg
	if field != "" {
		text = field + ": " + msg
	}
	b = append(b, `{"message":`...)
	b = wire.AppendString(b, text)
	b = append(b, `,"detail":`...)
	b = wire.AppendString(b, text)
	b = append(b, `,"error":{"message":`...)
	b = wire.AppendString(b, msg)
	b = append(b, `,"field":`...)
	b = wire.AppendString(b, field)
	return append(b, "}}\n"...)
}

// unauthorizedMsg is what a request without a valid key is told.
const unauthorizedMsg = "missing or invalid API key: send Authorization: Bearer KEY (one of the server's CTXSEL_API_KEYS)"

// codeUnauthorized is the JSON-RPC error code of /mcp's refusal (an
// implementation-defined server error, -32000 to -32099).
const codeUnauthorized = -32001

// unauthorized answers a request to an authenticated route without a valid
// key, in the route's shape.
func unauthorized(w http.ResponseWriter, shape errShape) {
	if shape == shapeMCP {
		writeRPCError(w, http.StatusForbidden, nil, codeUnauthorized,
			unauthorizedMsg+"; /mcp takes API keys, not OAuth")
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="ctxsel"`)
	writeError(w, http.StatusUnauthorized, "Authorization", unauthorizedMsg)
}
