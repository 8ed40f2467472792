package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/wire"
)

// The OpenAPI document is written by hand; these tests keep it true to the
// handlers: the same routes, examples that the handlers accept, and
// responses that match the documented schemas.

type apiDoc struct {
	root  map[string]any
	paths map[string]any
}

func loadOpenAPI(t *testing.T) apiDoc {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(openapiDoc, &root); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if v, _ := root["openapi"].(string); !strings.HasPrefix(v, "3.") {
		t.Fatalf("openapi version %q", v)
	}
	return apiDoc{root: root, paths: root["paths"].(map[string]any)}
}

func (d apiDoc) op(path, method string) map[string]any {
	p, _ := d.paths[path].(map[string]any)
	o, _ := p[strings.ToLower(method)].(map[string]any)
	return o
}

// resolve follows a local $ref.
func (d apiDoc) resolve(node map[string]any) map[string]any {
	for {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		var cur any = d.root
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		node = cur.(map[string]any)
	}
}

// validate checks v against the subset of JSON Schema the document uses.
func (d apiDoc) validate(schema map[string]any, v any, at string) error {
	schema = d.resolve(schema)
	if v == nil {
		if n, _ := schema["nullable"].(bool); n {
			return nil
		}
	}
	if all, ok := schema["allOf"].([]any); ok {
		for _, s := range all {
			if err := d.validate(s.(map[string]any), v, at); err != nil {
				return err
			}
		}
	}
	if one, ok := schema["oneOf"].([]any); ok {
		n := 0
		for _, s := range one {
			if d.validate(s.(map[string]any), v, at) == nil {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: %v matches %d of oneOf", at, v, n)
		}
	}
	if enum, ok := schema["enum"].([]any); ok && !slices.Contains(enum, v) {
		return fmt.Errorf("%s: %v not in %v", at, v, enum)
	}
	typ, _ := schema["type"].(string)
	switch typ {
	case "":
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %T is not an object", at, v)
		}
		props, _ := schema["properties"].(map[string]any)
		for _, r := range asStrings(schema["required"]) {
			if _, ok := obj[r]; !ok {
				return fmt.Errorf("%s: missing required %q", at, r)
			}
		}
		for k, val := range obj {
			if ps, ok := props[k].(map[string]any); ok {
				if err := d.validate(ps, val, at+"."+k); err != nil {
					return err
				}
				continue
			}
			switch ap := schema["additionalProperties"].(type) {
			case bool:
				if !ap {
					return fmt.Errorf("%s: property %q not allowed", at, k)
				}
			case map[string]any:
				if err := d.validate(ap, val, at+"."+k); err != nil {
					return err
				}
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %T is not an array", at, v)
		}
		if m, ok := schema["minItems"].(float64); ok && float64(len(arr)) < m {
			return fmt.Errorf("%s: %d items, want at least %v", at, len(arr), m)
		}
		if items, ok := schema["items"].(map[string]any); ok {
			for i, it := range arr {
				if err := d.validate(items, it, at+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: %T is not a string", at, v)
		}
		if m, ok := schema["minLength"].(float64); ok && float64(len(s)) < m {
			return fmt.Errorf("%s: %q shorter than %v", at, s, m)
		}
	case "number", "integer":
		f, ok := v.(float64)
		if !ok {
			return fmt.Errorf("%s: %T is not a number", at, v)
		}
		if typ == "integer" && f != math.Trunc(f) {
			return fmt.Errorf("%s: %v is not an integer", at, f)
		}
		if m, ok := schema["minimum"].(float64); ok && f < m {
			return fmt.Errorf("%s: %v below %v", at, f, m)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %T is not a boolean", at, v)
		}
	default:
		return fmt.Errorf("%s: schema type %q not handled by this validator", at, typ)
	}
	return nil
}

func asStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, x.(string))
	}
	return out
}

