package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// signalEmbedder is the child's embedder: it marks its first call in a
// file (so the parent signals once indexing is under way), then embeds
// slowly; stuck, it ignores cancellation, marking that it saw it.
type signalEmbedder struct {
	indextest.HashEmbedder
	marker string
	stuck  bool
}

func (e signalEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if _, err := os.Stat(e.marker); err != nil {
		os.WriteFile(e.marker, nil, 0o644)
	}
	if e.stuck {
		<-ctx.Done()
		os.WriteFile(e.marker+".cancelled", nil, 0o644)
		select {} // a call that never returns: only a second signal ends it
	}
	time.Sleep(50 * time.Millisecond)
	return e.HashEmbedder.Embed(ctx, texts)
}

// TestSignalChild is the child process of TestIndexAddSignal: ctxsel's
// main (its signal handling included) running index add.
func TestSignalChild(t *testing.T) {
	args := os.Getenv("CTXSEL_SIGNAL_ARGS")
	if args == "" {
		t.Skip("child process of TestIndexAddSignal")
	}
	e := signalEmbedder{marker: os.Getenv("CTXSEL_SIGNAL_MARKER"), stuck: os.Getenv("CTXSEL_SIGNAL_STUCK") != ""}
	openEmbedder = func(string, string) (embed.Embedder, func() error, error) {
		return e, func() error { return nil }, nil
	}
	ctx, stop := signalContext()
	defer stop()
	os.Exit(run(ctx, strings.Split(args, "\x1f"), os.Stdin, os.Stdout, os.Stderr))
}

// startSignalChild starts `index add` in a child process and waits until
// it embeds, and until ready (when given) says so.
func startSignalChild(t *testing.T, stuck bool, ready func() bool, args ...string) (*exec.Cmd, *strings.Builder, chan error, string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "embedding")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSignalChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "CTXSEL_SIGNAL_ARGS="+strings.Join(args, "\x1f"), "CTXSEL_SIGNAL_MARKER="+marker, envIndex+"=")
	if stuck {
		cmd.Env = append(cmd.Env, "CTXSEL_SIGNAL_STUCK=1")
	}
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	waitFor(t, marker, done, out)
	for ready != nil && !ready() {
		select {
		case err := <-done:
			t.Fatalf("child exited before it was ready: %v\n%s", err, out)
		case <-time.After(5 * time.Millisecond):
		}
	}
	return cmd, out, done, marker
}

// waitFor waits until path exists, failing if the child exits first.
func waitFor(t *testing.T, path string, done chan error, out *strings.Builder) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case err := <-done:
			t.Fatalf("child exited before %s: %v\n%s", filepath.Base(path), err, out)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// exited waits for the child, failing the test instead of hanging it (a
// guard far beyond what stopping takes, not a timing assertion).
func exited(t *testing.T, cmd *exec.Cmd, done chan error, out *strings.Builder) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatalf("index add did not end on a signal:\n%s", out)
		return nil
	}
}

// TestIndexAddSignal: SIGINT or SIGTERM during index add ends it cleanly:
// it says what it committed, the index is sound with whole documents
// only, its lock is free (another add finishes the work), and a second
// signal ends a command stuck in a call that ignores cancellation.
func TestIndexAddSignal(t *testing.T) {
	if testing.Short() || runtime.GOOS == "windows" {
		t.Skip("spawns child processes and signals them")
	}
	useHashEmbedder(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			root := t.TempDir()
			docs := filepath.Join(root, "docs")
			os.MkdirAll(docs, 0o755)
			const n = 100
			for i := range n {
				text := strings.Repeat(fmt.Sprintf("Document %d talks about topic %d at length. ", i, i), 40)
				os.WriteFile(filepath.Join(docs, fmt.Sprintf("d%02d.txt", i)), []byte(text), 0o644)
			}
			idx := filepath.Join(root, "idx")
			// signalled once its first batch is committed
			committed := func() bool {
				_, o, _ := runCLI(t, "", "index", "stats", "--json", "--index", idx)
				var st struct{ Docs int }
				return json.Unmarshal([]byte(o), &st) == nil && st.Docs > 0
			}
			cmd, out, done, _ := startSignalChild(t, false, committed, "index", "add", "--index", idx, "--chunker", "tokens:size=40,overlap=0", docs)
			cmd.Process.Signal(sig)
			err := exited(t, cmd, done, out)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.String(), "interrupted: ") {
				t.Fatalf("exit %v:\n%s", err, out)
			}
			if code, o, e := runCLI(t, "", "index", "verify", "--index", idx); code != 0 {
				t.Fatalf("verify after %s: %d %s %s", sig, code, o, e)
			}
			// the lock is free and nothing half-written blocks the rest
			code, o, e := runCLI(t, "", "index", "add", "--index", idx, docs)
			if code != 0 || !strings.Contains(o, fmt.Sprintf("index %s: %d documents", idx, n)) {
				t.Fatalf("add after %s: %d %s %s", sig, code, o, e)
			}
			var added int
			if _, err := fmt.Sscanf(o, "%d files: %d documents added", new(int), &added); err != nil || added == 0 || added == n {
				t.Fatalf("the interrupted run kept %d of %d documents, want some (%v): %s", n-added, n, err, o)
			}
		})
	}

	t.Run("second signal", func(t *testing.T) {
		root := t.TempDir()
		docs := filepath.Join(root, "docs")
		os.MkdirAll(docs, 0o755)
		os.WriteFile(filepath.Join(docs, "a.txt"), []byte("A document to embed."), 0o644)
		cmd, out, done, marker := startSignalChild(t, true, nil, "index", "add", "--index", filepath.Join(root, "idx"), docs)
		cmd.Process.Signal(syscall.SIGINT)
		waitFor(t, marker+".cancelled", done, out)
		// again until it ends: the first may still be restoring the default
		var err error
		guard := time.After(2 * time.Minute)
		for ended := false; !ended; {
			cmd.Process.Signal(syscall.SIGINT)
			select {
			case err = <-done:
				ended = true
			case <-time.After(50 * time.Millisecond):
			case <-guard:
				cmd.Process.Kill()
				t.Fatalf("a second signal did not end index add:\n%s", out)
			}
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("exit %v:\n%s", err, out)
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
			t.Fatalf("not ended by the second signal: %v\n%s", err, out)
		}
	})
}
