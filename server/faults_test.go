package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// serveOn runs s.Serve on a fresh loopback listener with the server's own
// timeouts (httptest.Server would not apply them) and returns its address
// and a func that cancels it and returns what Serve returned.
func serveOn(t *testing.T, s *Server) (addr string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, ln) }()
	var once sync.Once
	var serr error
	stop = func() error {
		once.Do(func() { cancel(); serr = <-errc })
		return serr
	}
	t.Cleanup(func() { _ = stop() })
	return ln.Addr().String(), stop
}

func post(url, body string) (*http.Response, error) {
	return http.Post(url, "application/json", strings.NewReader(body))
}

// TestConcurrentRequests runs many different selections at once (under
// -race in CI) and checks each answer against the same request sent alone.
func TestConcurrentRequests(t *testing.T) {
	const workers, each = 32, 25
	// Every worker may be embedding at once; the default queue (4096
	// texts) holds them all, which keeps the embedder's 503 (tested on its
	// own) out of this comparison.
	s := newTestServer(t, nil, Options{Embedder: fakeEmbedder{}})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	bodies := []string{
		readmeExample,
		`{"strategy":"topk:k=2","order":"edges","candidates":[{"id":"a","score":1},{"id":"b","score":2},{"id":"c","score":3}]}`,
		`{"query_vector":[1,0],"strategy":"knee","candidates":[{"id":"a","vector":[1,0]},{"id":"b","vector":[1,1]},{"id":"c","vector":[0,1]},{"id":"d","vector":[-1,1]}]}`,
		`{"query":"aab","candidates":[{"id":"a","text":"ab"},{"id":"b","text":"zz"},{"id":"c","text":"aaa"}]}`,
		`{"candidates":[{"id":"a","score":1},{"id":"a","score":2}]}`, // 400
	}
	want := make([]string, len(bodies))
	for i, b := range bodies {
		want[i] = call(t, s, "POST", "/v1/select", b).Body.String()
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				i := (w + j) % len(bodies)
				res, err := post(ts.URL+"/v1/select", bodies[i])
				if err != nil {
					errs <- err
					return
				}
				got, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if string(got) != want[i] {
					errs <- fmt.Errorf("body %d: got %s want %s", i, got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rec := call(t, s, "GET", "/metrics", "")
	total := 5 + workers*each
	if !strings.Contains(rec.Body.String(), fmt.Sprintf(`ctxsel_http_request_duration_seconds_count{route="/v1/select"} %d`, total)) {
		t.Errorf("metrics did not count %d requests:\n%s", total, rec.Body)
	}
}

// TestSlowloris sends headers one byte at a time; ReadHeaderTimeout must cut
// the connection off while the client is still sending.
func TestSlowloris(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.ReadHeaderTimeout = Duration(300 * time.Millisecond) }, Options{})
	addr, _ := serveOn(t, s)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stopWriting := make(chan struct{})
	defer close(stopWriting)
	wrote := make(chan int, 1)
	go func() {
		// An endless header, 20 bytes a second: without the timeout this
		// would hold the connection for as long as the client likes.
		head := "POST /v1/select HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + strings.Repeat("a", 1<<16)
		n := 0
		defer func() { wrote <- n }()
		for i := range len(head) {
			select {
			case <-stopWriting:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{head[i]}); err != nil {
				return
			}
			n++
		}
	}()
	// The server closes the connection (possibly after a 4xx); a generous
	// deadline only keeps a broken server from hanging the test.
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	data, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the slow connection open (read %q)", data)
	}
	if len(data) > 0 && !strings.HasPrefix(string(data), "HTTP/1.1 4") {
		t.Fatalf("unexpected response to a slow header: %q", data)
	}
	select {
	case n := <-wrote:
		t.Fatalf("the writer stopped by itself after %d bytes", n)
	default:
	}
}

