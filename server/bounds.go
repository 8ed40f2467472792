package server

import "time"

// limits is the request-bounds policy: one set of bounds, taken from the
// Config, that every route and transport applies (the HTTP routes, /mcp and
// ctxsel mcp over stdio) before it does any work, answering in its own
// error shape. The decoders enforce the size bounds as they read, so an
// over-long request fails at the first offending element.
type limits struct {
	body          int64         // a request body, or one MCP stdio frame
	maxCandidates int           // candidates, documents or inputs of one request
	maxText       int           // one candidate's or document's text, and the query
	maxDim        int           // one vector's dimension
	deadline      time.Duration // the work of one request
}

func (s *Server) limits() limits {
	return limits{body: s.cfg.MaxBodyBytes, maxCandidates: s.cfg.MaxCandidates, maxText: s.cfg.MaxTextBytes,
		maxDim: s.cfg.MaxVectorDim, deadline: s.cfg.RequestTimeout.D()}
}
