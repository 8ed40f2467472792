// Package llmtest is an httptest server that speaks the OpenAI-compatible
// (POST /v1/chat/completions, with usage) and Ollama (POST /api/chat, with
// prompt_eval_count/eval_count) wire formats, for testing code that calls
// an LLM through package llm without one.
//
// It can script faults (401, 429 with Retry-After, 5xx, hangs, truncated or
// non-JSON bodies, empty choices), counts requests, and answers either from
// a Go function (Replier) or as a simulated reader (Reader).
//
// The simulated reader checks plumbing only: it answers correctly exactly
// when the prompt holds all of a question's gold passages. No figure
// measured with it is any model's accuracy.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Message is one chat message as sent on the wire. (The package does not
// import llm, so that llm's own tests can use it.)
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Wire formats a Call arrived in.
const (
	WireOpenAI = "openai"
	WireOllama = "ollama"
)

// Call is one chat request as the server decoded it.
type Call struct {
	Wire        string
	Model       string
	Messages    []Message
	Temperature *float64
	Seed        *int
	MaxTokens   int
	// JSON is set when the request asked for a JSON object answer
	// (OpenAI response_format json_object, Ollama format "json").
	JSON bool
	// NumCtx is the context window an Ollama request asked to run the
	// model with (options.num_ctx; 0 when not sent).
	NumCtx int
	// Auth is the Authorization header as received.
	Auth string
}

// Prompt is every message's content, joined by blank lines.
func (c Call) Prompt() string {
	parts := make([]string, len(c.Messages))
	for i, m := range c.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n\n")
}

// Reply is what the server answers. Zero token counts are filled in with
// whitespace-separated word counts.
type Reply struct {
	Content                        string
	PromptTokens, CompletionTokens int
	FinishReason                   string
}

// Replier maps a request to a reply.
type Replier func(Call) Reply

// Echo replies with the last message's content.
func Echo(c Call) Reply {
	if len(c.Messages) == 0 {
		return Reply{}
	}
	return Reply{Content: c.Messages[len(c.Messages)-1].Content}
}

// Fault is one scripted misbehaviour, used for one request.
type Fault struct {
	// Status, when non-zero, is returned with an error body in the wire
	// format ({"error":{"message":...}} or {"error":"..."}).
	Status int
	// Message is the error body's message ("scripted STATUS" when empty):
	// a real server's may echo a key, a path or an address.
	Message string
	// Code is the OpenAI error body's "code" (e.g.
	// "context_length_exceeded"); the Ollama body has none.
	Code string
	// RetryAfter is sent as the Retry-After header when set.
	RetryAfter string
	// Hang blocks until the client gives up (or the server closes).
	Hang bool
	// Truncate sends half of a valid body, then drops the connection.
	Truncate bool
	// NonJSON sends a 200 with an HTML body.
	NonJSON bool
	// EmptyChoices sends a 200 OpenAI body with no choices (and an Ollama
	// body with done=false).
	EmptyChoices bool
}

// Server is a scripted LLM server. Create it with New; Close it when done.
type Server struct {
	*httptest.Server

	mu     sync.Mutex
	reply  Replier
	faults []Fault
	calls  []Call
	done   chan struct{}
	once   sync.Once
	// window is the context length the model reports (0: the server
	// cannot say); shows counts the requests asking for it.
	window int
	shows  int
}

// New starts a server answering with reply (Echo when nil).
func New(reply Replier) *Server {
	if reply == nil {
		reply = Echo
	}
	s := &Server{reply: reply, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, WireOpenAI) })
	mux.HandleFunc("POST /api/chat", func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, WireOllama) })
	mux.HandleFunc("POST /api/show", s.show)
	mux.HandleFunc("GET /v1/models", s.models)
	s.Server = httptest.NewServer(mux)
	return s
}

// Close releases hanging requests and stops the server.
func (s *Server) Close() {
	s.once.Do(func() { close(s.done) })
	s.Server.Close()
}

// OpenAISpec and OllamaSpec are llm endpoint specs for model on s.
func (s *Server) OpenAISpec(model string) string { return "openai:" + model + "@" + s.URL + "/v1" }

// OllamaSpec: see OpenAISpec.
func (s *Server) OllamaSpec(model string) string { return "ollama:" + model + "@" + s.URL }

// SetContextLength makes the server report n tokens as every model's
// context window, as real servers do: Ollama's POST /api/show (model_info
// "llama.context_length") and vLLM's GET /v1/models (max_model_len). With
// 0 (the default) neither route knows the model: /api/show answers 404
// with Ollama's error, /v1/models lists no max_model_len.
func (s *Server) SetContextLength(n int) {
	s.mu.Lock()
	s.window = n
	s.mu.Unlock()
}

// WindowRequests is how many requests asked for a model's window
// (/api/show or /v1/models).
func (s *Server) WindowRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shows
}

