package server

import (
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The SDK answers some failures with a plain Go error, which goes on the
// wire with error code 0, a code JSON-RPC does not define and clients do
// not expect: a call before "initialize" over stdio ("method "tools/list"
// is invalid during session initialization") is one. ctxsel mcp's
// transport gives each such reply a code before writing it.

// codeNotInitialized is the code of a call before the session's
// initialize, as the Language Server Protocol numbers it
// (ServerNotInitialized), from JSON-RPC's implementation-defined range.
const codeNotInitialized = -32002

// withWireCode returns msg with a JSON-RPC error code on an error reply
// that has none: codeNotInitialized before initialize, else -32603
// (internal error).
func withWireCode(msg jsonrpc.Message) jsonrpc.Message {
	r, ok := msg.(*jsonrpc.Response)
	if !ok || r.Error == nil {
		return msg
	}
	var we *jsonrpc.Error
	if errors.As(r.Error, &we) && we.Code != 0 {
		return msg
	}
	text := r.Error.Error()
	code := int64(jsonrpc.CodeInternalError)
	if strings.Contains(text, "during session initialization") {
		code = codeNotInitialized
		text += `: send "initialize" first`
	}
	out := *r
	out.Error = &jsonrpc.Error{Code: code, Message: text}
	return &out
}
