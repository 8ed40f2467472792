package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBodyBudgetAcrossRequests: sixteen chunked uploads at once, each
// endless, over real loopback connections. Each request is cut at
// max_body_bytes (413) and, together, they never hold more than
// max_inflight_body_bytes: the requests the budget cannot take get 503 at
// once. The bound is asserted on the server's own accounting of the buffers
// it allocated, not on RSS.
func TestBodyBudgetAcrossRequests(t *testing.T) {
	const (
		clients  = 16
		maxBody  = 1 << 20
		budget   = 4 << 20
		stallAt  = 600 << 10 // each client sends this much, then waits
		chunkLen = 32 << 10
	)
	s := newTestServer(t, func(c *Config) {
		c.MaxBodyBytes, c.MaxInflightBodyBytes = maxBody, budget
		c.ReadTimeout = Duration(time.Minute)
	}, Options{})
	addr, _ := serveOn(t, s)

	release := make(chan struct{})
	var got503 atomic.Int64
	statuses := make([]int, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v1/select HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
			answered := make(chan struct{})
			go func() { // the endless body
				chunk := append(fmt.Appendf(nil, "%x\r\n", chunkLen), append(bytes.Repeat([]byte{' '}, chunkLen), "\r\n"...)...)
				for sent := 0; ; sent += chunkLen {
					if sent >= stallAt {
						select {
						case <-release:
						case <-answered:
							return
						}
					}
					if _, err := conn.Write(chunk); err != nil {
						return
					}
				}
			}()
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			close(answered)
			if err != nil {
				t.Error(err)
				return
			}
			res.Body.Close()
			statuses[i] = res.StatusCode
			if res.StatusCode == http.StatusServiceUnavailable {
				got503.Add(1)
			}
		}()
	}
	// At most budget/stallAt requests can hold what they were sent; every
	// other one must have been refused while those wait.
	for deadline := time.Now().Add(time.Minute); got503.Load() < clients-budget/stallAt; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d requests refused while the budget was full (peak %d used %d)", got503.Load(), clients, s.bodies.peak.Load(), s.bodies.used.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	wg.Wait()

	n413 := 0
	for i, st := range statuses {
		switch st {
		case http.StatusRequestEntityTooLarge:
			n413++
		case http.StatusServiceUnavailable:
		default:
			t.Errorf("client %d: status %d, want 413 or 503", i, st)
		}
	}
	if n413 == 0 {
		t.Error("no request was read up to max_body_bytes")
	}
	if peak := s.bodies.peak.Load(); peak > budget || peak < maxBody {
		t.Errorf("bodies held at most %d bytes together, want between %d and the budget %d", peak, maxBody, budget)
	}
	// Everything reserved is given back once the handlers return.
	for deadline := time.Now().Add(10 * time.Second); s.bodies.used.Load() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still reserved after every request ended", s.bodies.used.Load())
		}
	}
}

func TestConfigInflightBudgetAtLeastBody(t *testing.T) {
	c := DefaultConfig()
	c.MaxInflightBodyBytes = c.MaxBodyBytes - 1
	if err := c.Validate(); err == nil {
		t.Fatal("a budget below max_body_bytes was accepted")
	}
}
