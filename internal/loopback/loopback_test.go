package loopback

import (
	"net"
	"testing"
)

// TestUp: after Up, the loopback interface is up and takes a listener.
func TestUp(t *testing.T) {
	if err := Up(); err != nil {
		t.Logf("Up: %v (best-effort: not allowed here)", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("loopback after Up: %v", err)
	}
	l.Close()
}
