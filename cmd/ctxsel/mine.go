package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/embed/embedders"
	"github.com/ctxsel/ctxsel/internal/termtext"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/mine"
	"github.com/ctxsel/ctxsel/token"
)

func cmdMine(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mine", `Usage: ctxsel mine --data FILE --generator LLM [--judge subem|llm-binary:LLM|llm:LLM] [--k 10] --out mined.jsonl

Mines minimal sufficient evidence sets (Context-Picker, Algorithm 1): BM25
over [question; answer] takes each record's top-k passages, the generator
answers from them and the judge checks the answer. A record whose full set
fails is dropped and counted; otherwise passages are removed one at a time
while the answer stays correct, until none can go. The output is the common
JSONL format with the original passage ids, gold = the mined set, and the
provenance (candidates, removal order, calls, tokens) in meta.mined.

The judge: Algorithm 1's is an LLM that decides whether the answer
semantically matches the gold answer. With an LLM judge the verdict must be
a full match by default (--threshold 1): llm-binary:LLM or llm-ldar:LLM
answer correct/incorrect, and llm:LLM (the A.1.3 judge) counts only Exact
Match on every gold entry, not Partial Match. The default, subem, needs no
LLM judge but is not the paper's: it counts an answer as correct when a gold
answer appears in it word for word (after SQuAD normalisation), so a
paraphrase is wrong and any answer that contains the gold string is right;
it suits short factoid answers (HotpotQA, MuSiQue), not sentence answers.

Each finished record is checkpointed (--checkpoint, default OUT.ckpt): an
interrupted or capped run resumes where it stopped.

`+llmHelp, stderr)
	data := fs.String("data", "", "labelled JSONL file (plain or gzip) with questions, answers and passages")
	generator := fs.String("generator", "", "generator LLM that answers from the candidates")
	judgeSpec := fs.String("judge", "subem", "answer judge: em, subem, f1, or an LLM judge: llm-binary:LLM, llm-ldar:LLM, llm:LLM (A.1.3), llm-any:LLM")
	threshold := fs.Float64("threshold", 0, "judge score counted as a correct answer (0: 1, a full match, for an LLM judge; 0.5 for em, subem, f1)")
	k := fs.Int("k", mine.DefaultK, "BM25 candidates per question")
	out := fs.String("out", "", "output JSONL file (written atomically at the end)")
	ckpt := fs.String("checkpoint", "", "checkpoint file (default OUT.ckpt; \"off\": none)")
	workers := fs.Int("workers", 4, "questions mined at once")
	maxTokens := fs.Int("max-llm-tokens", 0, "stop starting LLM calls after this many tokens in this run (0: no cap); rerun to resume")
	dryRun := fs.Bool("dry-run", false, "print the cost bounds (calls, prompt tokens) and call nothing")
	rewrites := fs.Int("rewrites", 0, "paraphrases per mined question (validated; kept in the original's split group)")
	rewriter := fs.String("rewriter", "", "LLM for --rewrites (default: the generator)")
	chunkSpec := fs.String("chunk", "", "re-chunk each passage as a raw document first: semantic, tokens:size=N, … (default: use the passages)")
	encoding := fs.String("encoding", token.Default, "token encoding for --dry-run counts and --chunk")
	limit := fs.Int("limit", 0, "use only the first N records (0 = all)")
	llmf := addLLMFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *data == "":
		return usageError{errors.New("mine: --data is required")}
	case *k < 1 || *workers < 1 || *limit < 0 || *maxTokens < 0 || !(*threshold >= 0 && *threshold <= 1):
		return usageError{errors.New("mine: --k and --workers must be positive, --limit and --max-llm-tokens not negative, --threshold in [0, 1]")}
	case !*dryRun && (*generator == "" || *out == ""):
		return usageError{errors.New("mine: --generator and --out are required (or --dry-run)")}
	}
	recs, err := dataset.LoadFile(*data)
	if err != nil {
		return err
	}
	if *limit > 0 && *limit < len(recs) {
		recs = recs[:*limit]
	}
	counter, err := token.New(*encoding)
	if err != nil {
		return usageError{err}
	}
	if *chunkSpec != "" {
		if recs, err = rechunk(ctx, recs, *chunkSpec, counter); err != nil {
			return err
		}
	}
	if *dryRun {
		est, err := mine.EstimateCost(recs, *k, "", counter)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d questions, k=%d: generator calls %d–%d, prompt tokens %d–%d (%s)\n",
			est.Questions, *k, est.MinCalls, est.MaxCalls, est.MinPromptTokens, est.MaxPromptTokens, counter.Encoding())
		switch {
		case strings.HasPrefix(strings.TrimSpace(*judgeSpec), "llm:"):
			fmt.Fprintln(stdout, "the A.1.3 judge adds two calls per generator call (answer extraction, then the labels)")
		case answer.IsLLM(*judgeSpec):
			fmt.Fprintln(stdout, "the LLM judge adds one call per generator call")
		}
		if *rewrites > 0 {
			fmt.Fprintf(stdout, "rewrites add one call per mined question (at most %d)\n", est.Questions)
		}
		return nil
	}
	open, cache, err := llmf.open(stderr)
	if err != nil {
		return err
	}
	defer cache.Close()
	gen, err := open(*generator)
	if err != nil {
		return usageError{fmt.Errorf("--generator: %w", err)}
	}
	judge, err := answer.ParseJudge(*judgeSpec, open)
	if err != nil {
		return usageError{fmt.Errorf("--judge: %w", err)}
	}
	ro := mine.RunOptions{
		Options: mine.Options{K: *k, Generator: gen, Judge: judge, Threshold: *threshold},
		Workers: *workers, MaxLLMTokens: *maxTokens, Rewrites: *rewrites,
	}
	if *rewrites > 0 {
		ro.Rewriter = gen
		if *rewriter != "" {
			if ro.Rewriter, err = open(*rewriter); err != nil {
				return usageError{fmt.Errorf("--rewriter: %w", err)}
			}
		}
	}
	switch *ckpt {
	case "":
		ro.Checkpoint = *out + ".ckpt"
	case "off":
	default:
		ro.Checkpoint = *ckpt
	}
	ro.Progress = mineProgress(stderr)
	ro.Note = func(s string) { fmt.Fprintln(stderr, "note: checkpoint:", termtext.Line(s)) }
	mined, sum, runErr := mine.Run(ctx, recs, ro)
	if len(mined) > 0 || runErr == nil {
		if err := writeFile(*out, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			for _, r := range mined {
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("mine: write %s: %w", *out, err)
		}
	}
	fmt.Fprintf(stdout, "%d questions: %d mined (%d resumed from the checkpoint), %d dropped (full set judged wrong), %d pending; %d calls, %d LLM tokens this run; mean gold %.2f of %.1f candidates; %d rewrites (%d rejected) → %s\n",
		sum.Questions, sum.Mined, sum.Resumed, sum.Dropped, sum.Pending, sum.Calls, sum.Tokens, sum.MeanGold, sum.MeanCandidates, sum.Rewrites, sum.RewritesRejected, *out)
	if runErr != nil {
		if errors.Is(runErr, llm.ErrTokenCap) {
			return fmt.Errorf("%w; run the same command again to resume", runErr)
		}
		return runErr
	}
	return nil
}

// mineProgress prints a line every 10 records and at the end: done,
// dropped, tokens, elapsed and the ETA.
func mineProgress(w io.Writer) func(mine.Status) {
	return func(s mine.Status) {
		if s.Done%10 != 0 && s.Done != s.Total {
			return
		}
		eta := "?"
		if fresh := s.Done - s.Resumed; fresh > 0 {
			eta = (time.Duration(float64(s.Elapsed) / float64(fresh) * float64(s.Total-s.Done))).Round(time.Second).String()
		}
		fmt.Fprintf(w, "mine: %d/%d questions (%d dropped, %d resumed), %d LLM tokens, %s elapsed, ETA %s\n",
			s.Done, s.Total, s.Dropped, s.Resumed, s.Tokens, s.Elapsed.Round(time.Second), eta)
	}
}

// rechunk splits every record's passages with a chunker spec; "semantic"
// embeds sentences with the bundled USE-Lite model.
func rechunk(ctx context.Context, recs []dataset.Record, spec string, counter *token.Tiktoken) ([]dataset.Record, error) {
	var e embed.Embedder
	if strings.HasPrefix(strings.TrimSpace(spec), "semantic") {
		emb, closeEmb, err := openEmbedder(embedders.Default, "")
		if err != nil {
			return nil, err
		}
		defer func() { _ = closeEmb() }()
		e = emb
	}
	c, err := chunk.Parse(spec, counter, e)
	if err != nil {
		return nil, usageError{fmt.Errorf("--chunk: %w", err)}
	}
	out := make([]dataset.Record, len(recs))
	for i, r := range recs {
		if out[i], err = mine.Rechunk(ctx, r, c); err != nil {
			return nil, err
		}
	}
	return out, nil
}
