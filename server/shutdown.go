package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"
)

// Requests still running when shutdown_timeout passes are cut: their
// contexts are canceled with errShutdownCut, so each handler answers 503
// (failure) and, within cutGrace, the connections close with an answer
// rather than none. A handler that ignores its context (none of ctxsel's:
// their back ends run under within) loses its connection as before.

// errShutdownCut is the cause of a request's context canceled at shutdown.
var errShutdownCut = errors.New("the server is shutting down")

// cutGrace is how long cut requests have to write their 503.
const cutGrace = time.Second

// shutdownCutMsg is what a request cut at shutdown is told.
const shutdownCutMsg = "the server is shutting down: this request was still running when shutdown_timeout passed; retry against a running instance"

// cutAtShutdown gives a request's context the shutdown's cut; the func
// returned releases it.
func (s *Server) cutAtShutdown(ctx context.Context) (context.Context, func()) {
	ctx, cut := context.WithCancelCause(ctx)
	stop := context.AfterFunc(s.stopping, func() { cut(errShutdownCut) })
	return ctx, func() { stop(); cut(nil) }
}

// cutByShutdown reports whether ctx was canceled by the shutdown's cut.
func cutByShutdown(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), errShutdownCut)
}

// answerCut writes the 503 of a request cut at shutdown when its handler
// wrote nothing, and logs it.
func (s *Server) answerCut(w *statusWriter, r *http.Request, route string) {
	if !cutByShutdown(r.Context()) {
		return
	}
	if w.code == 0 {
		w.Header().Set("Connection", "close")
		refuse(w, http.StatusServiceUnavailable, "", shutdownCutMsg)
	}
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "request cut by shutdown_timeout",
		slog.String("request_id", RequestID(r.Context())), slog.String("route", route), slog.Int("status", w.code))
}

// cutInFlight cuts the requests still running after shutdown_timeout and
// waits up to cutGrace for their answers to go out.
func (s *Server) cutInFlight(hs *http.Server) {
	s.log.Warn("shutdown_timeout passed: cutting the requests still in flight with 503",
		"timeout", s.cfg.ShutdownTimeout.String(), "in_flight", s.metrics.inFlight.Load())
	s.stop()
	ctx, cancel := context.WithTimeout(context.Background(), cutGrace)
	defer cancel()
	_ = hs.Shutdown(ctx) // again: returns once the cut requests' connections are idle and closed
}
