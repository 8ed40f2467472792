package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/embed/uselite"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// envBandPolicy names the environment variable that, set to a policy file
// (`ctxsel train band --out`), makes band strategies run that policy
// instead of the embedded one. The command line reads it, here at the
// edge, and hands the policy to the band as a dependency (ldar.DepPolicy).
const envBandPolicy = "CTXSEL_BAND_POLICY"

// bandPolicyFromEnv reads the policy $CTXSEL_BAND_POLICY names; nil when
// it is unset (the band then runs its embedded policy).
func bandPolicyFromEnv() (*ldar.Policy, error) {
	path := os.Getenv(envBandPolicy)
	if path == "" {
		return nil, nil
	}
	p, err := ldar.Load(path)
	if err != nil {
		return nil, usageError{fmt.Errorf("$%s: %w", envBandPolicy, err)}
	}
	return p, nil
}

// policyDeps serves the band's policy p as a dependency; nil for nil (the
// band then runs its embedded policy).
func policyDeps(p *ldar.Policy) ctxsel.Deps {
	if p == nil {
		return nil
	}
	return ctxsel.DepsOf(map[string]any{ldar.DepPolicy: p})
}

// selectorSources are what the command line supplies to the strategies
// and text selectors a spec may name, each built on first need: the
// picker's LLM (from --picker, never from input data), the evidence
// selector's sentence embedder (the embedded use-lite model, cached, which
// its weights were fitted with), token counter and model
// (--evidence-model), and the band's policy ($CTXSEL_BAND_POLICY).
type selectorSources struct {
	pickerEndpoint string
	openLLM        func() (func(string) (llm.Client, error), error)
	// embedder gives the sentence embedder; nil opens the embedded model
	// once (close it with Close).
	embedder func() (embed.Embedder, error)
	// counter counts tokens as the caller counts its candidates (nil: the
	// selector's default, cl100k_base).
	counter token.Counter
	// evidenceModel is a model file from `ctxsel train evidence` ("" = the
	// embedded one).
	evidenceModel string

	mu     sync.Mutex
	own    embed.Embedder
	closes []func() error
	// policy is the band's policy (nil: the embedded one), read from the
	// environment on first need unless policyRead says it was given.
	policy     *ldar.Policy
	policyRead bool
}

// specResolver is how the CLI resolves strategy specs: strategies,
// answering routes, text selectors with their dependencies from src, and
// auto values from a length estimate (estimate, or
// $CTXSEL_LENGTH_ESTIMATE). Reading the estimate is I/O, so it happens
// here at the edge, not in a strategy.
func specResolver(src *selectorSources, estimate string) ctxsel.Resolver {
	return ctxsel.Resolver{Deps: src.deps, Auto: autoEstimate(estimate)}
}

// pickerSources are the sources of a command whose only text selector
// dependency it configures is the picker's LLM.
func pickerSources(endpoint string, open func() (func(string) (llm.Client, error), error)) *selectorSources {
	return &selectorSources{pickerEndpoint: endpoint, openLLM: open}
}

func (s *selectorSources) deps(name string) (any, error) {
	switch name {
	case ctxsel.DepLLM:
		if strings.TrimSpace(s.pickerEndpoint) == "" {
			return nil, usageError{errors.New("give the picker LLM with --picker PROVIDER:MODEL[@BASE_URL]")}
		}
		o, err := s.openLLM()
		if err != nil {
			return nil, err
		}
		c, err := o(s.pickerEndpoint)
		if err != nil {
			return nil, usageError{fmt.Errorf("--picker: %w", err)}
		}
		return c, nil
	case ctxsel.DepEmbedder:
		if s.embedder != nil {
			return s.embedder()
		}
		return s.defaultEmbedder()
	case ctxsel.DepCounter:
		if s.counter == nil {
			return nil, fmt.Errorf("%w: %s", ctxsel.ErrNoDep, name)
		}
		return s.counter, nil
	case ldar.DepPolicy:
		p, err := s.bandPolicy()
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, fmt.Errorf("%w: %s", ctxsel.ErrNoDep, name)
		}
		return p, nil
	case evidence.DepModel:
		if s.evidenceModel == "" {
			return nil, fmt.Errorf("%w: %s", ctxsel.ErrNoDep, name)
		}
		m, err := readEvidenceModel("--evidence-model", s.evidenceModel)
		if err != nil {
			return nil, usageError{err}
		}
		return m, nil
	}
	return nil, fmt.Errorf("%w: %s: the command line supplies no such dependency", ctxsel.ErrNoDep, name)
}

// readEvidenceModel reads the evidence model file a flag names.
func readEvidenceModel(flag, path string) (*evidence.Model, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	m, err := evidence.ParseModel(b)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return m, nil
}

// bandPolicy is the band's policy: the one given, else the one the
// environment names (read once), else nil.
func (s *selectorSources) bandPolicy() (*ldar.Policy, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.policyRead {
		p, err := bandPolicyFromEnv()
		if err != nil {
			return nil, err
		}
		s.policy, s.policyRead = p, true
	}
	return s.policy, nil
}

// defaultEmbedder opens the embedded model once, through the embedding
// cache.
func (s *selectorSources) defaultEmbedder() (embed.Embedder, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own == nil {
		e, closeFn, err := openEmbedder(embedders.Default, "")
		if err != nil {
			return nil, err
		}
		s.own, s.closes = e, append(s.closes, closeFn)
	}
	return s.own, nil
}

// Close releases what the sources opened.
func (s *selectorSources) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, c := range s.closes {
		errs = append(errs, c())
	}
	s.closes, s.own = nil, nil
	return errors.Join(errs...)
}

// sentencesFrom is the evidence selector's sentence embedder: the first
// of es that is the embedded use-lite model (uselite.ForSentences), which
// so shares its model and embedding cache, else a use-lite model of the
// sources' own, opened on first need.
func (s *selectorSources) sentencesFrom(es ...embed.Embedder) (embed.Embedder, error) {
	if e, ok := uselite.ForSentences(es...); ok {
		return e, nil
	}
	return s.defaultEmbedder()
}

// serverSources are the strategy and text selector dependencies of serve
// and mcp: the band's policy read at start (policy; nil: the embedded
// one), and the evidence selector's sentence embedder, sentencesFrom the
// index's embedder (indexEmb: the one index add --sentences stored vectors
// by, which embeds /v1/ask's question) and the served one. Requests never
// get an LLM from them.
func serverSources(indexEmb, emb embed.Embedder, policy *ldar.Policy) *selectorSources {
	src := &selectorSources{policy: policy, policyRead: true}
	src.embedder = func() (embed.Embedder, error) { return src.sentencesFrom(indexEmb, emb) }
	return src
}
