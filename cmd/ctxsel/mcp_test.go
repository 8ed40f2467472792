package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// The repro through the command: initialize, a line that is not
// JSON, ping. ctxsel mcp used to exit 1 at the second line without
// answering; it must answer all three and exit 0 at the end of input.
func TestMCPStdioSurvivesMalformedFrame(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
not json
{"jsonrpc":"2.0","id":2,"method":"ping"}
`
	code, out, errs := runCLI(t, in, "mcp", "--embedder", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line %q: %v", line, err)
		}
		status := "ok"
		if m.Error != nil {
			status = fmt.Sprintf("error %d", m.Error.Code)
		}
		got[string(m.ID)] = status
	}
	want := map[string]string{"1": "ok", "null": "error -32700", "2": "ok"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("id %s: %q, want %q (output %s)", id, got[id], w, out)
		}
	}
	if !strings.Contains(errs, "malformed input frame") {
		t.Errorf("the bad frame is not noted on stderr: %s", errs)
	}
}

// TestMCPIndexErrorNamesMCP: a bad --index is reported as mcp's, not
// serve's, whose code opens it.
func TestMCPIndexErrorNamesMCP(t *testing.T) {
	code, _, errs := runCLI(t, "", "mcp", "--index", filepath.Join(t.TempDir(), "nonexistent"))
	if code == 0 || !strings.Contains(errs, "mcp --index: ") || strings.Contains(errs, "serve") {
		t.Errorf("exit %d: %s", code, errs)
	}
}
