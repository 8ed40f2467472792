// Package selfroute is Self-Route (Li et al., 2024), the LLM-routed baseline
// of both Adaptive-k and LDAR: the reader first sees a small retrieved
// context with a prompt that lets it decline ("unanswerable"); when it
// declines, it is asked again with the full context cut to its window, with
// the normal long-context prompt.
//
// Two published variants differ in the first step:
//
//   - LDAR's (ldar.txt App. C.4, the default, "selfroute" or "selfroute:k=5"):
//     the top 5 passages and the Table 5 prompt. It keeps the original
//     Self-Route design, top-k chunks.
//   - Adaptive-k's ("selfroute:prompt=adaptivek", tokens=5000 by default): the
//     passages that fit in 5,000 tokens and the prompt of the official code
//     (prompts/holobench_template_self_route.txt).
//
// Both route on the substring "unanswerable" anywhere in the reply, as the
// official Adaptive-k code does (eval.py), and answer the second step with
// the caller's long-context prompt (the long-context run of both papers).
//
// Self-Route is not a pure strategy: which context it ends with depends on
// the reader's answer, so it cannot cut a similarity curve without an LLM. It
// is an answering route: the package registers it (ctxsel.RegisterRoute), so
// ctxsel.Resolve("selfroute:…") gives a ctxsel.Route whose Plan is the two
// candidate selections (pure: Spec.First, then the full pool), which callers
// cut to the window and run with ctxsel.RunRoute, asking the reader with
// each step's prompt (ctxsel.RouteStep.Prompt: the variant's first-step
// prompt, then the caller's long-context prompt). Spec.Route does the same
// for two selections a caller already holds.
package selfroute

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/cutoff"
	"github.com/ctxsel/ctxsel/llm"
)

// Name is the route's name in strategy lists ("selfroute:k=5").
const Name = "selfroute"

// The first-step prompts, as a spec's prompt= word.
const (
	// PromptLDAR is LDAR's Table 5 prompt (the default).
	PromptLDAR = "ldar"
	// PromptAdaptiveK is the official Adaptive-k code's Self-Route prompt.
	PromptAdaptiveK = "adaptivek"
)

// DefaultK is the number of passages of LDAR's first step.
const DefaultK = 5

// DefaultTokens is the token budget of Adaptive-k's first step ("fixed top
// 5k tokens", §4.3; run_holobench.sh: --fixed_retrieval_tokens 5000).
const DefaultTokens = 5000

// Template is the prompt of ldar.txt Table 5 ("Prompt we used for Self-Route
// baseline"), verbatim; {datatype} names the kind of source ("documents",
// "novels", …) and is filled in by Prompt.
const Template llm.Template = "Here are some chunks retrieved from some {datatype}. Read these chunks to answer a question. " +
	"Be concise. If the question cannot be answered based on the information in the article, write " +
	"“unanswerable”. {context} Question: {question} Only give me the answer and do not output any " +
	"other words. If the question cannot be answered based on the information in the article, write " +
	"“unanswerable”. Answer:"

// TemplateAdaptiveK is the Self-Route prompt of the official Adaptive-k code
// (megagonlabs/adaptive-k-retrieval, prompts/holobench_template_self_route.txt),
// byte for byte: the space after "documents." and the indented reasoning line
// included. Its own last line still says "No answer." for unclear evidence;
// only "unanswerable" routes.
const TemplateAdaptiveK llm.Template = "You'll be given a set of sentences to read through carefully. Once you've reviewed them, I'll ask you a question related to the information in those sentences. Your job is to think critically about the details, analyze the sentences in relation to the question, and then provide your answer if the provided context documents are sufficient to answer. Write \"unanswerable\" if the query can not be answered based on the provided documents. \n" +
	"\n" +
	"**Input:**\n" +
	"- **Sentences:**\n" +
	"```\n" +
	"{context}\n" +
	"```\n" +
	"\n" +
	"- **Question:**\n" +
	"```\n" +
	"{question}\n" +
	"```\n" +
	"\n" +
	"**Response:**\n" +
	"- **Reasoning:**\n" +
	"  - [Describe how you thought through the sentences and how they helped you reach your conclusion. If the evidence is unclear or insufficient to provide a reliable answer, explain why. Your reasoning should not exceed 10,000 words.]\n" +
	"- **Answer:** [Provide an answer only if it is clearly supported by the information in the sentences. If the evidence is unclear or insufficient, respond with \"No answer.\"]"

// DefaultDatatype fills {datatype} when the caller names none.
const DefaultDatatype = "documents"

// Prompt is Template with {datatype} filled in ("" means DefaultDatatype).
func Prompt(datatype string) llm.Template {
	datatype = strings.TrimSpace(datatype)
	if datatype == "" {
		datatype = DefaultDatatype
	}
	return llm.Template(strings.ReplaceAll(string(Template), "{datatype}", datatype))
}

