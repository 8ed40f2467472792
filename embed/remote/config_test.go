package remote_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel/embed/remote"
)

var defaults = remote.Defaults{BatchSize: 32, Concurrency: 2, MaxRetries: 4, Timeout: time.Minute}

// TestSettle: zero fields take the back end's defaults, set ones stay, a
// negative MaxRetries means none, and a missing model or a negative
// dimension is refused with the back end's name first.
func TestSettle(t *testing.T) {
	c, err := remote.Config{Model: "m"}.Settle("b", defaults)
	if err != nil {
		t.Fatal(err)
	}
	if c.BatchSize != 32 || c.Concurrency != 2 || c.MaxRetries != 4 || c.Timeout != time.Minute || c.HTTPClient != http.DefaultClient {
		t.Errorf("defaults: %+v", c)
	}
	own := &http.Client{}
	c, err = remote.Config{Model: "m", BatchSize: 5, Concurrency: 7, MaxRetries: -1, Timeout: time.Second, HTTPClient: own}.Settle("b", defaults)
	if err != nil {
		t.Fatal(err)
	}
	if c.BatchSize != 5 || c.Concurrency != 7 || c.MaxRetries != 0 || c.Timeout != time.Second || c.HTTPClient != own {
		t.Errorf("set fields: %+v", c)
	}
	for _, tc := range []struct {
		c    remote.Config
		want string
	}{
		{remote.Config{Model: " "}, "b: Options.Model is required"},
		{remote.Config{Model: "m", Dimensions: -1}, "b: Options.Dimensions is negative (-1)"},
	} {
		if _, err := tc.c.Settle("b", defaults); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: got %v, want %q", tc.c, err, tc.want)
		}
	}
}

// TestIDAndHeader: the id names what changes vectors and nothing else;
// the header carries the caller's fields, JSON types and the key.
func TestIDAndHeader(t *testing.T) {
	c := remote.Config{Model: "m", APIKey: "k", BatchSize: 3, QueryPrefix: "q: "}
	if got, want := c.ID("h:1/p").Encode(), "base=h%3A1%2Fp&model=m&query=q%3A+"; got != want {
		t.Errorf("id %q, want %q", got, want)
	}
	c.Dimensions, c.PassagePrefix = 8, "p: "
	if got, want := c.ID("h").Encode(), "base=h&dims=8&model=m&passage=p%3A+&query=q%3A+"; got != want {
		t.Errorf("id %q, want %q", got, want)
	}
	c.Header = http.Header{"x-org": {"o"}, "Content-Type": {"text/plain"}}
	h := c.RequestHeader("k")
	if h.Get("X-Org") != "o" || h.Get("Content-Type") != "application/json" || h.Get("Accept") != "application/json" || h.Get("Authorization") != "Bearer k" {
		t.Errorf("header %v", h)
	}
	if h := c.RequestHeader(""); h.Get("Authorization") != "" {
		t.Errorf("no key, header %v", h)
	}
}
