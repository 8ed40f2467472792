package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/picker"
	"github.com/ctxsel/ctxsel/picker/export"
	"github.com/ctxsel/ctxsel/token"
)

func cmdExport(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "grpo" {
		return usageError{errors.New("export: usage: ctxsel export grpo --data mined.jsonl --format verl|trl --stage 1|2 --out DIR")}
	}
	fs := newFlags("export grpo", `Usage: ctxsel export grpo --data mined.jsonl --format verl|trl --stage 1|2 --out DIR

Writes Context-Picker training data for an RL engine from mined records
(ctxsel mine): one row per record with the stage's picker prompt over the
record's candidates (BM25 over the question within --budget tokens), the
gold ids as ground truth, and the offered ids and stage the reward needs.
verl: DIR/train.parquet and DIR/val.parquet (data_source, prompt, ability,
reward_model, extra_info; reward hook python/verl_reward.py calling
ctxsel serve's POST /v1/reward). trl: DIR/train.jsonl and DIR/val.jsonl.
Train and validation are split by question group: rewrites stay with their
question.`, stderr)
	data := fs.String("data", "", "mined JSONL (ctxsel mine --out)")
	format := fs.String("format", "verl", "verl (parquet) or trl (JSONL)")
	stage := fs.Int("stage", 1, "1: recall-oriented prompt and margin red1; 2: precision-oriented, red2")
	out := fs.String("out", "", "output directory")
	budget := fs.Int("budget", picker.DefaultBudget, "token budget of the candidates shown in each prompt")
	order := fs.String("order", "rank", "candidate order in the prompt: rank or document")
	valPct := fs.Int("val-percent", 10, "percent of question groups in validation")
	seed := fs.Uint64("seed", 1, "seed of the train/validation split")
	encoding := fs.String("encoding", token.Default, "token encoding for the budget")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *data == "" || *out == "" {
		return usageError{errors.New("export grpo: --data and --out are required")}
	}
	if *format != "verl" && *format != "trl" {
		return usageError{fmt.Errorf("export grpo: --format=%q: want verl or trl", *format)}
	}
	ord, err := ctxsel.ParseOrder(*order)
	if err != nil || ord == ctxsel.EdgesOrder {
		return usageError{fmt.Errorf("export grpo: --order=%q: want rank or document", *order)}
	}
	counter, err := token.New(*encoding)
	if err != nil {
		return usageError{err}
	}
	recs, err := dataset.LoadFile(*data)
	if err != nil {
		return err
	}
	rows, skipped, err := export.Rows(recs, export.Options{Stage: *stage, Budget: *budget, Order: ord, Counter: counter, ValPercent: *valPct, Seed: *seed})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("%w: export grpo: none of %d records has gold passages", ctxsel.ErrInvalidInput, len(recs))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("export grpo: %w", err)
	}
	train, val := export.Split(rows)
	write, ext := export.WriteVerl, ".parquet"
	if *format == "trl" {
		write, ext = export.WriteTRL, ".jsonl"
	}
	for _, part := range []struct {
		name string
		rows []export.Row
	}{{"train", train}, {"val", val}} {
		path := filepath.Join(*out, part.name+ext)
		if err := writeFile(path, func(w io.Writer) error { return write(w, part.rows) }); err != nil {
			return fmt.Errorf("export grpo: %w", err)
		}
	}
	fmt.Fprintf(stdout, "%d rows (%d train, %d val; %d records without gold skipped), stage %d, %s → %s\n", len(rows), len(train), len(val), skipped, *stage, *format, *out)
	return nil
}
