package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves the MCP tools over newline-delimited JSON-RPC on in and
// out (ctxsel mcp passes stdin and stdout) until in ends or ctx is done.
//
// The SDK's own stdio transport ends the session on the first frame it
// cannot decode (a line that is not JSON, a batch, an object id), dropping
// the replies still pending. This transport checks every frame before the
// SDK sees it: a malformed one gets the JSON-RPC error reply the spec
// defines (-32700 parse error, -32600 invalid request) or, where the spec
// defines none (a stray response), a logged note, and the session goes on.
// A frame longer than max_body_bytes is refused as /v1/* refuses such a
// body. When in ends, the requests already read are answered before the
// session closes.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &stdioTransport{in: in, out: out, maxFrame: s.limits().body, log: s.log,
		drain: s.limits().deadline + stdioDrainSlack}
	err := s.MCPServer().Run(ctx, t)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp stdio: %w", err)
	}
	return nil
}

// stdioDrainSlack is how much longer than a request's deadline the session
// waits, once its input has ended, for the replies still owed.
const stdioDrainSlack = 5 * time.Second

// maxFrameDepth is the nesting the SDK's decoder accepts; a deeper frame
// would fail inside it, so it is refused here first.
const maxFrameDepth = 1000

// maxExactID bounds integer ids: the SDK holds them as float64 on the way
// in, so a larger one would come back altered.
const maxExactID = 1 << 53

type stdioTransport struct {
	in       io.Reader
	out      io.Writer
	maxFrame int64
	log      *slog.Logger
	drain    time.Duration
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{t: t, frames: make(chan frame), closed: make(chan struct{}), pending: map[jsonrpc.ID]bool{}, idle: make(chan struct{}, 1)}
	go c.readFrames()
	return c, nil
}

// frame is one line of input, or the end of it.
type frame struct {
	line     []byte
	n        int   // its line number, for notes
	tooLarge int64 // bytes of a line over the limit (line is nil)
	err      error // io.EOF or the input's failure
}

type stdioConn struct {
	t      *stdioTransport
	frames chan frame

	writeMu sync.Mutex

	// pending are the ids of the calls passed to the SDK and not yet
	// answered: at the end of input the session waits for them.
	mu      sync.Mutex
	pending map[jsonrpc.ID]bool
	idle    chan struct{} // signalled when pending empties

	closeOnce sync.Once
	closed    chan struct{}
}

// readFrames splits the input into lines, holding at most maxFrame bytes
// of one: the rest of a longer line is read and dropped.
func (c *stdioConn) readFrames() {
	br := bufio.NewReaderSize(c.t.in, 64<<10)
	var line []byte
	var size int64
	n := 0
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		if size <= c.t.maxFrame+2 { // a line ending (\r\n) is not part of the frame
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 || size > 0 {
			n++
			f := frame{line: line, n: n}
			if trimmed := bytes.TrimRight(line, "\r\n"); int64(len(trimmed)) > c.t.maxFrame || size > c.t.maxFrame+2 {
				f = frame{n: n, tooLarge: size}
			}
			if !c.send(f) {
				return
			}
			line, size = nil, 0
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				err = fmt.Errorf("reading input: %w", err)
			}
			c.send(frame{err: err})
			return
		}
	}
}

func (c *stdioConn) send(f frame) bool {
	select {
	case c.frames <- f:
		return true
	case <-c.closed:
		return false
	}
}

func (c *stdioConn) SessionID() string { return "" }

// Read returns the next well-formed message, answering or noting the
// malformed frames before it. At the end of input it first waits (at most
// the drain time) for the calls still being handled, so their replies are
// written before the SDK closes the session.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		var f frame
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case f = <-c.frames:
		}
		if f.err != nil {
			c.awaitPending(ctx)
			return nil, f.err
		}
		if msg := c.accept(ctx, f); msg != nil {
			return msg, nil
		}
	}
}

// accept checks one frame: a message the SDK can take is returned; anything
// else is answered or noted here and nil returned.
func (c *stdioConn) accept(ctx context.Context, f frame) jsonrpc.Message {
	if f.tooLarge > 0 {
		c.refuse(ctx, f, nil, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("request too large: over the limit of %d bytes (max_body_bytes)", c.t.maxFrame))
		return nil
	}
	line := bytes.TrimSpace(f.line)
	if len(line) == 0 {
		return nil // a blank line carries nothing
	}
	msg, id, code, reason := checkFrame(line)
	if code == 0 {
		var err error
		if msg, err = jsonrpc.DecodeMessage(line); err != nil {
			// The checks above should leave nothing for the SDK's decoder
			// to refuse; should they miss a case, it is still a reply.
			code, reason = jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message"
			c.t.log.Debug("mcp: the SDK refused a frame that passed the checks", "line", f.n, "error", err.Error())
		}
	}
	switch code {
	case 0:
	case noReply:
		c.t.log.Warn("mcp: input frame ignored", "line", f.n, "reason", reason)
		return nil
	default:
		c.refuse(ctx, f, id, code, reason)
		return nil
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == "notifications/cancelled" {
			c.cancelled(m.Params)
		}
		if !m.IsCall() {
			return m
		}
		c.mu.Lock()
		dup := c.pending[m.ID]
		if !dup {
			c.pending[m.ID] = true
		}
		c.mu.Unlock()
		if dup {
			// A reply would be indistinguishable from the first call's.
			c.t.log.Warn("mcp: input frame ignored", "line", f.n, "reason", "its id is already in use by a call in progress")
			return nil
		}
	case *jsonrpc.Response:
		// A reply to a call of the server's own; the SDK drops ones it
		// did not ask for, so say so here.
		c.t.log.Debug("mcp: response frame", "line", f.n)
	}
	return msg
}

