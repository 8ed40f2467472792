package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Issue 27's ingestion cases: what index add reads (symlinks to a device
// and a FIFO, a 4 GiB sparse file, a small .jsonl.gz holding 1 GiB), a
// signal during index add, a full disk under the embedding cache, and a
// 300 MB line to select. Each must end in a note or a status, in bounded
// time and memory (maxMemory for the file cases), with the good files
// beside the bad ones indexed.

const (
	maxMemory  = 1 << 30          // bytes of resident memory a file case may take
	caseLimit  = 90 * time.Second // a case that runs longer hung
	stopWithin = 10 * time.Second // from a signal to the process's end
)

// ctxselRun is one ctxsel run with its exit code, output and peak memory.
type ctxselRun struct {
	code   int
	out    string
	maxRSS int64 // bytes
	hung   bool
}

// cliRun runs ctxsel with stdin (nil: none) and env added, killing it past
// caseLimit.
func (p *probe) cliRun(ctx context.Context, stdin io.Reader, env []string, args ...string) ctxselRun {
	ctx, cancel := context.WithTimeout(ctx, caseLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.bin, args...)
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	r := ctxselRun{code: exitCode(err), out: out.String(), hung: ctx.Err() != nil}
	if cmd.ProcessState != nil {
		r.maxRSS = maxRSS(cmd.ProcessState)
	}
	return r
}

// checkSkip records a finding when a file case hung, took too much memory, or
// did not exit 3 with a note naming the file's reason.
func (p *probe) checkSkip(name string, r ctxselRun, note string) {
	switch {
	case r.hung:
		p.fail("index add %s: still running after %s", name, caseLimit)
	case r.maxRSS > maxMemory:
		p.fail("index add %s: %d MB of memory", name, r.maxRSS>>20)
	case r.code != 3 || !strings.Contains(r.out, note):
		p.fail("index add %s: exit %d without the note %q: %s", name, r.code, note, short(r.out))
	}
}

// indexedDocs is how many documents the index at idx holds, or -1.
func (p *probe) indexedDocs(ctx context.Context, idx string) int {
	out, err := p.cli(ctx, "", "index", "stats", "--json", "--index", idx)
	var st struct {
		Docs int `json:"docs"`
	}
	if err != nil || json.Unmarshal([]byte(out), &st) != nil {
		return -1
	}
	return st.Docs
}

// gzipBomb writes a .jsonl.gz of about 1 MB holding 1 GiB of zeros: one
// gzip member of 1 MiB repeated (a multi-member file is one stream).
func gzipBomb(path string) error {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	return os.WriteFile(path, bytes.Repeat(member.Bytes(), 1<<10), 0o644)
}

func (p *probe) ingest(ctx context.Context) {
	root := filepath.Join(p.dir, "ingest")
	good := map[string]string{
		"alpha.txt": "Alpha is the first letter of the Greek alphabet.",
		"omega.md":  "Omega is the last letter of the Greek alphabet.",
	}
	type fileCase struct {
		name, note string
		make       func(path string) error
	}
	cases := []fileCase{
		{"zero.txt", "a symlink to a character device, not a regular file", func(path string) error { return os.Symlink("/dev/zero", path) }},
		{"fifo.txt", "a symlink to a named pipe (FIFO), not a regular file", func(path string) error {
			if err := mkfifo(path + ".pipe"); err != nil {
				return err
			}
			return os.Symlink(path+".pipe", path)
		}},
		{"sparse.txt", "over the per-file limit", func(path string) error {
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(4 << 30)
		}},
		{"bomb.jsonl.gz", "decompresses to more than", gzipBomb},
	}
	for i, c := range cases {
		p.count("ingest")
		docs := filepath.Join(root, fmt.Sprint("files", i))
		os.MkdirAll(docs, 0o755)
		for name, text := range good {
			os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644)
		}
		if err := c.make(filepath.Join(docs, c.name)); err != nil {
			p.fail("ingest %s: cannot make the case: %v", c.name, err)
			continue
		}
		idx := filepath.Join(root, fmt.Sprint("idx", i))
		p.checkSkip(c.name, p.cliRun(ctx, nil, nil, "index", "add", "--index", idx, docs), c.note)
		if n := p.indexedDocs(ctx, idx); n != len(good) {
			p.fail("index add %s: %d documents indexed beside it, want %d", c.name, n, len(good))
		}
	}
	p.signalDuringAdd(ctx, root)
	p.fullCacheDisk(ctx, root)
	p.longSelectLine(ctx)
}

// corpus writes n documents, long enough that embedding them takes a while.
func corpus(dir string, n int) {
	os.MkdirAll(dir, 0o755)
	for i := range n {
		text := strings.Repeat(fmt.Sprintf("Document %d discusses volcano %d, its lava and its ash clouds. ", i, i), 60)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("d%03d.txt", i)), []byte(text), 0o644)
	}
}

