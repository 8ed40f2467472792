// Package export writes Context-Picker training data for existing RL
// engines (training runs on the user's GPUs, not here): verl's parquet
// layout and TRL's GRPO JSONL. Each row is one mined record: the picker
// prompt of a stage over the record's candidates, the gold ids (the mined
// minimal sufficient set) as ground truth, and the offered ids and stage
// that the reward (POST /v1/reward, python/verl_reward.py) needs. Records
// are split into train and validation by question group, so that a
// question's rewrites never straddle the split (the paper's leakage rule).
package export

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/picker"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// DataSource names ctxsel's rows in verl (reward hooks switch on it).
const DataSource = "ctxsel/context-picker"

// Options configure Rows.
type Options struct {
	// Stage picks the prompt (1: recall-oriented, 2: precision-oriented).
	Stage int
	// Budget is the token budget of the offered candidates (default
	// picker.DefaultBudget), ranked by BM25 over the question (the answer
	// is unknown at inference); Order is how they are shown.
	Budget int
	Order  ctxsel.Order
	// Counter counts passage tokens (default token.Default).
	Counter token.Counter
	// ValPercent of question groups go to validation (default 10); Seed
	// varies the split.
	ValPercent int
	Seed       uint64
}

// Row is one training example, engine-neutral.
type Row struct {
	ID       string
	Group    string
	Split    string // "train" or "val"
	Question string
	Prompt   string
	Offered  []string
	Gold     []string
	Stage    int
}

// Rows builds the rows of mined records. A record without gold passages
// is skipped (counted in the second result).
func Rows(recs []dataset.Record, opt Options) ([]Row, int, error) {
	if opt.Stage != 1 && opt.Stage != 2 {
		return nil, 0, fmt.Errorf("%w: export: stage %d, want 1 or 2", ctxsel.ErrInvalidInput, opt.Stage)
	}
	if opt.Budget == 0 {
		opt.Budget = picker.DefaultBudget
	}
	if opt.ValPercent == 0 {
		opt.ValPercent = 10
	}
	if opt.Budget < 1 || opt.ValPercent < 0 || opt.ValPercent > 100 {
		return nil, 0, fmt.Errorf("%w: export: budget %d must be positive and val percent %d in 0..100", ctxsel.ErrInvalidInput, opt.Budget, opt.ValPercent)
	}
	if opt.Counter == nil {
		c, err := token.New(token.Default)
		if err != nil {
			return nil, 0, fmt.Errorf("export: %w", err)
		}
		opt.Counter = c
	}
	var rows []Row
	skipped := 0
	for _, r := range recs {
		var gold []string
		for _, p := range r.Passages {
			if p.Gold {
				gold = append(gold, p.ID)
			}
		}
		if len(gold) == 0 {
			skipped++
			continue
		}
		offered := offer(r, opt)
		ps := make([]picker.Offered, len(offered))
		ids := make([]string, len(offered))
		for j, i := range offered {
			ps[j] = picker.Offered{ID: r.Passages[i].ID, Text: r.Passages[i].Text}
			ids[j] = r.Passages[i].ID
		}
		group := groupOf(r)
		rows = append(rows, Row{
			ID: r.ID, Group: group, Split: split(group, opt.Seed, opt.ValPercent), Question: r.Question,
			Prompt: picker.Prompt(picker.Stage(opt.Stage), r.Question, ps), Offered: ids, Gold: gold, Stage: opt.Stage,
		})
	}
	return rows, skipped, nil
}

// offer ranks the passages by BM25 over the question and keeps the best
// within the budget, in the requested order.
func offer(r dataset.Record, opt Options) []int {
	texts := make([]string, len(r.Passages))
	for i, p := range r.Passages {
		texts[i] = p.Text
	}
	idx := score.RankBM25(r.Question, texts)
	var out []int
	used := 0
	for _, i := range idx {
		t := opt.Counter.Count(r.Passages[i].Text)
		if used+t > opt.Budget {
			break
		}
		used += t
		out = append(out, i)
	}
	if opt.Order == ctxsel.DocumentOrder {
		slices.Sort(out)
	}
	return out
}

// groupOf is meta.mined.group (set by ctxsel mine, shared by a question's
// rewrites), else the record id.
func groupOf(r dataset.Record) string {
	var meta struct {
		Mined struct {
			Group string `json:"group"`
		} `json:"mined"`
	}
	if len(r.Meta) > 0 && json.Unmarshal(r.Meta, &meta) == nil && meta.Mined.Group != "" {
		return meta.Mined.Group
	}
	return r.ID
}

// split assigns a group to "val" with probability pct/100, by a seeded hash.
func split(group string, seed uint64, pct int) string {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(group))
	if int(h.Sum64()%100) < pct {
		return "val"
	}
	return "train"
}

type verlMessage struct {
	Role    string `parquet:"role"`
	Content string `parquet:"content"`
}

type verlReward struct {
	Style string `parquet:"style"`
	// GroundTruth is the gold ids as a JSON list.
	GroundTruth string `parquet:"ground_truth"`
}

type verlExtra struct {
	Split    string   `parquet:"split"`
	Index    int64    `parquet:"index"`
	ID       string   `parquet:"id"`
	Group    string   `parquet:"group"`
	Question string   `parquet:"question"`
	Stage    int64    `parquet:"stage"`
	Offered  []string `parquet:"offered,list"`
}

type verlRow struct {
	DataSource  string        `parquet:"data_source"`
	Prompt      []verlMessage `parquet:"prompt,list"`
	Ability     string        `parquet:"ability"`
	RewardModel verlReward    `parquet:"reward_model"`
	ExtraInfo   verlExtra     `parquet:"extra_info"`
}

// WriteVerl writes rows in verl's RL dataset layout: data_source, prompt
// (chat messages), ability, reward_model {style, ground_truth}, extra_info.
func WriteVerl(w io.Writer, rows []Row) error {
	out := make([]verlRow, len(rows))
	for i, r := range rows {
		gt, err := json.Marshal(r.Gold)
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		out[i] = verlRow{
			DataSource:  DataSource,
			Prompt:      []verlMessage{{Role: "user", Content: r.Prompt}},
			Ability:     "context-picking",
			RewardModel: verlReward{Style: "rule", GroundTruth: string(gt)},
			ExtraInfo:   verlExtra{Split: r.Split, Index: int64(i), ID: r.ID, Group: r.Group, Question: r.Question, Stage: int64(r.Stage), Offered: r.Offered},
		}
	}
	if err := parquet.Write(w, out); err != nil {
		return fmt.Errorf("export: parquet: %w", err)
	}
	return nil
}

// trlRow is one line of TRL's GRPO dataset: a conversational prompt plus
// the columns TRL passes to reward functions as keyword arguments.
type trlRow struct {
	Prompt  []map[string]string `json:"prompt"`
	Gold    []string            `json:"gold"`
	Offered []string            `json:"offered"`
	Stage   int                 `json:"stage"`
	ID      string              `json:"id"`
	Group   string              `json:"group"`
}

// WriteTRL writes rows as TRL GRPO JSONL.
func WriteTRL(w io.Writer, rows []Row) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(trlRow{Prompt: []map[string]string{{"role": "user", "content": r.Prompt}}, Gold: r.Gold, Offered: r.Offered, Stage: r.Stage, ID: r.ID, Group: r.Group}); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	return nil
}

// Split divides rows by their Split field.
func Split(rows []Row) (train, val []Row) {
	for _, r := range rows {
		if strings.EqualFold(r.Split, "val") {
			val = append(val, r)
		} else {
			train = append(train, r)
		}
	}
	return train, val
}
