// Command rerankload is issue 19's load test of bounded embedding, over
// loopback and bounded in count and time: it starts a built `ctxsel serve`
// (offline use-lite model, embedding cache off), sends bursts of C
// concurrent /v1/rerank requests of D real documents each (HotpotQA dev
// passages, -merge of them per document) and reports, per server
// configuration, the status codes and the latency p50/p99/max. It runs the
// shipped default (one embedding call per core at once, a short queue) and,
// for comparison in the same run, the same server with the limiter opened
// wide (embed_concurrency 1024), which is how serve behaved before.
//
//	go build -o /tmp/ctxsel ./cmd/ctxsel
//	go run ./internal/cmd/rerankload -ctxsel /tmp/ctxsel -concurrency 8,16 -rounds 2
//
// It exits 1 when a request of the default configuration did not succeed
// (a 503 past the queue, a 504 past request_timeout).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

type record struct {
	Question string `json:"question"`
	Passages []struct {
		Text string `json:"text"`
	} `json:"passages"`
}

type request struct {
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
	Model     string   `json:"model"`
}

type result struct {
	code int
	dur  time.Duration
}

func main() {
	bin := flag.String("ctxsel", "", "a built ctxsel binary (required)")
	data := flag.String("data", "../shared/data/hotpotqa_dev500.jsonl", "HotpotQA-format JSONL: questions and their passages")
	concurrency := flag.String("concurrency", "8,16", "comma-separated burst sizes: requests sent at once")
	rounds := flag.Int("rounds", 2, "bursts per burst size (samples = size × rounds)")
	docs := flag.Int("docs", 100, "documents per rerank request")
	merge := flag.Int("merge", 1, "passages joined into one document (1: HotpotQA passages, ~130 tokens; 4: ~520-token chunks)")
	timeout := flag.Duration("request-timeout", 60*time.Second, "the server's request_timeout")
	deadline := flag.Duration("deadline", 15*time.Minute, "bound on the whole run")
	compare := flag.Bool("compare", true, "also run the server with the embedding limiter opened wide")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "rerankload: -ctxsel is required")
		os.Exit(2)
	}
	var sizes []int
	for _, f := range strings.Split(*concurrency, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 64 {
			fmt.Fprintf(os.Stderr, "rerankload: -concurrency %q: want numbers 1..64\n", f)
			os.Exit(2)
		}
		sizes = append(sizes, n)
	}
	if *rounds < 1 || *rounds > 10 || *docs < 1 || *docs > 1000 || *merge < 1 {
		fmt.Fprintln(os.Stderr, "rerankload: -rounds 1..10, -docs 1..1000, -merge >= 1")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *deadline)
	defer cancel()

	need := 2
	for _, n := range sizes {
		need += *rounds * n
	}
	reqs, err := loadRequests(*data, need, *docs, *merge)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rerankload:", err)
		os.Exit(1)
	}
	fmt.Printf("machine: %d CPUs, GOMAXPROCS %d (the server takes the same by default); %d docs/request, %d passage(s)/doc (mean %d bytes/doc); request_timeout %s\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), *docs, *merge, meanBytes(reqs), *timeout)

	configs := []struct {
		name string
		conf string
	}{{"bounded (default: embed_concurrency = cores, embed_queue 4096 texts)", ""}}
	if *compare {
		configs = append(configs, struct{ name, conf string }{"unbounded (embed_concurrency 1024)", `"embed_concurrency": 1024, `})
	}
	failed := false
	for ci, c := range configs {
		srv, err := startServe(ctx, *bin, c.conf, *timeout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rerankload:", err)
			os.Exit(1)
		}
		fmt.Printf("\n== %s\n", c.name)
		// Warm-up: loads the model (lazily), excluded from the figures.
		next := 0
		one := send(ctx, srv.url, reqs[next])
		next++
		fmt.Printf("warm-up (loads the model): %d in %s\n", one.code, one.dur.Round(time.Millisecond))
		c0 := srv.cpu()
		serial := send(ctx, srv.url, reqs[next])
		next++
		fmt.Printf("one request alone: %d in %s (server CPU %s)\n", serial.code, serial.dur.Round(time.Millisecond), (srv.cpu() - c0).Round(10*time.Millisecond))
		for _, n := range sizes {
			var all []result
			start := time.Now()
			cpu0 := srv.cpu()
			for range *rounds {
				all = append(all, burst(ctx, srv.url, reqs[next:next+n])...)
				next += n
			}
			codes := map[int]int{}
			var durs []time.Duration
			for _, r := range all {
				codes[r.code]++
				durs = append(durs, r.dur)
			}
			slices.Sort(durs)
			cpu := srv.cpu() - cpu0
			fmt.Printf("C=%-2d n=%-3d codes=%v  p50 %-8s p99 %-8s max %-8s (wall %s; server CPU %s, %s a request)\n", n, len(all), codes,
				pct(durs, 50), pct(durs, 99), durs[len(durs)-1].Round(time.Millisecond), time.Since(start).Round(time.Millisecond),
				cpu.Round(10*time.Millisecond), (cpu / time.Duration(len(all))).Round(10*time.Millisecond))
			if ci == 0 && codes[200] != len(all) {
				failed = true
			}
		}
		srv.stop()
	}
	if failed {
		fmt.Println("\nFAIL: a request of the default configuration did not succeed")
		os.Exit(1)
	}
}