// noReply marks a malformed frame the spec gives no reply to.
const noReply = 1

// checkFrame validates a frame as a JSON-RPC 2.0 message the way the SDK's
// decoder will read it. It returns the message's id when one could be read
// (for the error reply) and, for a frame to refuse, a JSON-RPC error code
// and a short reason; code 0 means the frame is sound.
func checkFrame(line []byte) (jsonrpc.Message, json.RawMessage, int64, string) {
	if !json.Valid(line) {
		return nil, nil, jsonrpc.CodeParseError, "parse error: not valid JSON"
	}
	if depth(line) > maxFrameDepth {
		return nil, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: nested deeper than %d levels", maxFrameDepth)
	}
	switch line[0] {
	case '[':
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported (MCP removed JSON-RPC batching in 2025-06-18): send one message per line"
	case '{':
	default:
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: a message must be a JSON object"
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, nil, jsonrpc.CodeParseError, "parse error: not valid JSON"
	}
	rawID, hasID := m["id"]
	id, idOK := validID(rawID)
	replyID := json.RawMessage(nil)
	if idOK {
		replyID = id
	}
	method, hasMethod := m["method"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	if !hasMethod && (hasResult || hasError) {
		// A response: the spec defines no reply to one, valid or not.
		switch {
		case !isVersion2(m["jsonrpc"]):
			return nil, nil, noReply, `a response without "jsonrpc": "2.0"`
		case !idOK:
			return nil, nil, noReply, "a response without a valid id"
		case hasResult && hasError:
			return nil, nil, noReply, "a response with both a result and an error"
		case hasError && !validWireError(m["error"]):
			return nil, nil, noReply, "a response whose error is not a JSON-RPC error object"
		}
		return nil, nil, 0, ""
	}
	switch {
	case !isVersion2(m["jsonrpc"]):
		return nil, replyID, jsonrpc.CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`
	case !hasMethod:
		return nil, replyID, jsonrpc.CodeInvalidRequest, `invalid request: no "method"`
	case len(method) == 0 || method[0] != '"':
		return nil, replyID, jsonrpc.CodeInvalidRequest, `invalid request: "method" must be a string`
	case hasID && !idOK:
		return nil, nil, jsonrpc.CodeInvalidRequest, "invalid request: an id must be a string or an integer"
	}
	if p, ok := m["params"]; ok && len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
		return nil, replyID, jsonrpc.CodeInvalidRequest, `invalid request: "params" must be an object`
	}
	return nil, nil, 0, ""
}

func isVersion2(raw json.RawMessage) bool {
	var v string
	return json.Unmarshal(raw, &v) == nil && v == "2.0"
}

// validID returns the id re-encoded for a reply when it is one the SDK
// keeps intact: a string, or an integer within float64's exact range.
func validID(raw json.RawMessage) (json.RawMessage, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, false
		}
		b, _ := json.Marshal(s)
		return b, true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		v, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || v != math.Trunc(v) || math.Abs(v) > maxExactID {
			return nil, false
		}
		return strconv.AppendInt(nil, int64(v), 10), true
	}
	return nil, false
}

func validWireError(raw json.RawMessage) bool {
	var e struct {
		Code    *float64 `json:"code"`
		Message *string  `json:"message"`
	}
	return json.Unmarshal(raw, &e) == nil && e.Code != nil && e.Message != nil && *e.Code == math.Trunc(*e.Code)
}

// depth is the deepest nesting of arrays and objects in valid JSON.
func depth(b []byte) int {
	d, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// refuse writes a JSON-RPC error reply (id null when none could be read)
// and notes the frame in the log, without its content.
func (c *stdioConn) refuse(ctx context.Context, f frame, id json.RawMessage, code int64, msg string) {
	size := int64(len(f.line))
	if f.tooLarge > 0 {
		size = f.tooLarge
	}
	c.t.log.Warn("mcp: malformed input frame answered with an error", "line", f.n, "bytes", size, "code", code, "reason", msg)
	if id == nil {
		id = json.RawMessage("null")
	}
	reply := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg}}
	b, err := json.Marshal(reply)
	if err != nil {
		return
	}
	if err := c.writeLine(ctx, b); err != nil {
		c.t.log.Warn("mcp: writing an error reply failed", "error", err.Error())
	}
}

// cancelled forgets a call the client gave up on: the SDK may not answer
// it, and the end of input must not wait for it.
func (c *stdioConn) cancelled(params json.RawMessage) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
		c.done(id)
	}
}

func (c *stdioConn) done(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.pending[id] {
		return
	}
	delete(c.pending, id)
	if len(c.pending) == 0 {
		select {
		case c.idle <- struct{}{}:
		default:
		}
	}
}

// awaitPending waits until every call read has been answered, the drain
// time has passed, ctx is done or the connection is closed.
func (c *stdioConn) awaitPending(ctx context.Context) {
	timer := time.NewTimer(c.t.drain)
	defer timer.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.idle:
		case <-timer.C:
			c.t.log.Warn("mcp: input ended; calls still unanswered after the drain time are dropped", "calls", n, "drain", c.t.drain.String())
			return
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		}
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(withWireCode(msg))
	if err != nil {
		return fmt.Errorf("mcp stdio: %w", err)
	}
	if err := c.writeLine(ctx, b); err != nil {
		return err
	}
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.done(r.ID)
	}
	return nil
}

func (c *stdioConn) writeLine(ctx context.Context, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return mcp.ErrConnectionClosed
	default:
	}
	if _, err := c.t.out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("mcp stdio: writing: %w", err)
	}
	return nil
}

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}
