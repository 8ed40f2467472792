// Command askbench times one-shot `ctxsel ask --llm=false` processes against
// the embedded index and against a Weaviate server holding the same chunks
// and vectors (issue 22: a fresh process should answer faster from the
// embedded index than the same question asked of Weaviate).
//
// It starts weaviate-server on loopback (anonymous access, no vectorizer,
// data under -work), builds both indexes from the same files with one
// embedding cache (so Weaviate receives the embedded index's vectors), then
// runs every question against both back ends, alternating which goes first,
// for -rounds rounds. Each timed process embeds its question cold
// (CTXSEL_EMBED_CACHE=off). It reports per back end and strategy the wall
// time of the whole process (median, 10th–90th percentile), its CPU time
// and peak memory, Weaviate's own CPU per question, the ratio of medians
// and the median of the per-question ratios, with the load average before
// and after.
//
//	go build -o /tmp/ctxsel ./cmd/ctxsel
//	GOBIN=$HOME/.cache/ctxsel/weaviate-v1.35.2 go install github.com/weaviate/weaviate/cmd/weaviate-server@v1.35.2
//	unshare -rn go run ./internal/cmd/askbench -ctxsel /tmp/ctxsel -work /tmp/askbench
//
// unshare -rn (a private network namespace, as .ci/run uses for the
// Weaviate test) keeps the server's ports, some of which bind every
// interface, off the network; askbench brings its loopback up. The first
// run indexes the corpus twice (minutes: embedding some 10k chunks); later
// runs with the same -work reuse both indexes. Nothing is written outside
// -work. Linux only (it reads /proc and uses a network namespace).
//
//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/internal/loopback"
)

const collection = "AskBench"

func main() {
	bin := flag.String("ctxsel", "", "a built ctxsel binary (required)")
	home, _ := os.UserCacheDir()
	weaviateBin := flag.String("weaviate", filepath.Join(home, "ctxsel", "weaviate-v1.35.2", "weaviate-server"), "weaviate-server binary (.ci/run builds v1.35.2 there)")
	work := flag.String("work", "", "directory for the embedded index, Weaviate's data and the embedding cache (required; reused across runs)")
	corpus := flag.String("corpus", "../shared/data/lara/datasets/32k/book,../shared/data/lara/datasets/128k/book,../shared/data/hotpotqa_dev500.jsonl",
		"comma-separated files and folders to index (LaRA's novels and HotpotQA dev 500's passages: about 10.5k chunks)")
	questions := flag.String("questions", "../shared/data/hotpotqa_dev500.jsonl", "HotpotQA-format JSONL whose first -n questions are asked")
	n := flag.Int("n", 10, "questions")
	rounds := flag.Int("rounds", 5, "times each question is asked of each back end")
	warmup := flag.Int("warmup", 1, "untimed rounds first (Weaviate's caches, the page cache)")
	strategies := flag.String("strategies", "topk:k=20,default", "comma-separated --strategy values to time")
	candidates := flag.Int("candidates", 0, "--candidates for ask (0: ask's default)")
	fusion := flag.String("fusion", "minmax", "--fusion for both back ends (minmax: Weaviate's relativeScoreFusion, so both fuse alike)")
	flag.Parse()
	if *bin == "" || *work == "" {
		fmt.Fprintln(os.Stderr, "askbench: -ctxsel and -work are required")
		os.Exit(2)
	}
	if *n < 1 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "askbench: -n and -rounds must be positive")
		os.Exit(2)
	}
	if err := run(*bin, *weaviateBin, *work, strings.Split(*corpus, ","), *questions, *n, *warmup, *rounds, strings.Split(*strategies, ","), *fusion, *candidates); err != nil {
		fmt.Fprintln(os.Stderr, "askbench:", err)
		os.Exit(1)
	}
}