// Spec is a parsed "selfroute[:k=N|tokens=N][,prompt=ldar|adaptivek]".
type Spec struct {
	// K, when positive, makes the first step the top K passages.
	K int
	// Tokens, when positive, makes the first step the passages in rank order
	// while their tokens stay below Tokens (the official fixed_retrieve stops
	// at the passage that brings the sum to Tokens). Exactly one of K and
	// Tokens is set.
	Tokens int
	// Prompt is the first step's prompt: PromptLDAR or PromptAdaptiveK.
	Prompt string
}

// Default is the route "selfroute" names: LDAR's variant.
var Default = Spec{K: DefaultK, Prompt: PromptLDAR}

// String is the canonical spec: prompt=ldar is left out, as the default.
func (s Spec) String() string {
	var parts []string
	if s.K > 0 {
		parts = append(parts, fmt.Sprintf("k=%d", s.K))
	}
	if s.Prompt != PromptLDAR && s.Prompt != "" {
		parts = append(parts, "prompt="+s.Prompt)
	}
	if s.Tokens > 0 {
		parts = append(parts, fmt.Sprintf("tokens=%d", s.Tokens))
	}
	return Name + ":" + strings.Join(parts, ",")
}

// params declares the route's parameters: Resolve checks a spec against
// them, and so does ParseSpec.
var params = []ctxsel.ParamDef{
	{Name: "k", Default: DefaultK, Min: 1, Max: 10000, Integer: true,
		Doc: "passages of the first step (the default unless tokens is given or prompt=adaptivek)"},
	{Name: "tokens", Default: DefaultTokens, Min: 1, Max: maxTokens, Integer: true,
		Doc: "the first step keeps passages in rank order while their tokens stay below this (the default with prompt=adaptivek); not with k"},
	{Name: "prompt", Kind: ctxsel.WordParam, Words: []string{PromptLDAR, PromptAdaptiveK}, DefaultWord: PromptLDAR,
		Doc: "the first step's prompt: ldar (ldar.txt Table 5, routes on \"unanswerable\" in any case) or adaptivek (the official Adaptive-k code's, routes on \"unanswerable\" as written)"},
}

func init() {
	ctxsel.RegisterRoute(ctxsel.RouteDef{
		Name: Name,
		Doc: "Self-Route: the reader sees a first context with a prompt that lets it answer \"unanswerable\", and, when it does, the long context cut to its window with the normal prompt. " +
			"LDAR's variant (the default, ldar.txt App. C.4): the top k passages and Table 5's prompt; Adaptive-k's (prompt=adaptivek): the passages below 5,000 tokens and the official code's prompt",
		Params: params,
		New: func(sp ctxsel.Spec) (ctxsel.Route, error) {
			s, err := ParseSpec(sp)
			if err != nil {
				return nil, err
			}
			return route{s}, nil
		},
	})
}

// route is a Spec as a ctxsel.Route, what ctxsel.Resolve gives for
// "selfroute…". (Spec itself cannot be one: its Prompt field names the
// variant.)
type route struct{ s Spec }

var _ ctxsel.Route = route{}

// Name implements ctxsel.Route.
func (route) Name() string { return Name }

// String implements ctxsel.Route: the canonical spec.
func (r route) String() string { return r.s.String() }

// Plan implements ctxsel.Route: the first step (First) in the given order,
// then every candidate in rank order, the long context the caller cuts to
// the reader's window.
func (r route) Plan(c *ctxsel.Curve, order ctxsel.Order) ([]ctxsel.RouteStep, error) {
	first, err := ctxsel.Select(c, r.s.First(), ctxsel.Caps{}, order)
	if err != nil {
		return nil, err
	}
	full, err := ctxsel.Select(c, cutoff.TopK(c.Len()), ctxsel.Caps{}, ctxsel.RankOrder)
	if err != nil {
		return nil, err
	}
	return r.s.steps(first, full), nil
}

// Prompt implements ctxsel.Route: the first step's prompt (Prompts).
func (r route) Prompt(datatype string) string { return string(r.s.Prompts(datatype, "").First) }

// Declines implements ctxsel.Route (Spec.Declines).
func (r route) Declines(reply string) bool { return r.s.Declines(reply) }

// steps are the route's two steps over first and full.
func (s Spec) steps(first, full ctxsel.Selection) []ctxsel.RouteStep {
	return []ctxsel.RouteStep{
		{Name: fmt.Sprintf("top-%d", first.K), Selection: first},
		{Name: "long-context", Selection: full, Long: true},
	}
}

// maxTokens bounds tokens= (a budget no reader window reaches).
const maxTokens = 1 << 31

