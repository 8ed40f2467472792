package llm

import (
	"context"
	"testing"

	"github.com/ctxsel/ctxsel/llm/llmtest"
)

// Request.JSON reaches both wire formats as their JSON mode, and a request
// without it asks for none.
func TestJSONModeOnBothWires(t *testing.T) {
	srv := llmtest.New(nil)
	defer srv.Close()
	for name, c := range openBoth(t, srv, Options{}) {
		for _, want := range []bool{true, false} {
			n := srv.Requests()
			if _, err := c.Chat(context.Background(), Request{JSON: want, Messages: []Message{{Role: "user", Content: "{}"}}}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := srv.Calls()[n].JSON; got != want {
				t.Fatalf("%s: server saw JSON=%v, sent %v", name, got, want)
			}
		}
	}
}