func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Name  string `json:"name"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	s.shows++
	n := s.window
	s.mu.Unlock()
	if n == 0 {
		writeError(w, WireOllama, http.StatusNotFound, fmt.Sprintf("model '%s' not found", req.Model))
		return
	}
	writeJSON(w, map[string]any{
		"modelfile": "FROM " + req.Model, "parameters": "stop \"<|eot_id|>\"", "template": "{{ .Prompt }}",
		"details":    map[string]any{"family": "llama", "parameter_size": "3.2B", "quantization_level": "Q4_K_M"},
		"model_info": map[string]any{"general.architecture": "llama", "llama.context_length": n, "llama.embedding_length": 3072},
	})
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.shows++
	n := s.window
	s.mu.Unlock()
	m := map[string]any{"id": "llmtest", "object": "model", "owned_by": "llmtest"}
	if n > 0 {
		m["max_model_len"] = n
	}
	writeJSON(w, map[string]any{"object": "list", "data": []any{m}})
}

// Script queues faults; each of the next requests meets one, in order.
func (s *Server) Script(faults ...Fault) {
	s.mu.Lock()
	s.faults = append(s.faults, faults...)
	s.mu.Unlock()
}

// SetReplier replaces the reply function.
func (s *Server) SetReplier(r Replier) {
	s.mu.Lock()
	s.reply = r
	s.mu.Unlock()
}

// Requests is how many chat requests reached the server, faults included.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// Calls returns every request received, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

type wireRequest struct {
	Model       string         `json:"model"`
	Messages    []Message      `json:"messages"`
	Temperature *float64       `json:"temperature"`
	Seed        *int           `json:"seed"`
	MaxTokens   int            `json:"max_tokens"`
	Options     map[string]any `json:"options"`
	// ResponseFormat (OpenAI) and Format (Ollama) ask for JSON answers.
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	Format string `json:"format"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, wire string) {
	var wr wireRequest
	if err := json.NewDecoder(r.Body).Decode(&wr); err != nil {
		s.mu.Lock()
		s.calls = append(s.calls, Call{Wire: wire})
		s.mu.Unlock()
		writeError(w, wire, http.StatusBadRequest, "bad JSON: "+err.Error())
		return
	}
	c := Call{Wire: wire, Model: wr.Model, Messages: wr.Messages, Temperature: wr.Temperature, Seed: wr.Seed,
		MaxTokens: wr.MaxTokens, Auth: r.Header.Get("Authorization"),
		JSON: (wr.ResponseFormat != nil && wr.ResponseFormat.Type == "json_object") || wr.Format == "json"}
	if wire == WireOllama {
		if v, ok := wr.Options["temperature"].(float64); ok {
			c.Temperature = &v
		}
		if v, ok := wr.Options["seed"].(float64); ok {
			n := int(v)
			c.Seed = &n
		}
		if v, ok := wr.Options["num_predict"].(float64); ok {
			c.MaxTokens = int(v)
		}
		if v, ok := wr.Options["num_ctx"].(float64); ok {
			c.NumCtx = int(v)
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, c)
	var f *Fault
	if len(s.faults) > 0 {
		f = &s.faults[0]
		s.faults = s.faults[1:]
	}
	reply := s.reply
	s.mu.Unlock()

	if f != nil {
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		switch {
		case f.Hang:
			select {
			case <-r.Context().Done():
			case <-s.done:
			}
			return
		case f.Status != 0:
			msg := f.Message
			if msg == "" {
				msg = fmt.Sprintf("scripted %d", f.Status)
			}
			writeErrorCode(w, wire, f.Status, msg, f.Code)
			return
		case f.NonJSON:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>502 Bad Gateway</body></html>")
			return
		case f.EmptyChoices:
			if wire == WireOpenAI {
				writeJSON(w, map[string]any{"model": c.Model, "choices": []any{}})
			} else {
				writeJSON(w, map[string]any{"model": c.Model, "message": map[string]string{"role": "assistant", "content": ""}, "done": false})
			}
			return
		}
	}
	rep := reply(c)
	if rep.PromptTokens == 0 {
		rep.PromptTokens = len(strings.Fields(c.Prompt()))
	}
	if rep.CompletionTokens == 0 {
		rep.CompletionTokens = len(strings.Fields(rep.Content))
	}
	if rep.FinishReason == "" {
		rep.FinishReason = "stop"
	}
	var body any
	if wire == WireOpenAI {
		body = map[string]any{
			"id": "chatcmpl-llmtest", "object": "chat.completion", "model": c.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]string{"role": "assistant", "content": rep.Content}, "finish_reason": rep.FinishReason}},
			"usage":   map[string]int{"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens, "total_tokens": rep.PromptTokens + rep.CompletionTokens},
		}
	} else {
		body = map[string]any{
			"model": c.Model, "message": map[string]string{"role": "assistant", "content": rep.Content},
			"done": true, "done_reason": rep.FinishReason, "prompt_eval_count": rep.PromptTokens, "eval_count": rep.CompletionTokens,
		}
	}
	if f != nil && f.Truncate {
		b, _ := json.Marshal(body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Write(b[:len(b)/2])
		// Returning with fewer bytes than promised makes net/http drop the
		// connection: the client sees an unexpected EOF.
		return
	}
	writeJSON(w, body)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, wire string, status int, msg string) {
	writeErrorCode(w, wire, status, msg, "")
}

func writeErrorCode(w http.ResponseWriter, wire string, status int, msg, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if wire == WireOpenAI {
		e := map[string]any{"message": msg, "type": "invalid_request_error"}
		if code != "" {
			e["code"] = code
		}
		json.NewEncoder(w).Encode(map[string]any{"error": e})
	} else {
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
}
