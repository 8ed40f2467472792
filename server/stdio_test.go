package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	stdioInit        = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	stdioInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

func stdioPing(id int) string { return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id) }

// stdioReply is one line the server wrote.
type stdioReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// serveStdio runs a session over the given input to its end and returns
// every line written, each checked to be one JSON-RPC message.
func serveStdio(t testing.TB, s *Server, input string) []stdioReply {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.ServeStdio(ctx, strings.NewReader(input), &out); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	var replies []stdioReply
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var r stdioReply
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.JSONRPC != "2.0" {
			t.Fatalf("output line is not a JSON-RPC message (%v): %.200s", err, line)
		}
		replies = append(replies, r)
	}
	return replies
}

func (r stdioReply) String() string {
	if r.Error != nil {
		return fmt.Sprintf("{id %s error %d %q}", r.ID, r.Error.Code, r.Error.Message)
	}
	return fmt.Sprintf("{id %s result %.120s}", r.ID, r.Result)
}

func replyTo(replies []stdioReply, id string) []stdioReply {
	var out []stdioReply
	for _, r := range replies {
		if string(r.ID) == id {
			out = append(out, r)
		}
	}
	return out
}

// The repro: initialize, a line that is not JSON, ping. The SDK's
// own transport ended the session at the second line; the ping must be
// answered and the bad line get a parse error.
func TestStdioKeepsServingAfterMalformedFrame(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	replies := serveStdio(t, s, stdioInit+"\nnot json\n"+stdioPing(2)+"\n")
	if r := replyTo(replies, "1"); len(r) != 1 || r[0].Error != nil || !strings.Contains(string(r[0].Result), "protocolVersion") {
		t.Errorf("initialize: %+v", r)
	}
	if r := replyTo(replies, "2"); len(r) != 1 || r[0].Error != nil {
		t.Errorf("ping after a malformed frame: %+v (all: %+v)", r, replies)
	}
	if r := replyTo(replies, "null"); len(r) != 1 || r[0].Error == nil || r[0].Error.Code != -32700 {
		t.Errorf("not json: want one -32700 with id null, got %+v", r)
	}
}

// Each malformed frame of the reliability run, between valid calls: the
// reply the spec defines (or none), and the session goes on.
func TestStdioMalformedFrames(t *testing.T) {
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	cases := []struct {
		name  string
		frame string
		id    string // the id the error reply carries; "" for no reply
		code  int
	}{
		{"not json", `not json`, "null", -32700},
		{"truncated", `{"jsonrpc":"2.0","id":7,"method":"ping"`, "null", -32700},
		{"empty object", `{}`, "null", -32600},
		{"batch", `[` + stdioPing(8) + `]`, "null", -32600},
		{"empty batch", `[]`, "null", -32600},
		{"scalar", `42`, "null", -32600},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, "null", -32600},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, "null", -32600},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, "null", -32600},
		{"huge id", `{"jsonrpc":"2.0","id":1e300,"method":"ping"}`, "null", -32600},
		{"no jsonrpc", `{"id":9,"method":"ping"}`, "9", -32600},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":"s","method":"ping"}`, `"s"`, -32600},
		{"numeric method", `{"jsonrpc":"2.0","id":10,"method":5}`, "10", -32600},
		{"no method", `{"jsonrpc":"2.0","id":11}`, "11", -32600},
		{"scalar params", `{"jsonrpc":"2.0","id":12,"method":"ping","params":5}`, "12", -32600},
		{"too deep", `{"jsonrpc":"2.0","id":13,"method":"ping","params":{"a":` + deep + `}}`, "null", -32600},
		{"unknown method", `{"jsonrpc":"2.0","id":14,"method":"nope"}`, "14", -32601},
		{"stray response", `{"jsonrpc":"2.0","id":15,"result":{}}`, "", 0},
		{"bad response", `{"jsonrpc":"2.0","id":16,"result":{},"error":{"code":1,"message":"x"}}`, "", 0},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/nope"}`, "", 0},
		{"blank", `   `, "", 0},
	}
	s := newTestServer(t, nil, Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			replies := serveStdio(t, s, stdioInit+"\n"+stdioInitialized+"\n"+c.frame+"\n"+stdioPing(100)+"\n")
			if r := replyTo(replies, "100"); len(r) != 1 || r[0].Error != nil {
				t.Fatalf("ping after the frame: %+v (all %+v)", r, replies)
			}
			var others []stdioReply
			for _, r := range replies {
				if id := string(r.ID); id != "1" && id != "100" {
					others = append(others, r)
				}
			}
			if c.id == "" {
				if len(others) != 0 {
					t.Fatalf("want no reply, got %+v", others)
				}
				return
			}
			if len(others) != 1 || string(others[0].ID) != c.id || others[0].Error == nil || others[0].Error.Code != c.code {
				t.Fatalf("want one error %d with id %s, got %+v", c.code, c.id, others)
			}
		})
	}
}