func run(bin, weaviateBin, work string, corpus []string, questionsFile string, n, warmup, rounds int, strategies []string, fusion string, candidates int) error {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if err := loopback.Up(); err != nil {
		fmt.Fprintln(os.Stderr, "askbench: bringing loopback up:", err)
	}
	recs, err := dataset.LoadFile(questionsFile)
	if err != nil {
		return fmt.Errorf("questions: %w", err)
	}
	if len(recs) < n {
		n = len(recs)
	}
	var qs []string
	for _, r := range recs[:n] {
		qs = append(qs, r.Question)
	}

	wv, err := startWeaviate(weaviateBin, filepath.Join(work, "weaviate"))
	if err != nil {
		return err
	}
	defer wv.stop()
	embedded := filepath.Join(work, "index")
	remote := "weaviate://" + wv.host + "/" + collection
	cache := filepath.Join(work, "embcache")

	// Both indexes from the same files, through one embedding cache: the
	// second build embeds nothing, and Weaviate stores the same vectors.
	backends := []struct{ name, loc string }{{"embedded", embedded}, {"weaviate", remote}}
	chunks := map[string]int{}
	for _, b := range backends {
		st, err := stats(bin, b.loc)
		if err != nil || st.Chunks == 0 {
			fmt.Printf("indexing %s (%s) …\n", b.name, strings.Join(corpus, " "))
			m, err := runProc(bin, append([]string{"index", "add", "--index", b.loc}, corpus...), "CTXSEL_EMBED_CACHE="+cache)
			if err != nil {
				return fmt.Errorf("index add %s: %w\n%s", b.name, err, m.out)
			}
			fmt.Printf("  %s: %.1f s wall, %.1f CPU-s (ctxsel), peak %d MB\n", b.name, m.wall.Seconds(), m.cpu.Seconds(), m.rssKB/1024)
			if st, err = stats(bin, b.loc); err != nil {
				return err
			}
		}
		chunks[b.name] = st.Chunks
		fmt.Printf("%s: %d documents, %d chunks, model %s\n", b.name, st.Docs, st.Chunks, st.Config.Model)
	}
	if chunks["embedded"] != chunks["weaviate"] {
		return fmt.Errorf("the back ends hold %d and %d chunks: remove %s and run again", chunks["embedded"], chunks["weaviate"], work)
	}

	fmt.Printf("Weaviate %s\n", wv.version())
	load0 := loadavg()
	cand := "ask's default"
	if candidates > 0 {
		cand = strconv.Itoa(candidates)
	}
	fmt.Printf("\n%d questions × %d rounds per back end and strategy (after %d untimed), candidates %s, fusion %s, embedding cache off; load average %s\n",
		len(qs), rounds, warmup, cand, fusion, load0)
	results := map[string][]measure{} // strategy/backend
	serverCPU := map[string]time.Duration{}
	for r := -warmup; r < rounds; r++ {
		for qi, q := range qs {
			for _, s := range strategies {
				order := []int{0, 1}
				if (r+qi)%2 != 0 {
					order = []int{1, 0}
				}
				for _, bi := range order {
					b := backends[bi]
					args := []string{"ask", "--llm=false", "--prompt=false", "--index", b.loc, "--strategy", s, "--fusion", fusion}
					if candidates > 0 {
						args = append(args, "--candidates", strconv.Itoa(candidates))
					}
					args = append(args, q)
					c0 := wv.cpu()
					m, err := runProc(bin, args, "CTXSEL_EMBED_CACHE=off")
					if err != nil {
						return fmt.Errorf("ask %s %q: %w\n%s", b.name, q, err, m.out)
					}
					if r < 0 {
						continue
					}
					key := s + "/" + b.name
					results[key] = append(results[key], m)
					serverCPU[key] += wv.cpu() - c0
				}
			}
		}
	}
	load1 := loadavg()

	fmt.Printf("\n| strategy | back end | wall p50 | wall p10–p90 | ctxsel CPU p50 | Weaviate CPU / question | peak RSS p50 |\n|---|---|---|---|---|---|---|\n")
	for _, s := range strategies {
		for _, b := range backends {
			ms := results[s+"/"+b.name]
			walls, cpus, rss := make([]float64, len(ms)), make([]float64, len(ms)), make([]float64, len(ms))
			for i, m := range ms {
				walls[i], cpus[i], rss[i] = m.wall.Seconds()*1000, m.cpu.Seconds()*1000, float64(m.rssKB)/1024
			}
			wcpu := "—"
			if b.name == "weaviate" {
				wcpu = fmt.Sprintf("%.0f ms", serverCPU[s+"/"+b.name].Seconds()*1000/float64(len(ms)))
			}
			fmt.Printf("| %s | %s | %.0f ms | %.0f–%.0f ms | %.0f ms | %s | %.0f MB |\n", s, b.name,
				quantile(walls, 0.5), quantile(walls, 0.1), quantile(walls, 0.9), quantile(cpus, 0.5), wcpu, quantile(rss, 0.5))
		}
	}
	fmt.Println()
	for _, s := range strategies {
		e, w := results[s+"/embedded"], results[s+"/weaviate"]
		ratios := make([]float64, len(e))
		ew, ww := make([]float64, len(e)), make([]float64, len(w))
		for i := range e {
			ratios[i] = w[i].wall.Seconds() / e[i].wall.Seconds()
			ew[i], ww[i] = e[i].wall.Seconds(), w[i].wall.Seconds()
		}
		fmt.Printf("%s: Weaviate ÷ embedded, wall: %.2f (medians), %.2f (median of %d paired runs; p10–p90 %.2f–%.2f)\n",
			s, quantile(ww, 0.5)/quantile(ew, 0.5), quantile(ratios, 0.5), len(ratios), quantile(ratios, 0.1), quantile(ratios, 0.9))
	}
	fmt.Printf("load average before %s, after %s\n", load0, load1)
	return nil
}