func TestOpenAPIRoutes(t *testing.T) {
	d := loadOpenAPI(t)
	s := newTestServer(t, nil, Options{})
	var registered, documented []string
	for _, rt := range s.routes() {
		registered = append(registered, rt.method+" "+rt.path)
		op := d.op(rt.path, rt.method)
		if op == nil {
			continue
		}
		responses := op["responses"].(map[string]any)
		if _, ok := responses["405"]; !ok {
			t.Errorf("%s %s: no 405 documented", rt.method, rt.path)
		}
		sec, _ := op["security"].([]any)
		bearer := strings.Contains(fmt.Sprint(sec), "bearer")
		if _, has401 := responses["401"]; rt.auth != bearer || rt.auth != has401 {
			t.Errorf("%s %s: auth %v but security %v, 401 documented %v", rt.method, rt.path, rt.auth, sec, has401)
		}
	}
	for path, item := range d.paths {
		for method := range item.(map[string]any) {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(registered)
	slices.Sort(documented)
	if !slices.Equal(registered, documented) {
		t.Fatalf("routes and document differ:\nregistered %q\ndocumented %q", registered, documented)
	}
}

// TestOpenAPIExamples sends every request example of the document to the
// handler: each must succeed, and each request and response must match its
// schema.
func TestOpenAPIExamples(t *testing.T) {
	d := loadOpenAPI(t)
	s := newTestServer(t, nil, Options{Asker: fakeAsker{}, Embedder: fakeEmbedder{}})
	n := 0
	for path, item := range d.paths {
		for method, o := range item.(map[string]any) {
			op := o.(map[string]any)
			rb, ok := op["requestBody"].(map[string]any)
			if !ok {
				continue
			}
			media := rb["content"].(map[string]any)["application/json"].(map[string]any)
			examples := media["examples"].(map[string]any)
			if len(examples) == 0 {
				t.Errorf("%s %s: no request examples", method, path)
			}
			for name, ex := range examples {
				value := ex.(map[string]any)["value"]
				if err := d.validate(media["schema"].(map[string]any), value, "request"); err != nil {
					t.Errorf("%s %s example %s does not match its schema: %v", method, path, name, err)
				}
				body, _ := json.Marshal(value)
				rec := call(t, s, strings.ToUpper(method), path, string(body))
				if rec.Code != http.StatusOK {
					t.Errorf("%s %s example %s: %d %s", method, path, name, rec.Code, rec.Body)
					continue
				}
				checkResponse(t, d, op, rec.Code, rec.Body.Bytes(), fmt.Sprintf("%s %s example %s", method, path, name))
				n++
			}
		}
	}
	if n < 4 {
		t.Fatalf("only %d examples exercised", n)
	}
}

func checkResponse(t *testing.T, d apiDoc, op map[string]any, code int, body []byte, what string) {
	t.Helper()
	r, ok := op["responses"].(map[string]any)[strconv.Itoa(code)].(map[string]any)
	if !ok {
		t.Errorf("%s: status %d not documented", what, code)
		return
	}
	r = d.resolve(r)
	media, ok := r["content"].(map[string]any)["application/json"].(map[string]any)
	if !ok {
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if err := d.validate(media["schema"].(map[string]any), v, "response"); err != nil {
		t.Errorf("%s: response does not match the document: %v\n%s", what, err, body)
	}
}

// TestOpenAPIResponses checks that what the handlers answer, successes and
// errors alike, is documented with a matching schema.
func TestOpenAPIResponses(t *testing.T) {
	d := loadOpenAPI(t)
	plain := newTestServer(t, func(c *Config) { c.MaxCandidates = 2 }, Options{})
	keyed := newTestServer(t, func(c *Config) { c.APIKeys = []string{"k"} }, Options{})
	asker := newTestServer(t, nil, Options{Asker: fakeAsker{}})
	// The evidence selector's responses: /v1/select and rerank with pruned
	// passages, the strategies with the text selectors listed.
	evid := evidenceServer(t, nil, fakeEmbedder{})
	evidSelect := `{"query":"Who is Scrooge's clerk?","strategy":"evidence:budget=40","candidates":` + evidenceCandidates(true) + `}`
	evidRerank := `{"query":"Scrooge's clerk","model":"ctxsel-evidence:budget=40","return_evidence":true,"documents":["A Christmas Carol\nScrooge is a miser. Bob Cratchit is his clerk.","Bread rises. Yeast makes gas."]}`
	for _, tc := range []struct {
		s            *Server
		method, path string
		body, ctype  string
	}{
		{plain, "GET", "/healthz", "", ""},
		{plain, "GET", "/readyz", "", ""},
		{plain, "GET", "/v1/strategies", "", ""},
		{plain, "GET", "/metrics", "", ""},
		{plain, "GET", "/openapi.json", "", ""},
		{plain, "GET", "/", "", ""},
		{plain, "GET", "/assets/style.css", "", ""},
		{plain, "GET", "/assets/missing.css", "", ""},
		{plain, "POST", "/v1/select", `{"candidates":[]}`, "application/json"},
		{plain, "POST", "/v1/select", `{"candidates":[{"id":"a","score":1},{"id":"b","score":1},{"id":"c","score":1}]}`, "application/json"},
		{plain, "POST", "/v1/select", `{}`, "text/plain"},
		{plain, "DELETE", "/v1/select", ``, ""},
		{plain, "POST", "/v1/ask", `{"query":"q"}`, "application/json"},
		{asker, "POST", "/v1/ask", `{"query":"q","strategy":"knee"}`, "application/json"},
		{asker, "POST", "/v1/ask", `{"query":""}`, "application/json"},
		{keyed, "POST", "/v1/select", readmeExample, "application/json"},
		{keyed, "GET", "/metrics", "", ""},
		{plain, "POST", "/v1/rerank", `{"query":"q"}`, "application/json"},
		{plain, "POST", "/v2/rerank", `{"query":"capital","documents":["the capital","zzz"]}`, "application/json"},
		{keyed, "POST", "/v1/rerank", `{"query":"q","documents":["a"]}`, "application/json"},
		{plain, "POST", "/v1/embeddings", `{"input":"a"}`, "application/json"},
		{plain, "POST", "/v1/embeddings", `{"input":[1]}`, "application/json"},
		{evid, "POST", "/v1/select", evidSelect, "application/json"},
		{evid, "POST", "/v1/rerank", evidRerank, "application/json"},
		{evid, "POST", "/v2/rerank", evidRerank, "application/json"},
		{evid, "GET", "/v1/strategies", "", ""},
	} {
		req := tc.method + " " + tc.path
		var headers []string
		if tc.ctype != "" {
			headers = []string{"Content-Type", tc.ctype}
		}
		rec := call(t, tc.s, tc.method, tc.path, tc.body, headers...)
		method := tc.method
		if method == "DELETE" {
			method = "POST" // the 405 is documented on the route's own method
		}
		op := d.op(tc.path, method)
		if tc.path == "/assets/style.css" || tc.path == "/assets/missing.css" {
			op = d.op("/assets/{name}", "GET")
		}
		if op == nil {
			t.Errorf("%s: not in the document", req)
			continue
		}
		checkResponse(t, d, op, rec.Code, rec.Body.Bytes(), fmt.Sprintf("%s → %d", req, rec.Code))
	}
}

// TestOpenAPIAskFields: the fields AskRequest documents are the fields the
// /v1/ask decoder knows (its unknown-field message lists them).
func TestOpenAPIAskFields(t *testing.T) {
	d := loadOpenAPI(t)
	props := d.root["components"].(map[string]any)["schemas"].(map[string]any)["AskRequest"].(map[string]any)["properties"].(map[string]any)
	var documented []string
	for k := range props {
		documented = append(documented, k)
	}
	rec := call(t, newTestServer(t, nil, Options{Asker: fakeAsker{}}), "POST", "/v1/ask", `{"query":"q","no_such_field":1}`)
	_, list, ok := strings.Cut(rec.Body.String(), "known: ")
	if rec.Code != http.StatusBadRequest || !ok {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	list, _, _ = strings.Cut(list, ")")
	known := strings.Split(list, ", ")
	slices.Sort(known)
	slices.Sort(documented)
	if !slices.Equal(known, documented) {
		t.Fatalf("the decoder knows %q, the document lists %q", known, documented)
	}
}

// usageAsker answers like fakeAsker with the given usage.
type usageAsker struct{ u *AskUsage }

func (a usageAsker) Ask(ctx context.Context, req AskRequest) (AskResponse, error) {
	resp, err := fakeAsker{}.Ask(ctx, req)
	resp.Usage = a.u
	return resp, err
}

// TestOpenAPIAskUsage: every member appendUsage writes (the reader's calls,
// Self-Route's flag, the picker's own call) is documented, and the document
// admits no other.
func TestOpenAPIAskUsage(t *testing.T) {
	d := loadOpenAPI(t)
	for _, u := range []*AskUsage{
		{LLMCalls: 1, InputTokens: 90, OutputTokens: 2},
		{LLMCalls: 2, InputTokens: 130, OutputTokens: 3, Routed: true},
		{LLMCalls: 1, InputTokens: 90, OutputTokens: 2, PickerCalls: 1, PickerPromptTokens: 321, PickerCompletionTokens: 17},
		{PickerCalls: 1, PickerPromptTokens: 40, PickerInvalid: true},
	} {
		rec := call(t, newTestServer(t, nil, Options{Asker: usageAsker{u}}), "POST", "/v1/ask", `{"query":"q","strategy":"knee"}`)
		checkResponse(t, d, d.op("/v1/ask", "POST"), rec.Code, rec.Body.Bytes(), fmt.Sprintf("usage %+v", *u))
		var got struct {
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"llm_calls": float64(u.LLMCalls), "input_tokens": float64(u.InputTokens), "output_tokens": float64(u.OutputTokens)}
		if u.Routed {
			want["routed"] = true
		}
		if u.PickerCalls > 0 {
			want["picker_calls"], want["picker_prompt_tokens"] = float64(u.PickerCalls), float64(u.PickerPromptTokens)
			want["picker_completion_tokens"], want["picker_invalid"] = float64(u.PickerCompletionTokens), u.PickerInvalid
		}
		if fmt.Sprint(got.Usage) != fmt.Sprint(want) {
			t.Errorf("usage %+v encoded as %v, want %v", *u, got.Usage, want)
		}
	}
	// The schema is strict: a member the document does not name fails.
	schema := d.resolve(d.op("/v1/ask", "POST")["responses"].(map[string]any)["200"].(map[string]any))
	media := schema["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	usage := d.resolve(media)["properties"].(map[string]any)["usage"].(map[string]any)
	if d.validate(usage, map[string]any{"llm_calls": 1.0, "input_tokens": 1.0, "output_tokens": 1.0, "picker_tokens": 1.0}, "usage") == nil {
		t.Error("an undocumented usage member passed the schema")
	}
}

// The defaults the document states are the constants the code uses.
func TestOpenAPIDefaults(t *testing.T) {
	d := loadOpenAPI(t)
	schemas := d.root["components"].(map[string]any)["schemas"].(map[string]any)
	for name, want := range map[string]string{"SelectRequest": ctxsel.DefaultSelectStrategy, "AskRequest": ctxsel.DefaultStrategy} {
		props := schemas[name].(map[string]any)["properties"].(map[string]any)
		if got := props["strategy"].(map[string]any)["default"]; got != want {
			t.Errorf("%s.strategy default %v, want %q", name, got, want)
		}
	}
}

// TestOpenAPIParamDef: the document's ParamDef lists exactly the fields
// ctxsel.ParamDef writes, for a number and for a word, so that the one
// parameter schema and its description stay in step.
func TestOpenAPIParamDef(t *testing.T) {
	d := loadOpenAPI(t)
	schema := d.resolve(map[string]any{"$ref": "#/components/schemas/ParamDef"})
	props, _ := schema["properties"].(map[string]any)
	written := map[string]bool{}
	for _, p := range []ctxsel.ParamDef{
		{Name: "n", Kind: ctxsel.IntegerParam, Default: 1, Min: 1, Max: 2, MinExclusive: true, MaxExclusive: true, Integer: true, Required: true, DefaultDoc: "x", Doc: "d"},
		{Name: "w", Kind: ctxsel.ListParam, Words: []string{"a"}, DefaultWord: "a", Required: true, DefaultDoc: "x", Doc: "d"},
	} {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		for k := range m {
			written[k] = true
			if props[k] == nil {
				t.Errorf("ParamDef writes %q, which the document's ParamDef does not list", k)
			}
		}
		if err := d.validate(schema, m, "ParamDef"); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
	for k := range props {
		if !written[k] {
			t.Errorf("the document's ParamDef lists %q, which ctxsel.ParamDef never writes", k)
		}
	}
}

// TestOpenAPICandidateFields: a candidate's fields are one list in the
// document, in select_context's input and in the reader both share (a
// field it reads that one of them leaves out, or one they name that it
// ignores as metadata, fails here).
func TestOpenAPICandidateFields(t *testing.T) {
	d := loadOpenAPI(t)
	props := d.root["components"].(map[string]any)["schemas"].(map[string]any)["Candidate"].(map[string]any)["properties"].(map[string]any)
	var documented, mcpFields []string
	for k := range props {
		documented = append(documented, k)
	}
	for f := range reflect.TypeFor[MCPCandidate]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		mcpFields = append(mcpFields, name)
	}
	slices.Sort(documented)
	slices.Sort(mcpFields)
	if !slices.Equal(documented, mcpFields) {
		t.Fatalf("the document lists %q, select_context takes %q", documented, mcpFields)
	}
	for _, f := range documented {
		if own, ok := wire.MisspeltCandidateField(f); !ok || own != f {
			t.Errorf("the document lists %q, which the candidate reader does not read", f)
		}
	}
	// a field the reader reads and the document leaves out: given, it is
	// read (a wrong type is refused), where metadata would pass unread
	for _, f := range []string{"tokens", "text", "vector", "above", "title", "url"} {
		rec := call(t, newTestServer(t, nil, Options{}), "POST", "/v1/select", `{"candidates":[{"id":"a","score":1,"`+f+`":{"x":1}}]}`)
		if read := rec.Code == http.StatusBadRequest; read != slices.Contains(documented, f) {
			t.Errorf("%q: %d %s; documented: %v", f, rec.Code, rec.Body, slices.Contains(documented, f))
		}
	}
}
