package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"unsafe"

	"github.com/ctxsel/ctxsel/internal/wire"
)

// readBody reads a JSON request body of at most Config.MaxBodyBytes. A
// declared length over the limit is refused before a byte of the body is
// read; an undeclared (chunked) one is cut off at the limit. Every buffer it
// allocates is reserved from the server-wide budget (max_inflight_body_bytes)
// and held until the handler returns (wrap gives it back); a request over
// the budget gets 503.
//
// The budget is charged by bytes received, never by the length a client
// announces: a connection that announces 16 MB and sends a byte holds 4 KB.
// While a body is still arriving its bytes also count against its client's
// share (clientBudget), so one client sending slowly on many connections
// cannot take the whole budget from the others.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (string, error) {
	// Every route is wrapped, so w is the wrapper's; were it not, the body
	// would go unaccounted rather than never given back.
	sw, _ := w.(*statusWriter)
	// requireJSON has checked this on every route; kept here so a handler
	// that reads a body can never be served without it.
	if field, msg := jsonBodyError(r); msg != "" {
		return "", &wire.FieldError{Status: http.StatusUnsupportedMediaType, Path: wire.Field(field), Msg: msg}
	}
	limit := s.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		return "", s.bodyTooLarge()
	}
	client := clientKey(r)
	var pending int64 // this body's bytes in its client's share
	defer func() { s.clients.give(client, pending) }()
	// alloc reserves n bytes from the server's budget, and from the
	// client's share while the body is still arriving.
	alloc := func(n int, arriving bool) bool {
		if sw == nil {
			return true
		}
		if arriving {
			if !s.clients.take(client, int64(n)) {
				return false
			}
			pending += int64(n)
		}
		if !s.bodies.take(int64(n)) {
			return false
		}
		sw.bodyHeld += int64(n)
		return true
	}
	busy := func() error {
		w.Header().Set("Retry-After", "1")
		// Without this, net/http would read on (up to 256 KB) to keep
		// the connection, waiting on a client that may be sending
		// slowly: the refusal is to be quick.
		w.Header().Set("Connection", "close")
		return &wire.FieldError{Status: http.StatusServiceUnavailable, Path: wire.Field(""),
			Msg: "busy: request bodies in flight hold the server's memory budget for them (max_inflight_body_bytes); retry shortly"}
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	// The body is read into blocks that grow with what has arrived (4 KB,
	// then doubling up to 1 MB), each reserved before it is read into, and
	// joined once at the end: at most twice the body is ever reserved, and
	// a body of one block (most) is not copied. net/http ends the body at
	// Content-Length, so reading stops there without a last read for EOF.
	want := r.ContentLength // -1 when unknown (chunked)
	ceiling := limit + 1    // past the limit, MaxBytesReader fails the read
	if want >= 0 {
		ceiling = want
	}
	var blocks [][]byte
	var total int64
	size := int64(4096)
	for want < 0 || total < want {
		if len(blocks) == 0 || len(blocks[len(blocks)-1]) == cap(blocks[len(blocks)-1]) {
			size = min(size, ceiling-total)
			if !alloc(int(size), true) {
				return "", busy()
			}
			blocks = append(blocks, make([]byte, 0, size))
			size = min(2*size, 1<<20)
		}
		cur := blocks[len(blocks)-1]
		n, err := rd.Read(cur[len(cur):cap(cur)])
		blocks[len(blocks)-1] = cur[:len(cur)+n]
		total += int64(n)
		if errors.Is(err, io.EOF) {
			if want >= 0 && total < want {
				return "", wire.Bad("", "the request body ended after %d of %d bytes", total, want)
			}
			break
		}
		if err != nil {
			return "", s.bodyReadError(r, err)
		}
	}
	if total == 0 {
		return "", wire.Bad("", "empty request body: send a JSON object")
	}
	buf := blocks[0]
	if len(blocks) > 1 {
		// The blocks stay reserved: they are garbage now, but garbage is
		// memory until the collector runs.
		if !alloc(int(total), false) {
			return "", busy()
		}
		buf = make([]byte, 0, total)
		for _, b := range blocks {
			buf = append(buf, b...)
		}
	}
	// The decoder slices ids and texts out of this string. buf is this
	// request's own and is never written again, so viewing it as a string
	// is safe and saves copying the body. Whatever may outlive the request
	// (the token counter's cache, an embedder's) gets copies instead, so no
	// cache pins a whole body.
	return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
}

// bodyTooLarge is the error for a request body (or an MCP tool's
// arguments) over max_body_bytes.
func (s *Server) bodyTooLarge() error {
	return &wire.FieldError{Status: http.StatusRequestEntityTooLarge, Path: wire.Field(""),
		Msg: fmt.Sprintf("request body over the limit of %d bytes", s.cfg.MaxBodyBytes)}
}

// bodyReadError turns a failed body read into a client-facing error that
// names no socket address (net errors carry both ends'): 408 when the body
// did not arrive within read_timeout, 400 when the client broke off. The
// detail goes to the log.
func (s *Server) bodyReadError(r *http.Request, err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return s.bodyTooLarge()
	}
	s.log.Debug("reading a request body failed", "request_id", RequestID(r.Context()), "error", err.Error())
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &wire.FieldError{Status: http.StatusRequestTimeout, Path: wire.Field(""),
			Msg: fmt.Sprintf("the request body did not arrive within %s (read_timeout)", s.cfg.ReadTimeout)}
	}
	return &wire.FieldError{Path: wire.Field(""), Msg: "reading the request body failed: the connection broke off before the body ended"}
}
