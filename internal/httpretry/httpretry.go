// Package httpretry sends JSON requests to embedding servers with a
// per-attempt timeout and retries: exponential backoff with jitter on 429,
// 5xx and transport errors, honouring Retry-After (seconds or HTTP-date) and
// Retry-After-Ms, each wait capped at MaxDelay. Other statuses are returned at
// once as *StatusError. Cancelling the context aborts promptly, including
// during a backoff wait.
//
// It is shared by the embed/openai and embed/ollama backends; it never logs or
// formats request headers, so credentials placed there stay out of errors.
package httpretry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults applied by Policy's zero values.
const (
	DefaultBaseDelay = 500 * time.Millisecond
	DefaultMaxDelay  = 30 * time.Second
	DefaultMaxBody   = 256 << 20
	maxErrorBody     = 64 << 10
)

// Policy says how Do retries. The zero value means no retries, no per-attempt
// timeout, default delays.
type Policy struct {
	// MaxRetries is how many times a failed attempt is retried (so at most
	// MaxRetries+1 attempts). Values below zero count as zero.
	MaxRetries int
	// BaseDelay is the first backoff wait; each retry doubles it. Default
	// DefaultBaseDelay.
	BaseDelay time.Duration
	// MaxDelay caps every wait, Retry-After included. Default DefaultMaxDelay.
	MaxDelay time.Duration
	// Timeout bounds each attempt (connect, send, read the whole body);
	// 0 means none. An attempt that times out is retried.
	Timeout time.Duration
	// MaxBody caps a successful response body. Default DefaultMaxBody.
	MaxBody int64
	// ErrorMessage extracts a readable message from a non-2xx body; nil, or
	// an empty result, uses the body text itself (shortened).
	ErrorMessage func(body []byte) string
	// Sleep waits d or until ctx is done, returning ctx's error then. nil
	// uses a timer. Tests inject a fake to keep waits out of the clock.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Request is one HTTP request, replayable across attempts.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// StatusError is a non-2xx response that was not (or no longer) retried.
type StatusError struct {
	StatusCode int
	Status     string // e.g. "400 Bad Request"
	Message    string // server's message, from Policy.ErrorMessage or the body
	Body       []byte // the first 64 KiB of the body
	Attempts   int
}

func (e *StatusError) Error() string {
	var b strings.Builder
	b.WriteString("HTTP ")
	if e.Status != "" {
		b.WriteString(e.Status)
	} else {
		b.WriteString(strconv.Itoa(e.StatusCode))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Retryable reports whether a response with this status is retried.
func Retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500 && status <= 599
}

// attemptError is a transport-level failure of one attempt (retryable).
type attemptError struct{ err error }

func (e *attemptError) Error() string { return e.err.Error() }
func (e *attemptError) Unwrap() error { return e.err }

// permanentError stops retries (e.g. a body over MaxBody).
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Do sends req through client (http.DefaultClient when nil), retrying per p,
// and returns the body of the first 2xx response.
//
// Errors: a *StatusError for a final non-2xx status; ctx.Err() (wrapped) when
// ctx ends first; otherwise the last transport error, wrapped.
func Do(ctx context.Context, client *http.Client, req Request, p Policy) ([]byte, error) {
	if client == nil {
		client = http.DefaultClient
	}
	retries := max(p.MaxRetries, 0)
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		body, wait, err := p.once(ctx, client, req)
		if err == nil {
			return body, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		var se *StatusError
		isStatus := errors.As(err, &se)
		if isStatus {
			se.Attempts = attempt
		}
		var pe *permanentError
		if errors.As(err, &pe) || isStatus && !Retryable(se.StatusCode) || attempt > retries {
			if !isStatus && attempt > 1 {
				return nil, fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return nil, err
		}
		if wait < 0 {
			wait = p.backoff(attempt)
		}
		if err := p.sleep(ctx, min(wait, p.maxDelay())); err != nil {
			return nil, err
		}
	}
}

// once performs one attempt. wait is the server's Retry-After, or -1.
func (p Policy) once(ctx context.Context, client *http.Client, r Request) (body []byte, wait time.Duration, err error) {
	wait = -1
	actx := ctx
	if p.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, p.Timeout)
		defer cancel()
	}
	hr, err := http.NewRequestWithContext(actx, r.Method, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, wait, &permanentError{err}
	}
	for k, vs := range r.Header {
		hr.Header[k] = append([]string(nil), vs...)
	}
	resp, err := client.Do(hr)
	if err != nil {
		return nil, wait, p.transportError(actx, ctx, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Best effort: a truncated error body still says something.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		wait = retryAfter(resp.Header, time.Now())
		return nil, wait, &StatusError{
			StatusCode: resp.StatusCode,
			Status:     resp.Status,
			Message:    p.message(b),
			Body:       b,
		}
	}
	limit := p.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, wait, p.transportError(actx, ctx, fmt.Errorf("reading response: %w", err))
	}
	if int64(len(body)) > limit {
		return nil, wait, &permanentError{fmt.Errorf("response body exceeds %d bytes", limit)}
	}
	return body, wait, nil
}

func (p Policy) transportError(actx, ctx context.Context, err error) error {
	if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("attempt timed out after %s: %w", p.Timeout, err)
	}
	return &attemptError{err}
}

func (p Policy) message(body []byte) string {
	if p.ErrorMessage != nil {
		if m := p.ErrorMessage(body); m != "" {
			return m
		}
	}
	return Shorten(string(body), 512)
}

func (p Policy) maxDelay() time.Duration {
	if p.MaxDelay > 0 {
		return p.MaxDelay
	}
	return DefaultMaxDelay
}

// backoff is the wait before retry number attempt (1-based): BaseDelay·2^(n-1)
// capped at MaxDelay, with "equal jitter" (uniform in [d/2, d]).
func (p Policy) backoff(attempt int) time.Duration {
	d := p.BaseDelay
	if d <= 0 {
		d = DefaultBaseDelay
	}
	limit := p.maxDelay()
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	half := d / 2
	return half + time.Duration(rand.Int64N(int64(d-half)+1))
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		if err := p.Sleep(ctx, d); err != nil {
			return err
		}
		return ctx.Err()
	}
	return Sleep(ctx, d)
}

// Sleep waits d, or until ctx is done and then returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryAfter parses Retry-After-Ms, then Retry-After (delay-seconds or an
// HTTP-date); -1 when absent or unparsable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return -1
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

// Shorten trims s to at most n bytes (on a rune boundary), marking the cut,
// and collapses surrounding whitespace.
func Shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Redact returns err with every occurrence of secret in its text replaced by
// "[REDACTED]", scrubbing a wrapped *StatusError's Message and Body too
// (servers sometimes echo credentials). errors.Is/As still see the chain.
func Redact(err error, secret string) error {
	if err == nil || secret == "" {
		return err
	}
	var se *StatusError
	if errors.As(err, &se) {
		se.Message = strings.ReplaceAll(se.Message, secret, "[REDACTED]")
		se.Body = bytes.ReplaceAll(se.Body, []byte(secret), []byte("[REDACTED]"))
	}
	if !strings.Contains(err.Error(), secret) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), secret, "[REDACTED]"), err: err}
}

// redactedError holds the redacted text only, so that not even %#v shows the
// secret.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