// TestSlowBody sends the headers at once and the body slowly, over a real
// loopback connection: ReadTimeout ends the request with 408 and a message
// free of socket addresses.
func TestSlowBody(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.ReadTimeout = Duration(400 * time.Millisecond) }, Options{})
	addr, _ := serveOn(t, s)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := readmeExample
	fmt.Fprintf(conn, "POST /v1/select HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	done := make(chan struct{})
	defer close(done)
	go func() {
		for i := range len(body) {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err == nil {
		defer res.Body.Close()
		msg, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusRequestTimeout {
			t.Fatalf("status %d for a body sent too slowly: %s", res.StatusCode, msg)
		}
		// net's error names both ends of the socket; the client gets none.
		for _, leak := range []string{"127.0.0.1", "->", "i/o timeout", "tcp"} {
			if strings.Contains(string(msg), leak) {
				t.Fatalf("the 408 message leaks %q: %s", leak, msg)
			}
		}
		if !strings.Contains(string(msg), "read_timeout") {
			t.Fatalf("the 408 message does not say which limit: %s", msg)
		}
		return
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept waiting for the slow body")
	}
}

// countingBody counts what the handler reads of a request body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func TestOversizedBody(t *testing.T) {
	const limit = 4096
	s := newTestServer(t, func(c *Config) { c.MaxBodyBytes = limit }, Options{})
	var read atomic.Int64
	s.hook = func(r *http.Request) { r.Body = countingBody{r.Body, &read} }
	addr, _ := serveOn(t, s)

	// A declared length over the limit: 413 without sending a byte of body.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/select HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 1<<30)
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(msg), "over the limit") {
		t.Fatalf("declared 1 GiB: %d %s", res.StatusCode, msg)
	}
	if read.Load() != 0 {
		t.Fatalf("read %d bytes of a body refused by its length", read.Load())
	}

	// A chunked body with no length: cut off at the limit.
	pr, pw := io.Pipe()
	go func() {
		chunk := []byte(`{"candidates":[` + strings.Repeat(" ", 1000))
		for i := 0; i < 1<<16; i++ { // 64 MB offered
			if _, err := pw.Write(chunk); err != nil {
				return
			}
			chunk = []byte(strings.Repeat(" ", 1024))
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/select", pr)
	req.Header.Set("Content-Type", "application/json")
	res, err = http.DefaultClient.Do(req)
	pr.CloseWithError(errors.New("test done"))
	if err != nil {
		t.Fatalf("chunked: %v", err)
	}
	msg, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: %d %s", res.StatusCode, msg)
	}
	if n := read.Load(); n > limit+1 {
		t.Fatalf("the handler read %d bytes with a limit of %d", n, limit)
	}
}

func TestPanicRecovery(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	s.hook = func(r *http.Request) {
		if r.Header.Get("X-Test-Panic") != "" {
			panic("forced by the test")
		}
	}
	addr, _ := serveOn(t, s)
	url := "http://" + addr + "/v1/select"
	req, _ := http.NewRequest("POST", url, strings.NewReader(readmeExample))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Test-Panic", "1")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var e errResp
	if res.StatusCode != http.StatusInternalServerError || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error.Message, "internal error") {
		t.Fatalf("panic: %d %s", res.StatusCode, body)
	}
	if strings.Contains(string(body), "forced by the test") {
		t.Fatalf("the panic value leaked to the client: %s", body)
	}
	// The server keeps serving.
	for range 3 {
		res, err := post(url, readmeExample)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("after the panic: %d", res.StatusCode)
		}
	}
	if m := call(t, s, "GET", "/metrics", "").Body.String(); !strings.Contains(m, `ctxsel_http_requests_total{route="/v1/select",code="500"} 1`) {
		t.Errorf("the 500 was not counted:\n%s", m)
	}
}

// TestGracefulShutdown cancels the server's context while a request is in
// flight: Serve waits for it, the client gets its 200, readiness drops and
// new connections are refused.
func TestGracefulShutdown(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	entered, release := make(chan struct{}), make(chan struct{})
	s.hook = func(r *http.Request) {
		if r.URL.Path == "/v1/select" {
			close(entered)
			<-release
		}
	}
	addr, stop := serveOn(t, s)
	type result struct {
		code int
		body string
		err  error
	}
	got := make(chan result, 1)
	go func() {
		res, err := post("http://"+addr+"/v1/select", readmeExample)
		if err != nil {
			got <- result{err: err}
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		got <- result{code: res.StatusCode, body: string(b)}
	}()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	// Shutdown has begun when readiness drops.
	for s.ready.Load() {
		time.Sleep(5 * time.Millisecond)
	}
	if rec := call(t, s, "GET", "/readyz", ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("readyz while shutting down: %d", rec.Code)
	}
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned with a request in flight: %v", err)
	default:
	}
	close(release)
	r := <-got
	if r.err != nil || r.code != http.StatusOK || !strings.Contains(r.body, `"ids":["d1","d2"]`) {
		t.Fatalf("in-flight request: %+v", r)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("still accepting connections after shutdown")
	}
}

func TestShutdownTimeout(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.ShutdownTimeout = Duration(100 * time.Millisecond) }, Options{})
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	s.hook = func(r *http.Request) {
		if r.URL.Path == "/v1/select" {
			close(entered)
			<-release
		}
	}
	addr, stop := serveOn(t, s)
	go func() {
		if res, err := post("http://"+addr+"/v1/select", readmeExample); err == nil {
			res.Body.Close()
		}
	}()
	<-entered
	if err := stop(); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Serve with a stuck request: %v", err)
	}
}