// pct is the p-th percentile by the nearest-rank method.
func pct(sorted []time.Duration, p int) time.Duration {
	i := (p*len(sorted)+99)/100 - 1
	return sorted[max(0, min(i, len(sorted)-1))].Round(time.Millisecond)
}

func meanBytes(reqs []request) int {
	n, b := 0, 0
	for _, r := range reqs {
		for _, d := range r.Documents {
			n++
			b += len(d)
		}
	}
	return b / max(1, n)
}

// loadRequests builds n rerank requests of docs documents each from
// consecutive passages, wrapping around the data when it runs out (the
// server runs without its embedding cache, so a passage sent again costs
// as much as the first time); the query is the question of the record the
// request's first passage came from.
func loadRequests(path string, n, docs, merge int) ([]request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	var questions []string
	var passages []string
	var owner []int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("data %s: %w", path, err)
		}
		questions = append(questions, r.Question)
		for _, p := range r.Passages {
			passages = append(passages, p.Text)
			owner = append(owner, len(questions)-1)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("data %s: %w", path, err)
	}
	per := docs * merge
	if per > len(passages) {
		return nil, fmt.Errorf("data %s: %d passages, fewer than one request needs (%d docs × %d merged)", path, len(passages), docs, merge)
	}
	out := make([]request, n)
	for i := range out {
		base := i * per % len(passages)
		r := request{Query: questions[owner[base]], Model: "ctxsel-adaptivek"}
		for d := range docs {
			var parts []string
			for m := range merge {
				parts = append(parts, passages[(base+d*merge+m)%len(passages)])
			}
			r.Documents = append(r.Documents, strings.Join(parts, "\n\n"))
		}
		out[i] = r
	}
	return out, nil
}

// burst sends reqs at once and waits for every answer.
func burst(ctx context.Context, url string, reqs []request) []result {
	out := make([]result, len(reqs))
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i, r := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			out[i] = send(ctx, url, r)
		}()
	}
	close(gate)
	wg.Wait()
	return out
}

func send(ctx context.Context, url string, r request) result {
	body, _ := json.Marshal(r)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"v1/rerank", bytes.NewReader(body))
	if err != nil {
		return result{code: -1}
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return result{code: -1, dur: time.Since(start)}
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return result{code: res.StatusCode, dur: time.Since(start)}
}

type serveProc struct {
	cmd  *exec.Cmd
	url  string
	done chan error
}

var listenURL = regexp.MustCompile(`msg="ctxsel serve listening".* url=(http://\S+/)`)

// startServe starts ctxsel serve on a loopback port with conf's extra keys
// and the embedding cache off, and waits for its address.
func startServe(ctx context.Context, bin, conf string, timeout time.Duration) (*serveProc, error) {
	dir, err := os.MkdirTemp("", "rerankload")
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(dir, "serve.json")
	wt := timeout + 30*time.Second
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{%s"addr": "127.0.0.1:0", "request_timeout": %q, "write_timeout": %q, "log_level": "info"}`,
		conf, timeout, wt)), 0o600); err != nil {
		return nil, err
	}
	p := &serveProc{done: make(chan error, 1)}
	p.cmd = exec.CommandContext(ctx, bin, "serve", "--config", cfg)
	p.cmd.Env = append(os.Environ(), "CTXSEL_EMBED_CACHE=off", "CTXSEL_API_KEYS=")
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(os.Interrupt) }
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listenURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urls <- m[1]:
				default:
				}
			}
		}
	}()
	go func() { p.done <- p.cmd.Wait(); os.RemoveAll(dir) }()
	select {
	case p.url = <-urls:
		return p, nil
	case err := <-p.done:
		return nil, fmt.Errorf("ctxsel serve exited: %v", err)
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		return nil, errors.New("ctxsel serve did not report its address")
	}
}

// cpu is the CPU time (user + system) the server has used so far, from
// /proc (0 where there is none).
func (p *serveProc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses: state is
	// field 3, utime 14, stime 15 (clock ticks, 100 a second on Linux).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}

func (p *serveProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(40 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
