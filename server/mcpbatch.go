package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ctxsel/ctxsel/internal/wire"
)

// JSON-RPC batches on /mcp. Protocol versions before 2025-06-18 allow a
// POST to carry an array of messages, and the SDK takes one however long,
// running its calls at once (one 33 KB POST ran 300 asks and 300 LLM
// calls), and when the request's deadline passes it ends the response,
// dropping the ids not yet answered. So ctxsel runs a batch itself: at
// most maxBatch messages, one after another under the request's one
// deadline (so a batch costs no more than that deadline of work), each
// through the SDK as a POST of its own; every call's id is answered, with
// a JSON-RPC error for those the deadline cut.

// maxBatch is the most messages one /mcp batch may carry.
const maxBatch = 32

// codeCut is the JSON-RPC error code of a call in a batch that the
// request's deadline cut (an implementation-defined server error).
const codeCut = -32003

// batchMember is one message of a batch: its raw JSON, and its id when it
// is a call (nil for a notification or a response, which get no reply).
type batchMember struct {
	raw json.RawMessage
	id  json.RawMessage
}

// batchMembers splits body when it is a batch the SDK would take (a JSON
// array, under a protocol version before 2025-06-18; checkPost has checked
// each member); ok is false otherwise.
func batchMembers(r *http.Request, body string) (members []batchMember, ok bool) {
	b := bytes.TrimSpace([]byte(body))
	if len(b) == 0 || b[0] != '[' {
		return nil, false
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v >= "2025-06-18" {
		return nil, false // the SDK refuses it
	}
	var raws []json.RawMessage
	if json.Unmarshal(b, &raws) != nil {
		return nil, false
	}
	for _, raw := range raws {
		m := batchMember{raw: raw}
		// checkPost has checked each member: one with a method and an
		// id is a call.
		var f map[string]json.RawMessage
		if json.Unmarshal(raw, &f) == nil && f["method"] != nil {
			if id, ok := validID(f["id"]); ok {
				m.id = id
			}
		}
		members = append(members, m)
	}
	return members, true
}

// serveBatch answers a batch: members run one at a time through h, the
// SDK's handler answering JSON, until the request's deadline; the replies
// are gathered into one JSON array (202 and no body when no member was a
// call).
func (s *Server) serveBatch(w http.ResponseWriter, r *http.Request, h http.Handler, members []batchMember) {
	ctx := r.Context()
	replies := make([]json.RawMessage, 0, len(members))
	if len(members) > maxBatch {
		msg := fmt.Sprintf("invalid request: a batch of %d messages, over the limit of %d: send fewer per POST", len(members), maxBatch)
		for _, m := range members {
			if m.id != nil {
				replies = append(replies, rpcError(m.id, jsonrpc.CodeInvalidRequest, msg))
			}
		}
		if len(replies) == 0 {
			replies = append(replies, rpcError(nil, jsonrpc.CodeInvalidRequest, msg))
		}
		writeBatch(w, http.StatusBadRequest, replies)
		return
	}
	cut := 0
	for _, m := range members {
		if ctx.Err() != nil {
			if m.id != nil {
				cut++
				replies = append(replies, rpcError(m.id, codeCut, "timed out after "+s.cfg.RequestTimeout.String()+" (request_timeout) before this call of the batch ran"))
			}
			continue
		}
		sub := r.Clone(ctx)
		sub.Body = io.NopCloser(bytes.NewReader(m.raw))
		sub.ContentLength = int64(len(m.raw))
		rec := &batchRecorder{header: http.Header{}}
		h.ServeHTTP(rec, sub)
		if m.id == nil {
			continue // a notification or a response: no reply
		}
		reply := rec.reply()
		switch {
		case reply != nil:
			replies = append(replies, reply)
		case ctx.Err() != nil:
			cut++
			replies = append(replies, rpcError(m.id, codeCut, "timed out after "+s.cfg.RequestTimeout.String()+" (request_timeout) while this call of the batch ran"))
		default:
			msg := strings.TrimSpace(rec.body.String())
			if msg == "" || rec.status < 400 {
				msg = "no reply"
			}
			code := int64(jsonrpc.CodeInvalidRequest)
			if rec.status >= 500 || rec.status < 400 {
				code = jsonrpc.CodeInternalError
			}
			replies = append(replies, rpcError(m.id, code, msg))
		}
	}
	if cut > 0 {
		s.log.Warn("mcp: a batch's deadline cut calls; each was answered with an error", "request_id", RequestID(ctx), "cut", cut, "messages", len(members))
	}
	if len(replies) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeBatch(w, http.StatusOK, replies)
}

func writeBatch(w http.ResponseWriter, status int, replies []json.RawMessage) {
	b := []byte{'['}
	for i, r := range replies {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, bytes.TrimSpace(r)...)
	}
	writeJSON(w, status, append(b, "]\n"...))
}

// rpcError is a JSON-RPC error response object (id null when nil).
func rpcError(id json.RawMessage, code int64, msg string) json.RawMessage {
	if id == nil {
		id = json.RawMessage("null")
	}
	b := []byte(`{"jsonrpc":"2.0","id":`)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = wire.AppendString(b, msg)
	return append(b, "}}"...)
}

// batchRecorder holds what the SDK answers one member of a batch.
type batchRecorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *batchRecorder) Header() http.Header { return r.header }

func (r *batchRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}

func (r *batchRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if r.body.Len() < int(maxReplyBytes) {
		r.body.Write(b)
	}
	return len(b), nil
}

// Flush is a no-op: the reply is sent with the batch's.
func (r *batchRecorder) Flush() {}

// maxReplyBytes bounds what is kept of one member's reply.
const maxReplyBytes = 64 << 20

// reply is the member's JSON-RPC response object, or nil when the SDK
// wrote none (a plain-text error, or nothing before the deadline).
func (r *batchRecorder) reply() json.RawMessage {
	b := bytes.TrimSpace(r.body.Bytes())
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") || len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return nil
	}
	return json.RawMessage(b)
}
