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

// TestIdleBodiesHoldNoBudget: 64 connections that each announce a 16 MB
// body and send one byte hold 4 KB each, not what they announced: a POST
// beside them is served and /readyz says ready. (Charged by the announced
// length, they held the whole 64 MiB budget and every POST got 503.)
func TestIdleBodiesHoldNoBudget(t *testing.T) {
	const idle = 64
	s := newTestServer(t, nil, Options{})
	addr, _ := serveOn(t, s)
	for range idle {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /v1/select HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", 16<<20)
	}
	for deadline := time.Now().Add(20 * time.Second); s.bodies.used.Load() < idle*4096; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the idle bodies reserved %d bytes, want %d", s.bodies.used.Load(), idle*4096)
		}
	}
	if used := s.bodies.used.Load(); used > idle*4096 {
		t.Fatalf("%d idle bodies of one byte hold %d bytes of the budget", idle, used)
	}
	res, err := post("http://"+addr+"/v1/select", readmeExample)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("a POST beside %d idle bodies: %d", idle, res.StatusCode)
	}
	res, err = http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/readyz beside %d idle bodies: %d", idle, res.StatusCode)
	}
}

// TestClientShareOfBodyBudget: one client (127.0.0.2) sending twelve
// bodies slowly holds at most its share (half the budget); the thirteenth
// and later get 503, and another client (127.0.0.1) is served, and told by
// /readyz that the server is ready. When the budget itself runs out,
// /readyz says 503.
func TestClientShareOfBodyBudget(t *testing.T) {
	const (
		maxBody = 1 << 20
		budget  = 8 << 20
		sent    = 700 << 10 // each slow body stops here: about 1 MB reserved
	)
	s := newTestServer(t, func(c *Config) { c.MaxBodyBytes, c.MaxInflightBodyBytes = maxBody, budget }, Options{})
	addr, _ := serveOn(t, s)
	share := clientShare(budget, maxBody)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	var refused atomic.Int64
	var wg sync.WaitGroup
	for range 12 {
		conn, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dialing from 127.0.0.2: %v", err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /v1/select HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", maxBody)
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn.Write(bytes.Repeat([]byte{' '}, sent))
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			if res, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
				res.Body.Close()
				if res.StatusCode == http.StatusServiceUnavailable {
					refused.Add(1)
				}
			}
		}()
	}
	// Twelve bodies of about 1 MB would fill the 8 MB budget: the share
	// stops the client at about 4.
	for deadline := time.Now().Add(20 * time.Second); refused.Load() < 12-share/sent; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 12 slow bodies refused; the client holds %d bytes", refused.Load(), s.bodies.used.Load())
		}
	}
	if used := s.bodies.used.Load(); used > share {
		t.Fatalf("one client's slow bodies hold %d bytes, over its share %d", used, share)
	}
	res, err := post("http://"+addr+"/v1/select", readmeExample)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("another client beside the slow one: %d", res.StatusCode)
	}
	res, err = http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/readyz with half the budget free: %d", res.StatusCode)
	}
	// The budget itself exhausted: /readyz says so.
	rest := s.bodies.free()
	s.bodies.take(rest)
	defer s.bodies.give(rest)
	res, err = http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("/readyz with the body budget spent: %d", res.StatusCode)
	}
}
