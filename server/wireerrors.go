package server

import (
	"encoding/json"
	"io"
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
//   - the OpenAI routes (/v1/embeddings, /v1/models) carry OpenAI's
//     {"error": {"message", "type", "param", "code"}}, the message naming
//     the field (OpenAI clients show message alone: go-openai, the Python
//     and TypeScript SDKs, LangChain), ctxsel's "field", and Jina's
//     top-level "detail" (what Jina clients read, LangChain's
//     JinaEmbeddings among them: without it they fail on a property of
//     undefined instead of showing the error);
//   - /mcp answers a missing or wrong key with a JSON-RPC error object and
//     403, not 401: MCP clients take any 401 as the start of an OAuth flow
//     (the TypeScript SDK runs its auth provider on every 401, with or
//     without a WWW-Authenticate challenge), which fails against a server
//     that uses API keys with a message about OAuth metadata. A 403
//     carrying no challenge reaches the user as ctxsel's own message. It
//     carries the request's id when the body has a readable one: a
//     JSON-RPC client matches an error to its request by id, and mcp-go,
//     which takes any other 4xx on initialize for a legacy SSE server,
//     shows an error it can match.

// errShape is the error shape of a route.
type errShape uint8

const (
	shapeCtxsel errShape = iota // {"error": {"message", "field"}}
	shapeRerank                 // plus Cohere's "message" and Jina's "detail"
	shapeOpenAI                 // plus OpenAI's "type", "param", "code" and Jina's "detail"
	shapeMCP                    // a JSON-RPC error object
)

// shapeFor is the error shape of the route named name (as in routes()).
func shapeFor(name string) errShape {
	switch name {
	case "/v1/rerank", "/v2/rerank":
		return shapeRerank
	case "/v1/embeddings", "/v1/models", "/v1/models/{model}":
		return shapeOpenAI
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

// appendError appends the error body of shape: ctxsel's own
// {"error": {"message", "field"}}, with each wire format's fields added.
func appendError(b []byte, shape errShape, status int, field, msg string) []byte {
	switch shape {
	case shapeRerank:
		return appendRerankError(b, field, msg)
	case shapeOpenAI:
		return appendOpenAIError(b, status, field, msg)
	}
	b = append(b, `{"error":{"message":`...)
	b = wire.AppendString(b, msg)
	b = append(b, `,"field":`...)
	b = wire.AppendString(b, field)
	return append(b, "}}\n"...)
}

// appendOpenAIError appends the OpenAI routes' error body: OpenAI's error
// object, whose message names the field, with ctxsel's "field" in it and
// Jina's "detail" beside it.
func appendOpenAIError(b []byte, status int, field, msg string) []byte {
	text := msg
	if field != "" {
		text = field + ": " + msg
	}
	typ, code := openAIErrorKind(status, field)
	b = append(b, `{"detail":`...)
	b = wire.AppendString(b, text)
	b = append(b, `,"error":{"message":`...)
	b = wire.AppendString(b, text)
	b = append(b, `,"type":`...)
	b = wire.AppendString(b, typ)
	b = append(b, `,"param":`...)
	if field != "" {
		b = wire.AppendString(b, field)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"code":`...)
	if code != "" {
		b = wire.AppendString(b, code)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"field":`...)
	b = wire.AppendString(b, field)
	return append(b, "}}\n"...)
}

// openAIErrorKind is the "type" and "code" OpenAI gives an error of
// status: the caller's mistakes are invalid_request_error (a wrong key
// with code invalid_api_key, an unserved model with model_not_found), the
// server's own failures server_error.
func openAIErrorKind(status int, field string) (typ, code string) {
	switch {
	case status == http.StatusUnauthorized:
		return "invalid_request_error", "invalid_api_key"
	case status == http.StatusNotFound && field == "model":
		return "invalid_request_error", "model_not_found"
	case status == http.StatusTooManyRequests:
		return "requests", "rate_limit_exceeded"
	case status >= 500:
		return "server_error", ""
	}
	return "invalid_request_error", ""
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
func unauthorized(w http.ResponseWriter, r *http.Request, shape errShape) {
	if shape == shapeMCP {
		writeRPCError(w, http.StatusForbidden, requestID(r), codeUnauthorized,
			unauthorizedMsg+"; /mcp takes API keys, not OAuth")
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="ctxsel"`)
	writeError(w, http.StatusUnauthorized, "Authorization", unauthorizedMsg)
}

// maxIDPeek bounds what unauthorized reads of a refused /mcp body to find
// its id: a JSON-RPC request's envelope, not its whole body, from a caller
// not yet trusted.
const maxIDPeek = 16 << 10

// requestID is the JSON-RPC id of a single request in r's body (a number
// or a string), or nil when there is none to read: a notification, a
// batch, a body past maxIDPeek or one that is not JSON.
func requestID(r *http.Request) json.RawMessage {
	if r == nil || r.Body == nil || r.Method != http.MethodPost {
		return nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxIDPeek+1))
	if err != nil || len(body) > maxIDPeek {
		return nil
	}
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 {
		return nil
	}
	switch msg.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return msg.ID
	}
	return nil // null, or a type JSON-RPC does not allow
}