func TestStdioFrameOverBodyLimit(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MaxBodyBytes = 1024; c.MaxInflightBodyBytes = 1024 }, Options{})
	big := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", 200_000) + `"}}`
	replies := serveStdio(t, s, stdioInit+"\n"+big+"\n"+stdioPing(4)+"\n")
	if r := replyTo(replies, "null"); len(r) != 1 || r[0].Error.Code != -32600 || !strings.Contains(r[0].Error.Message, "1024") {
		t.Errorf("over-long frame: %+v", r)
	}
	if r := replyTo(replies, "4"); len(r) != 1 || r[0].Error != nil {
		t.Errorf("ping after an over-long frame: %+v", r)
	}
	if r := replyTo(replies, "3"); len(r) != 0 {
		t.Errorf("the over-long call was served: %+v", r)
	}
}

// The end of input does not drop the replies still owed: a tool call in
// flight when stdin closes is answered before the session ends.
func TestStdioAnswersPendingCallsAtEndOfInput(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	asker := askerFunc(func(ctx context.Context, req AskRequest) (AskResponse, error) {
		once.Do(func() { time.AfterFunc(50*time.Millisecond, func() { close(release) }) })
		<-release
		return fakeAsker{}.Ask(ctx, req)
	})
	s := newTestServer(t, nil, Options{Asker: asker})
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","arguments":{"query":"what?","strategy":"topk:k=1"}}}`
	replies := serveStdio(t, s, stdioInit+"\n"+stdioInitialized+"\n"+call+"\n")
	r := replyTo(replies, "5")
	if len(r) != 1 || r[0].Error != nil || !strings.Contains(string(r[0].Result), `42`) {
		t.Fatalf("the call in flight at end of input: %+v", r)
	}
}

// A duplicate id of a call in flight is dropped (its reply would be
// indistinguishable), not answered twice and not fatal.
func TestStdioDuplicateIDInFlight(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	asker := askerFunc(func(ctx context.Context, req AskRequest) (AskResponse, error) {
		once.Do(func() { time.AfterFunc(100*time.Millisecond, func() { close(release) }) })
		<-release
		return fakeAsker{}.Ask(ctx, req)
	})
	s := newTestServer(t, nil, Options{Asker: asker})
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask","arguments":{"query":"what?"}}}`
	replies := serveStdio(t, s, stdioInit+"\n"+stdioInitialized+"\n"+call+"\n"+call+"\n"+stdioPing(6)+"\n")
	if r := replyTo(replies, "5"); len(r) != 1 {
		t.Errorf("id 5 answered %d times: %+v", len(r), r)
	}
	if r := replyTo(replies, "6"); len(r) != 1 {
		t.Errorf("ping: %+v", r)
	}
}

// FuzzStdioFrames feeds arbitrary lines between valid calls: the session
// never ends early, every output line is one JSON-RPC message, and the
// calls around the garbage are answered exactly once.
func FuzzStdioFrames(f *testing.F) {
	for _, seed := range []string{
		"not json", "{}", "[]", "[1,2]", `{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":900,"method":5}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":901}}`,
		`{"jsonrpc":"2.0","id":902,"method":"tools/call","params":{"name":"select_context","arguments":{"candidates":[{"id":"a","score":1}]}}}`,
		`{"jsonrpc":"2.0","id":903,"method":"tools/call","params":{"name":"search","arguments":{"query":"\xff"}}}`,
		"\x00\xff\xfe", strings.Repeat("{", 2000), `{"jsonrpc":"2.0","id":904,"result":null}`, "\r\n\r\n",
		`{"jsonrpc":"2.0","id":905,"method":"initialize","params":{}}`,
	} {
		f.Add(seed)
	}
	s := newTestServer(f, nil, Options{Asker: fakeAsker{}, Embedder: fakeEmbedder{}})
	f.Fuzz(func(t *testing.T, garbage string) {
		input := stdioInit + "\n" + stdioInitialized + "\n" + garbage + "\n" + stdioPing(7001) + "\n" + garbage + "\n" + stdioPing(7002) + "\n"
		replies := serveStdio(t, s, input)
		for _, id := range []string{"1", "7001", "7002"} {
			if !strings.Contains(garbage, id) { // the garbage may reuse the id
				if r := replyTo(replies, id); len(r) != 1 || r[0].Error != nil {
					t.Fatalf("call %s: %+v", id, r)
				}
			}
		}
		for _, r := range replies {
			if r.Error != nil && r.Error.Message == "" {
				t.Fatalf("error reply without a message: %+v", r)
			}
		}
	})
}

// A call before initialize gets a JSON-RPC error code (the SDK's plain
// error went out as code 0), and the session then initializes normally.
func TestStdioCallBeforeInitialize(t *testing.T) {
	s := newTestServer(t, nil, Options{})
	replies := serveStdio(t, s, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n"+stdioInit+"\n"+stdioInitialized+"\n"+`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`+"\n")
	early := replyTo(replies, "2")
	if len(early) != 1 || early[0].Error == nil || early[0].Error.Code != codeNotInitialized || !strings.Contains(early[0].Error.Message, "initialize") {
		t.Fatalf("tools/list before initialize: %+v", early)
	}
	if late := replyTo(replies, "3"); len(late) != 1 || late[0].Error != nil {
		t.Fatalf("tools/list after initialize: %+v", late)
	}
}
