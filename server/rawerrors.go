package server

import (
	"bytes"
	"net"
	"net/http"
	"strconv"

	"github.com/ctxsel/ctxsel/internal/wire"
)

// net/http answers a request it cannot read at all (headers over
// MaxHeaderBytes: 431; a malformed request line or Host: 400; an unknown
// transfer coding: 501) itself, before any handler, in plain text. Every
// other error of this API is JSON, so the listener's connections rewrite
// those answers into {"error": {"message", "field"}}. net/http writes each
// as one Write straight to the connection, with its headers in an order
// (Content-Type before Connection) that its header writer, which sorts
// them, never produces for a handler's response: the rewrite cannot touch
// anything else.

// maxHeaderBytes bounds a request's headers (http.Server.MaxHeaderBytes).
const maxHeaderBytes = 64 << 10

// goErrorHeaders are the headers net/http's own error answers carry.
const goErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// jsonErrorsListener hands out connections that rewrite net/http's own
// plain-text error answers as JSON.
type jsonErrorsListener struct{ net.Listener }

func (l jsonErrorsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return jsonErrorsConn{c}, nil
}

type jsonErrorsConn struct{ net.Conn }

func (c jsonErrorsConn) Write(b []byte) (int, error) {
	if out, ok := jsonGoError(b); ok {
		if _, err := c.Conn.Write(out); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.Conn.Write(b)
}

// jsonGoError rewrites one of net/http's plain-text error answers as JSON;
// ok is false for anything else.
func jsonGoError(b []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(b, []byte("HTTP/1.1 "))
	if !ok {
		return nil, false
	}
	status, text, ok := bytes.Cut(rest, []byte(goErrorHeaders))
	if !ok || len(status) < 3 || bytes.ContainsAny(status, "\r\n") {
		return nil, false
	}
	code, err := strconv.Atoi(string(status[:3]))
	if err != nil || code < 400 {
		return nil, false
	}
	msg := string(text)
	if code == 431 {
		msg += ": the request's headers are over the server's limit of " + strconv.Itoa(maxHeaderBytes>>10) + " KiB"
	}
	body := []byte(`{"error":{"message":`)
	body = wire.AppendString(body, msg)
	body = append(body, `,"field":""}}`+"\n"...)
	out := make([]byte, 0, 160+len(body))
	out = append(out, "HTTP/1.1 "...)
	out = append(out, status[:3]...)
	out = append(out, ' ')
	out = append(out, http.StatusText(code)...)
	out = append(out, "\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\nContent-Type: application/json\r\n\r\n"...)
	return append(out, body...), true
}