type measure struct {
	wall  time.Duration
	cpu   time.Duration // user + system of the process
	rssKB int64
	out   string
}

func runProc(bin string, args []string, env ...string) (measure, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	m := measure{wall: time.Since(start), out: tail(out.String(), 2000)}
	if ps := cmd.ProcessState; ps != nil {
		m.cpu = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			m.rssKB = ru.Maxrss
		}
	}
	return m, err
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

type indexStats struct {
	Docs   int `json:"docs"`
	Chunks int `json:"chunks"`
	Config struct {
		Model string `json:"model"`
	} `json:"config"`
}

func stats(bin, loc string) (indexStats, error) {
	var st indexStats
	m, err := runProc(bin, []string{"index", "stats", "--json", "--index", loc}, "CTXSEL_EMBED_CACHE=off")
	if err != nil {
		return st, fmt.Errorf("index stats %s: %w", loc, err)
	}
	if err := json.Unmarshal([]byte(m.out), &st); err != nil {
		return st, fmt.Errorf("index stats %s: %w", loc, err)
	}
	return st, nil
}

func quantile(v []float64, q float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	x := q * float64(len(s)-1)
	i := int(x)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (x-float64(i))*(s[i+1]-s[i])
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

type weaviate struct {
	cmd  *exec.Cmd
	host string
	done chan struct{}
}

// startWeaviate runs a single-node server as index/weaviate's integration
// test does: REST on 127.0.0.1, every other port picked free on loopback,
// anonymous access, no vectorizer, no telemetry.
func startWeaviate(bin, data string) (*weaviate, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("weaviate-server: %w (build it: GOBIN=%s go install github.com/weaviate/weaviate/cmd/weaviate-server@v1.35.2)", err, filepath.Dir(bin))
	}
	ports := make([]int, 6)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(filepath.Dir(data), "weaviate.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--host", "127.0.0.1", "--port", strconv.Itoa(ports[0]), "--scheme", "http")
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + data,
		"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=true",
		"DEFAULT_VECTORIZER_MODULE=none",
		"DISABLE_TELEMETRY=true",
		"GO_PROFILING_DISABLE=true",
		"PERSISTENCE_DATA_PATH=" + data,
		"CLUSTER_HOSTNAME=node1",
		"CLUSTER_ADVERTISE_ADDR=127.0.0.1",
		"GRPC_PORT=" + strconv.Itoa(ports[1]),
		"CLUSTER_GOSSIP_BIND_PORT=" + strconv.Itoa(ports[2]),
		"CLUSTER_DATA_BIND_PORT=" + strconv.Itoa(ports[3]),
		"RAFT_PORT=" + strconv.Itoa(ports[4]),
		"RAFT_INTERNAL_RPC_PORT=" + strconv.Itoa(ports[5]),
		"RAFT_JOIN=node1:" + strconv.Itoa(ports[4]),
		"RAFT_BOOTSTRAP_EXPECT=1",
		"LOG_LEVEL=warning",
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start weaviate-server: %w", err)
	}
	w := &weaviate{cmd: cmd, host: net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])), done: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(w.done) }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.host+"/v1/.well-known/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return w, nil
			}
		}
		select {
		case <-w.done:
			return nil, errors.New("weaviate-server exited before it was ready (see weaviate.log under -work)")
		case <-ctx.Done():
			w.stop()
			return nil, errors.New("weaviate-server not ready after 3 minutes (see weaviate.log under -work)")
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (w *weaviate) stop() {
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(30 * time.Second):
		w.cmd.Process.Kill()
		<-w.done
	}
}

// version is the server's version, from /v1/meta.
func (w *weaviate) version() string {
	resp, err := http.Get("http://" + w.host + "/v1/meta")
	if err != nil {
		return "?"
	}
	defer resp.Body.Close()
	var m struct {
		Version string `json:"version"`
	}
	if json.NewDecoder(resp.Body).Decode(&m) != nil {
		return "?"
	}
	return m.Version
}

// cpu is the server's user+system time so far (/proc, clock ticks).
func (w *weaviate) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
