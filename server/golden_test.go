package server

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGoldenResponses sends a fixed set of requests, good and bad, to every
// endpoint that selects (and to the MCP tools) and compares each response,
// status, content type and body, byte for byte with testdata/golden.txt.
// The file was written before the candidate path was refactored (issue 21
// step 3), so the refactor is held to the wire output it replaced;
// -update-golden rewrites it when a change of output is meant.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden.txt from the current responses")

type goldenCase struct {
	server string // key of goldenServers
	method string
	path   string // an HTTP path, or "mcp:TOOL"
	body   string
}

// goldenCandidates is a retriever-shaped curve of n scored candidates.
func goldenCandidates(n int) string {
	var b strings.Builder
	b.WriteString(`[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		score := 0.3 + 0.5*math.Exp(-float64(i)/7) + 0.01*math.Sin(float64(i)*1.7)
		fmt.Fprintf(&b, `{"id":"d%d","score":%.6f,"tokens":%d}`, i, score, 40+(i*37)%200)
	}
	b.WriteString(`]`)
	return b.String()
}

func goldenCases() []goldenCase {
	cands := `"candidates":[{"id":"a","score":0.5},{"id":"b","score":0.4}]`
	curve := goldenCandidates(40)
	big := goldenCandidates(300)
	texts := `"candidates":[{"id":"1","text":"bbb"},{"id":"2","text":"aab"},{"id":"3","text":"a","tokens":7},{"id":"4","text":""}]`
	var out []goldenCase
	sel := func(server, body string) { out = append(out, goldenCase{server, "POST", "/v1/select", body}) }
	// /v1/select: scores, every order, caps, parameters.
	for _, st := range []string{"", "adaptivek", "topk:k=3", "budget:tokens=300", "knee", "threshold:t=0.5", "topp:p=0.5", "full", "moving_avg", "2diff_spike", "default"} {
		sel("plain", `{"strategy":"`+st+`","candidates":`+curve+`}`)
	}
	for _, o := range []string{"rank", "document", "edges"} {
		sel("plain", `{"strategy":"topk:k=5","order":"`+o+`","candidates":`+curve+`}`)
	}
	sel("plain", `{"strategy":"adaptivek","params":{"buffer":0,"max_k":3,"max_tokens":500},"candidates":`+curve+`}`)
	sel("plain", `{"strategy":"topk:k=30","params":{"max_tokens":200,"min_k":2},"candidates":`+curve+`}`)
	sel("plain", `{"strategy":"adaptivek:head=0.05","candidates":`+big+`}`)
	sel("plain", `{"strategy":"topk:k=150","order":"document","candidates":`+big+`}`)
	sel("plain", `{"candidates":[{"id":7,"score":1.5e2,"tokens":3},{"id":"x\u00e9\"q","score":-0.25,"meta":{"a":[1,{"b":null}]},"gold":true},{"id":"n","score":null,"tokens":null,"score":3}]}`)
	sel("plain", `{"candidates":[{"id":"a","score":0.123456789012345678},{"id":"b","score":1e-9},{"id":"c","score":-1e300},{"id":"d","score":5e20}]}`)
	sel("plain", "{\"query\":\"q\u2028\",\"candidates\":[{\"id\":\"\\u2028a\\ud83d\\ude00\",\"score\":1}]}")
	// Vectors and texts.
	sel("plain", `{"query_vector":[1,0,0],"strategy":"topk:k=2","candidates":[{"id":"a","vector":[1,0,0]},{"id":"b","vector":[0.5,0.5,0]},{"id":"c","vector":[0,0,1]}]}`)
	sel("plain", `{"query":"aaa","strategy":"topk:k=2",`+texts+`}`)
	sel("plain", `{"query":"aaa",`+texts+`}`)
	sel("plain", `{"query":"aaa","strategy":"budget:tokens=2","candidates":[{"id":"1","score":0.4,"text":"aab aab"},{"id":"2","score":0.9,"text":"b"}]}`)
	// Errors of /v1/select.
	for _, body := range []string{
		`{"candidates":[`, `{}`, `{"candidates":[]}`, `[]`, `"x"`, `{"candidates":{}}`,
		`{"candidates":[{"id":"a","score":1e999}]}`,
		`{"candidates":[{"id":"a","score":NaN}]}`,
		`{"candidates":[{"id":"a","score":"1"}]}`,
		`{"candidates":[{"id":"a","score":1},{"id":"b","score":2},{"id":"a","score":3}]}`,
		`{"candidates":[{"id":"a","score":1},{"id":"b"}]}`,
		`{"candidates":[{"id":"a"}]}`,
		`{"candidates":[{"score":1}]}`,
		`{"candidates":[{"id":"","score":1}]}`,
		`{"candidates":[{"id":true,"score":1}]}`,
		"{\"candidates\":[{\"id\":\"a\xff\",\"score\":1}]}",
		`{"candidates":[{"id":"a","Score":1}]}`,
		`{"candidates":[{"id":"a","score":1,"tokns":2}]}`,
		`{"candidates":[{"id":"a","score":1,"score":2}]}`,
		`{"candidates":[{"id":"a","score":1,"tokens":-1}]}`,
		`{"candidates":[{"id":"a","score":1,"tokens":1.5}]}`,
		`{"candidates":[{"id":"a","score":1,"vector":[1]}],"query_vector":[1]}`,
		`{"strategy":"nope",` + cands + `}`,
		`{"strategy":"adaptivek:head=2",` + cands + `}`,
		`{"strategy":"adaptivek:head",` + cands + `}`,
		`{"strategy":"adaptivek:zz=1",` + cands + `}`,
		`{"strategy":"topk:k=0.5",` + cands + `}`,
		`{"strategy":"adaptivek,knee",` + cands + `}`,
		`{"strategy":"selfroute",` + cands + `}`,
		`{"strategy":"evidence:budget=100",` + cands + `}`,
		`{"strategy":"picker",` + cands + `}`,
		`{"strategy":"adaptivek:head=0.6,tail=0.5",` + cands + `}`,
		`{"strategy":"adaptivek","params":{"head":2},` + cands + `}`,
		`{"strategy":"adaptivek","params":{"head":0.6,"tail":0.5},` + cands + `}`,
		`{"strategy":"adaptivek:head=0.1","params":{"head":0.2},` + cands + `}`,
		`{"strategy":"adaptivek:zz=1","params":{"aa":0.2},` + cands + `}`,
		`{"strategy":"adaptivek:head=2","params":{"aa":0.2},` + cands + `}`,
		`{"strategy":"topk:min_k=5,max_k=2","params":{"k":2},` + cands + `}`,
		`{"strategy":"topk","params":{"k":1.5},` + cands + `}`,
		`{"strategy":"topk","params":{"k":0},` + cands + `}`,
		`{"strategy":"topk","params":{"kk":1},` + cands + `}`,
		`{"strategy":"topk","params":{"min_k":5,"max_k":2},` + cands + `}`,
		`{"strategy":"topk","params":{"max_tokens":-1},` + cands + `}`,
		`{"strategy":"topk","params":{"k":"x"},` + cands + `}`,
		`{"strategy":"topk","params":{"k":1,"k":2},` + cands + `}`,
		`{"strategy":"nope","params":{"k":1},` + cands + `}`,
		`{"strategy":"selfroute","params":{"k":1},` + cands + `}`,
		`{"order":"sideways",` + cands + `}`,
		`{"query_vector":[1,0],"candidates":[{"id":"a","vector":[1,0]},{"id":"b","vector":[1,0,0]}]}`,
		`{"query_vector":[1,0],"candidates":[{"id":"a","vector":[0,0]}]}`,
		`{"query_vector":[0,0],"candidates":[{"id":"a","vector":[1,0]}]}`,
		`{"candidates":[{"id":"a","vector":[1,0]}]}`,
		`{"query_vector":[1,"x"],"candidates":[{"id":"a","vector":[1,0]}]}`,
		`{"candidates":[{"id":"a","text":"x"}]}`,
		`{"query":" ","candidates":[{"id":"a","text":"x"}]}`,
		`{"candidates":[{"id":"a","score":1},{"id":"b","score":1},{"id":"c","score":1},{"id":"d","score":1},{"id":"e","score":1}]}`,
		`{"candidates":[{"id":"a","score":1,"text":"0123456789012345678901234567890123456789x"}]}`,
		`{"query_vector":[1,0,0,0,0],"candidates":[]}`,
		`{"strategy":"topk", "strategy":"knee",` + cands + `}`,
		`{"stratgy":"topk",` + cands + `}`,
		`{` + cands + `} {}`,
		``,
		`{"candidates":[{"id":"a","score":1,"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}`,
		`{"candidates":[{"id":"a","score":1,"text":"\ud800"}]}`,
		`{"candidates":[{"id":"a","score":1,"text":"x\q"}]}`,
	} {
		sel("tight", body)
	}
	sel("plain", `{"query":"q","candidates":[{"id":"a","text":"x"}]}`)
	sel("down", `{"query":"q","candidates":[{"id":"a","text":"x"}]}`)

	// /v1/rerank and /v2/rerank.
	docs := `"documents":["the cat sat","a dog barked","cats and kittens","nothing here","cat cat cat"]`
	for _, p := range []string{"/v1/rerank", "/v2/rerank"} {
		for _, body := range []string{
			`{"query":"cat",` + docs + `}`,
			`{"model":"rerank-english-v3.0","query":"cat",` + docs + `,"top_n":2}`,
			`{"model":"ctxsel-topk:k=3","query":"cat",` + docs + `,"return_documents":true}`,
			`{"query":"cat","strategy":"knee",` + docs + `,"return_documents":false,"scoring":"bm25"}`,
			`{"query":"cat",` + docs + `,"scoring":"hybrid","strategy":"topk:k=2"}`,
			`{"query":"cat","documents":[{"text":"cat here","title":"T","n":[1,2]},{"title":"cat"},"a cat"],"rank_fields":["title","text"],"return_documents":true}`,
			`{"query":"cat",` + docs + `,"max_chunks_per_doc":3,"priority":1,"truncation":true,"max_tokens_per_doc":9}`,
			`{"query":"cat",` + docs + `,"params":{"k":2},"strategy":"topk"}`,
			`{"query":"cat",` + docs + `,"order":"rank"}`,
			// errors
			`{"model":"ctxsel-topk","strategy":"knee","query":"cat",` + docs + `}`,
			`{"model":"ctxsel-nope","query":"cat",` + docs + `}`,
			`{"query":"cat",` + docs + `,"order":"document"}`,
			`{"query":"cat",` + docs + `,"scoring":"magic"}`,
			`{"query":"",` + docs + `}`,
			`{"query":"cat","documents":[]}`,
			`{"query":"cat","documents":["a"," "]}`,
			`{"query":"cat","documents":[{"title":"x"}],"rank_fields":["title","body"]}`,
			`{"query":"cat","documents":[{"title":"x"}]}`,
			`{"query":"cat","documents":[{"title":1}],"rank_fields":["title"]}`,
			`{"query":"cat","documents":[1]}`,
			`{"query":"cat",` + docs + `,"top_n":0}`,
			`{"query":"cat",` + docs + `,"bogus":1}`,
			`{"query":"cat",` + docs + `,"strategy":"evidence:budget=50"}`,
		} {
			out = append(out, goldenCase{"plain", "POST", p, body})
		}
	}
	out = append(out, goldenCase{"noembed", "POST", "/v1/rerank", `{"query":"cat",` + docs + `}`})
	out = append(out, goldenCase{"noembed", "POST", "/v1/rerank", `{"query":"cat",` + docs + `,"scoring":"dense"}`})
	out = append(out, goldenCase{"down", "POST", "/v1/rerank", `{"query":"cat",` + docs + `}`})

	// /v1/ask over a fake index.
	for _, body := range []string{
		`{"query":"what?"}`,
		`{"query":"what?","strategy":"adaptivek","params":{"buffer":0,"max_k":5},"order":"document","top_n":20,"retriever":"bm25"}`,
		`{"query":"what?","strategy":"topk:k=1"}`,
		`{"query":"what?","strategy":"selfroute:k=1"}`,
		`{"query":"what?","strategy":"selfroute","params":{"k":2}}`,
		`{"query":"what?","strategy":"default"}`,
		`{"query":""}`,
		`{"query":"q","strategy":"topk:k=0.5"}`,
		`{"query":"q","retriever":"magic"}`,
		`{"query":"q","top_n":5000}`,
		`{"query":"q","params":{"k":1}}`,
		`{"query":"q","strategy":"selfroute","params":{"k":1.5}}`,
		`{"query":"q","strategy":"selfroute:k=1","params":{"k":2}}`,
		`{"query":"q","bogus":1}`,
	} {
		out = append(out, goldenCase{"plain", "POST", "/v1/ask", body})
	}
	out = append(out, goldenCase{"tight", "POST", "/v1/ask", `{"query":"q"}`})

	// The MCP tools, arguments as a client sends them.
	for _, c := range []struct{ tool, args string }{
		{"select_context", `{"candidates":[{"id":"a","score":0.9},{"id":"b","score":0.85},{"id":"c","score":0.1}],"strategy":"adaptivek","params":{"buffer":0}}`},
		{"select_context", `{"query":"capital","candidates":[{"id":"x","text":"zzz"},{"id":"y","text":"capital"}],"strategy":"topk:k=1"}`},
		{"select_context", `{"candidates":` + curve + `,"order":"edges"}`},
		{"select_context", `{"candidates":[{"id":"a","score":1},{"id":"a","score":2}]}`},
		{"select_context", `{"candidates":[{"id":"a","score":1}],"strategy":"nope"}`},
		{"select_context", `{"candidates":[]}`},
		{"select_context", `{"candidates":"a"}`},
		{"select_context", `{"candidates":[{"id":"a","score":1}],"path":"/etc/passwd"}`},
		{"select_context", ``},
		{"search", `{"query":"answer","top_n":2}`},
		{"search", `{"query":" "}`},
		{"search", `{"query":"q","top_n":-1}`},
		{"ask", `{"query":"what?","strategy":"topk:k=1"}`},
		{"ask", `{"query":"what?"}`},
		{"ask", `{"query":"q","strategy":"topk:k=0.5"}`},
		{"strategies", `{}`},
	} {
		out = append(out, goldenCase{"plain", "MCP", "mcp:" + c.tool, c.args})
	}
	out = append(out, goldenCase{"tight", "MCP", "mcp:search", `{"query":"q"}`})
	out = append(out, goldenCase{"tight", "MCP", "mcp:ask", `{"query":"q"}`})
	return out
}

// goldenServers are the servers the cases name.
func goldenServers(t *testing.T) map[string]*Server {
	return map[string]*Server{
		"plain":   newTestServer(t, nil, Options{Embedder: fakeEmbedder{}, Asker: fakeAsker{}}),
		"tight":   newTestServer(t, func(c *Config) { c.MaxCandidates = 4; c.MaxTextBytes = 40; c.MaxVectorDim = 4; c.MaxCurvePoints = 16 }, Options{}),
		"noembed": newTestServer(t, nil, Options{}),
		"down":    newTestServer(t, nil, Options{Embedder: fakeEmbedder{fail: fmt.Errorf("backend at 10.0.0.1:443 down")}}),
	}
}

// generatedID matches the request ids a server makes up (an MCP call has
// no header to fix one).
var generatedID = regexp.MustCompile(`[0-9a-f]{12}-[0-9]+`)

func TestGoldenResponses(t *testing.T) {
	servers := goldenServers(t)
	sessions := map[string]*mcp.ClientSession{}
	var got strings.Builder
	for i, c := range goldenCases() {
		s := servers[c.server]
		fmt.Fprintf(&got, "### %d %s %s %s\n%s\n", i, c.server, c.method, c.path, c.body)
		if tool, ok := strings.CutPrefix(c.path, "mcp:"); ok {
			cs := sessions[c.server]
			if cs == nil {
				cs = connectMemory(t, s)
				sessions[c.server] = cs
			}
			var args any
			if c.body != "" {
				args = json.RawMessage(c.body)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				fmt.Fprintf(&got, "--- protocol error %v\n", err)
				continue
			}
			text := ""
			if len(res.Content) > 0 {
				text = res.Content[0].(*mcp.TextContent).Text
			}
			sc, _ := json.Marshal(res.StructuredContent)
			fmt.Fprintf(&got, "--- is_error=%v\n%s\nstructured=%s\n", res.IsError, generatedID.ReplaceAllString(text, "ID"), sc)
			continue
		}
		rec := call(t, s, c.method, c.path, c.body, "X-Request-Id", "golden-"+fmt.Sprint(i))
		fmt.Fprintf(&got, "--- %d %s scoring=%q\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("X-Ctxsel-Scoring"), rec.Body.String())
		if !strings.HasSuffix(rec.Body.String(), "\n") {
			got.WriteString("\n")
		}
	}
	const file = "testdata/golden.txt"
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update-golden to write it)", err)
	}
	if got.String() == string(want) {
		return
	}
	g, w := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			// The case header above the first difference names the request.
			head := ""
			for j := i; j >= 0 && j < len(w); j-- {
				if strings.HasPrefix(w[j], "### ") {
					head = w[j] + "\n" + w[j+1]
					break
				}
			}
			t.Fatalf("response differs from %s at line %d:\n%s\n got: %s\nwant: %s", file, i+1, head, gl, wl)
		}
	}
}