// signalDuringAdd sends SIGINT, then SIGTERM to another run, once index
// add has committed: it must end promptly, saying so, with a sound index
// that a second run completes.
func (p *probe) signalDuringAdd(ctx context.Context, root string) {
	docs := filepath.Join(root, "signal-docs")
	const n = 120
	corpus(docs, n)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		p.count("ingest")
		idx := filepath.Join(root, "signal-idx-"+sig.String())
		cmd := exec.CommandContext(ctx, p.bin, "index", "add", "--index", idx, "--chunker", "tokens:size=60,overlap=0", docs)
		cmd.Env = append(os.Environ(), "CTXSEL_EMBED_CACHE=off")
		var out syncBuf
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			p.fail("signal %s: %v", sig, err)
			continue
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		ended := false
		for deadline := time.Now().Add(caseLimit); !ended && time.Now().Before(deadline); {
			if p.indexedDocs(ctx, idx) > 0 {
				break
			}
			select {
			case err = <-done:
				ended = true
			case <-time.After(20 * time.Millisecond):
			}
		}
		if ended {
			p.fail("signal %s: index add ended before its first commit: %v %s", sig, err, short(out.String()))
			continue
		}
		cmd.Process.Signal(sig)
		select {
		case err = <-done:
		case <-time.After(stopWithin):
			cmd.Process.Kill()
			<-done
			p.fail("signal %s: index add still running %s after the signal", sig, stopWithin)
			continue
		}
		if exitCode(err) != 1 || !strings.Contains(out.String(), "interrupted: ") {
			p.fail("signal %s: exit %d: %s", sig, exitCode(err), short(out.String()))
		}
		if o, err := p.cli(ctx, "", "index", "verify", "--index", idx); err != nil {
			p.fail("signal %s: verify after: %v %s", sig, err, short(o))
		}
		r := p.cliRun(ctx, nil, []string{"CTXSEL_EMBED_CACHE=off"}, "index", "add", "--index", idx, docs)
		if r.code != 0 || p.indexedDocs(ctx, idx) != n {
			p.fail("signal %s: the next add: exit %d, %d documents: %s", sig, r.code, p.indexedDocs(ctx, idx), short(r.out))
		}
	}
}

// fullCacheDisk runs index add with the embedding cache's file on a full
// disk (/dev/full: every write is ENOSPC): every document is indexed, with
// one warning.
func (p *probe) fullCacheDisk(ctx context.Context, root string) {
	if _, err := os.Stat("/dev/full"); err != nil {
		return
	}
	p.count("ingest")
	cacheDir := filepath.Join(root, "full-cache")
	env := []string{"CTXSEL_EMBED_CACHE=" + cacheDir}
	seed := filepath.Join(root, "full-seed")
	corpus(seed, 1)
	if r := p.cliRun(ctx, nil, env, "index", "add", "--index", filepath.Join(root, "full-seed-idx"), seed); r.code != 0 {
		p.fail("full cache disk: the first add: exit %d %s", r.code, short(r.out))
		return
	}
	logs := glob(filepath.Join(cacheDir, "*.log"))
	if len(logs) == 0 {
		p.fail("full cache disk: no cache file")
		return
	}
	for _, l := range logs {
		os.Remove(l)
		os.Symlink("/dev/full", l)
	}
	docs := filepath.Join(root, "full-docs")
	const n = 40
	corpus(docs, n)
	idx := filepath.Join(root, "full-idx")
	r := p.cliRun(ctx, nil, env, "index", "add", "--index", idx, docs)
	if got := p.indexedDocs(ctx, idx); r.code != 0 || got != n || strings.Count(r.out, "cannot be written") != 1 {
		p.fail("full cache disk: exit %d, %d of %d documents, %d warnings: %s", r.code, got, n, strings.Count(r.out, "cannot be written"), short(r.out))
	}
}

// zeros reads as n bytes of 'x'.
type zeros struct{ n int64 }

func (z *zeros) Read(b []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(b)), z.n)
	for i := range b[:k] {
		b[i] = 'x'
	}
	z.n -= k
	return int(k), nil
}

// longSelectLine sends select one 300 MB line: a clear refusal (exit 2),
// in bounded memory.
func (p *probe) longSelectLine(ctx context.Context) {
	p.count("ingest")
	in := io.MultiReader(strings.NewReader(`{"id":"a","score":1,"text":"`), &zeros{300 << 20}, strings.NewReader(`"}`+"\n"))
	r := p.cliRun(ctx, in, nil, "select", "--strategy", "topk:k=1")
	if r.hung || r.code != 2 || !strings.Contains(r.out, "longer than") || r.maxRSS > maxMemory {
		p.fail("select, a 300 MB line: exit %d, %d MB: %s", r.code, r.maxRSS>>20, short(r.out))
	}
}
