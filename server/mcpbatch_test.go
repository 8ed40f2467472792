package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// postMCP posts body to /mcp as a 2025-03-26 client does (batches allowed)
// and decodes the reply's JSON array.
func postMCP(t *testing.T, s *Server, body string) (int, []rpcReply) {
	t.Helper()
	ts := httptest.NewServer(s.Handler()) // over a real connection
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var replies []rpcReply
	if res.StatusCode != http.StatusAccepted {
		if err := json.Unmarshal(b, &replies); err != nil {
			t.Fatalf("%d: not a JSON array of replies: %v: %.500s", res.StatusCode, err, b)
		}
	}
	return res.StatusCode, replies
}

type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func searchCall(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"query":"q"}}}`, id)
}

const initializedNote = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// TestMCPBatchBounded: a batch over maxBatch messages runs nothing and
// answers every id with an error; one within it runs each call once and
// answers each id, notifications getting no reply.
func TestMCPBatchBounded(t *testing.T) {
	var calls atomic.Int32
	s := newTestServer(t, nil, Options{MCP: true, Asker: countingAsker{&calls}})
	var big []string
	for i := range maxBatch + 1 {
		big = append(big, searchCall(i+1))
	}
	code, replies := postMCP(t, s, "["+strings.Join(big, ",")+"]")
	if code != http.StatusBadRequest || len(replies) != maxBatch+1 || calls.Load() != 0 {
		t.Fatalf("a batch of %d: %d, %d replies, %d calls ran", maxBatch+1, code, len(replies), calls.Load())
	}
	for i, r := range replies {
		if string(r.ID) != fmt.Sprint(i+1) || r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "over the limit") {
			t.Fatalf("reply %d: %+v", i, r)
		}
	}

	code, replies = postMCP(t, s, "["+searchCall(1)+","+initializedNote+","+searchCall(2)+`,{"jsonrpc":"2.0","id":"three","method":"ping"}]`)
	if code != http.StatusOK || len(replies) != 3 || calls.Load() != 2 {
		t.Fatalf("a batch of 3 calls and a notification: %d, %d replies, %d calls ran", code, len(replies), calls.Load())
	}
	for i, want := range []string{"1", "2", `"three"`} {
		if string(replies[i].ID) != want || replies[i].Result == nil || replies[i].Result.IsError {
			t.Fatalf("reply %d: %+v", i, replies[i])
		}
	}

	if code, replies := postMCP(t, s, "["+initializedNote+"]"); code != http.StatusAccepted || len(replies) != 0 {
		t.Fatalf("a batch of notifications: %d %v", code, replies)
	}
}

// TestMCPBatchDeadline: past the request's deadline every id of a batch is
// still answered, the calls it cut with a JSON-RPC error saying so (the
// SDK dropped them, with HTTP 200).
func TestMCPBatchDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := newTestServer(t, func(c *Config) { c.RequestTimeout = Duration(200 * time.Millisecond) }, Options{MCP: true, Asker: stuckAsker{release}})
	var batch []string
	for i := range 5 {
		batch = append(batch, searchCall(i+1))
	}
	code, replies := postMCP(t, s, "["+strings.Join(batch, ",")+"]")
	if code != http.StatusOK || len(replies) != 5 {
		t.Fatalf("%d, %d replies to 5 calls", code, len(replies))
	}
	cut := 0
	for i, r := range replies {
		if string(r.ID) != fmt.Sprint(i+1) {
			t.Fatalf("reply %d has id %s", i, r.ID)
		}
		switch {
		case r.Error != nil && r.Error.Code == codeCut && strings.Contains(r.Error.Message, "request_timeout"):
			cut++
		case r.Result != nil && r.Result.IsError: // the first call's own deadline
		default:
			t.Fatalf("reply %d: %+v", i, r)
		}
	}
	if cut < 4 {
		t.Fatalf("%d calls cut by the deadline, want at least the 4 after the stuck one", cut)
	}
}
