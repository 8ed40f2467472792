package index

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// newsChunks cuts the passages of ../shared's SummHay news into chunks of
// about 2,400 bytes (≈ 600 tokens) at spaces.
func newsChunks(tb testing.TB, n int) []string {
	f, err := os.Open("../../shared/data/summhay_news.jsonl.gz")
	if err != nil {
		tb.Fatalf("the news benchmark needs ../shared: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 64<<20)
	var out []string
	var cur strings.Builder
	for sc.Scan() && len(out) < n {
		var rec struct {
			Passages []struct{ Text string } `json:"passages"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatal(err)
		}
		for _, p := range rec.Passages {
			for _, w := range strings.Fields(p.Text) {
				cur.WriteString(w)
				cur.WriteByte(' ')
				if cur.Len() >= 2400 {
					out = append(out, cur.String())
					cur.Reset()
				}
			}
		}
	}
	return out
}

// BenchmarkLexicalIndexNews is BenchmarkLexicalIndex on real text: the
// SummHay news passages of ../shared cut into ≈ 600-token chunks, most of
// which hold some non-ASCII (curly quotes, dashes), so the tokenizer's
// general path is what is timed there. The reference builder runs after
// each build, as in BenchmarkLexicalIndex; of_reference is the ratio of
// CPU times.
//
//	go test ./index -run '^$' -bench LexicalIndexNews -benchtime 3x -cpu 1
func BenchmarkLexicalIndexNews(b *testing.B) {
	texts := newsChunks(b, 20000)
	ascii := 0
	for _, t := range texts {
		if !strings.ContainsFunc(t, func(r rune) bool { return r >= utf8.RuneSelf }) {
			ascii++
		}
	}
	b.Logf("%d chunks, %d all ASCII", len(texts), ascii)
	var docs []segDoc
	for i := 0; i < len(texts); i += 10 {
		var sb strings.Builder
		d := segDoc{ID: fmt.Sprintf("d%d", i)}
		for _, t := range texts[i:min(i+10, len(texts))] {
			lo := sb.Len()
			sb.WriteString(t)
			d.Chunks = append(d.Chunks, [5]int{lo, sb.Len(), 0, 0, 0})
		}
		d.Text = sb.String()
		docs = append(docs, d)
	}
	var cpu, refCPU time.Duration
	b.ResetTimer()
	for range b.N {
		c := processCPU()
		size := len(buildLexical(docs).encode())
		c2 := processCPU()
		cpu += c2 - c
		if ref := len(refBuildLexical(docs).encode()); ref != size {
			b.Fatalf("%d bytes, the reference wrote %d", size, ref)
		}
		refCPU += processCPU() - c2
	}
	b.ReportMetric(float64(len(texts)*b.N)/cpu.Seconds(), "chunks/cpu-s")
	b.ReportMetric(float64(len(texts)*b.N)/refCPU.Seconds(), "ref_chunks/cpu-s")
	b.ReportMetric(float64(cpu)/float64(refCPU), "of_reference")
}