// ParseSpec reads the route's parameters from a strategy spec: k (1 …
// 10000) or tokens (1 … 2^31), and the word prompt (ldar, the default, or
// adaptivek). Without k or tokens the prompt's paper decides: LDAR's top 5
// passages, Adaptive-k's 5,000 tokens. Errors wrap ctxsel.ErrInvalidInput.
func ParseSpec(sp ctxsel.Spec) (Spec, error) {
	if sp.Name != Name {
		return Spec{}, fmt.Errorf("%w: %q is not %s", ctxsel.ErrInvalidInput, sp.Name, Name)
	}
	if err := ctxsel.CheckParams(sp, params); err != nil {
		return Spec{}, err
	}
	s := Spec{Prompt: cmp.Or(sp.Words["prompt"], PromptLDAR), K: int(sp.Params["k"]), Tokens: int(sp.Params["tokens"])}
	switch {
	case s.K > 0 && s.Tokens > 0:
		return Spec{}, fmt.Errorf("%w: %s: give k (passages) or tokens (a budget), not both", ctxsel.ErrInvalidInput, Name)
	case s.K == 0 && s.Tokens == 0 && s.Prompt == PromptAdaptiveK:
		s.Tokens = DefaultTokens
	case s.K == 0 && s.Tokens == 0:
		s.K = DefaultK
	}
	return s, nil
}

// First is the first step's strategy: the top K, or the passages in rank
// order while their tokens stay below Tokens. The official code counts
// tokens as characters / 3.3 and stops at the passage that brings the sum to
// the budget; ctxsel counts exact tokens, with the same stopping rule (so the
// first step may be empty when the best passage alone reaches the budget, as
// there).
func (s Spec) First() ctxsel.Strategy {
	if s.Tokens > 0 {
		return firstTokens{tokens: s.Tokens}
	}
	return cutoff.TopK(s.K)
}

// firstTokens is Adaptive-k's first step as a strategy.
type firstTokens struct{ tokens int }

func (f firstTokens) Name() string { return "selfroute_first" }
func (f firstTokens) Params() map[string]float64 {
	return map[string]float64{"tokens": float64(f.tokens)}
}

func (f firstTokens) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	k, used := cutoff.BudgetK(c, f.tokens-1) // below the budget: a sum reaching it stops
	return ctxsel.Cut{End: k, Decision: ctxsel.Decision{Kind: "budget", Rank: k - 1, Value: float64(f.tokens)},
		Reason: fmt.Sprintf("Self-Route's first step: passages in rank order while their tokens stay below %d: kept %d, %d tokens", f.tokens, k, used)}, nil
}

// Prompts are the route's two prompts.
type Prompts struct {
	// First lets the reader decline; Long is the normal long-context prompt.
	First, Long llm.Template
}

// Prompts returns the first step's prompt (LDAR's with {datatype} filled
// in, or the Adaptive-k code's) and long, the caller's normal long-context
// prompt, for the second step (llm.FactoidQA when empty).
func (s Spec) Prompts(datatype string, long llm.Template) Prompts {
	first := Prompt(datatype)
	if s.Prompt == PromptAdaptiveK {
		first = TemplateAdaptiveK
	}
	if long == "" {
		long = llm.FactoidQA
	}
	return Prompts{First: first, Long: long}
}

// Declines reports whether a first-step reply routes to the long context:
// it holds "unanswerable" anywhere. The Adaptive-k variant matches case as
// the official code does ("unanswerable" in prediction); LDAR publishes no
// routing code, and its prompt asks for the bare word, which readers often
// capitalise, so its variant ignores case.
func (s Spec) Declines(reply string) bool {
	if s.Prompt == PromptAdaptiveK {
		return strings.Contains(reply, "unanswerable")
	}
	return strings.Contains(strings.ToLower(reply), "unanswerable")
}

// Reader asks the reader LLM with the passages of one selection rendered
// into prompt.
type Reader func(ctx context.Context, sel ctxsel.Selection, prompt llm.Template) (llm.Response, error)

// Step is one call of the route: the context it showed and the reply.
type Step struct {
	Selection ctxsel.Selection
	Reply     llm.Response
}

// Result is what the route did: one step, or two when the reader declined
// the first context.
type Result struct {
	Steps []Step
}

// Routed reports whether the long-context step ran.
func (r Result) Routed() bool { return len(r.Steps) > 1 }

// Final is the step whose reply is the answer.
func (r Result) Final() Step { return r.Steps[len(r.Steps)-1] }

// Route asks with first and p.First; when the reply declines (Declines), it
// asks again with full and p.Long. It is ctxsel.RunRoute over the two
// selections, for a caller that holds them already. On an error the steps
// completed so far are returned with it.
func (s Spec) Route(ctx context.Context, first, full ctxsel.Selection, p Prompts, read Reader) (Result, error) {
	var res Result
	_, err := ctxsel.RunRoute(ctx, route{s}, s.steps(first, full), func(ctx context.Context, st ctxsel.RouteStep) (string, error) {
		prompt := p.First
		if st.Long {
			prompt = p.Long
		}
		r, err := read(ctx, st.Selection, prompt)
		if err != nil {
			return "", err
		}
		res.Steps = append(res.Steps, Step{st.Selection, r})
		return r.Content, nil
	})
	return res, err
}
