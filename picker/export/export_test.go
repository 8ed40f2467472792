package export_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/picker/export"
	"github.com/ctxsel/ctxsel/picker/pickertest"
	"github.com/ctxsel/ctxsel/picker/reward"
)

type words struct{}

func (words) Encoding() string   { return "words" }
func (words) Count(s string) int { return len(strings.Fields(s)) }

// mined builds n records; each has a group of its own except the rewrite
// pairs ("qN" and "qN#rw1" share group "qN").
func mined(n int) []dataset.Record {
	var recs []dataset.Record
	for i := range n {
		ps := []dataset.Passage{
			{ID: "a", Text: fmt.Sprintf("alpha %d river town", i), Gold: true},
			{ID: "b 2", Text: fmt.Sprintf("beta %d mountain", i)},
			{ID: "c\"q", Text: fmt.Sprintf("gamma %d river", i), Gold: i%2 == 0},
		}
		meta := fmt.Sprintf(`{"mined":{"group":"q%d"}}`, i)
		recs = append(recs, dataset.Record{ID: fmt.Sprint("q", i), Question: fmt.Sprintf("which river town %d?", i), Answers: []string{"x"}, Passages: ps, Meta: json.RawMessage(meta)})
		rw := recs[len(recs)-1]
		rw.ID += "#rw1"
		rw.Question = fmt.Sprintf("what town by the river, %d?", i)
		recs = append(recs, rw)
	}
	recs = append(recs, dataset.Record{ID: "nogold", Question: "q", Passages: []dataset.Passage{{ID: "z", Text: "z"}}})
	return recs
}

func TestRows(t *testing.T) {
	rows, skipped, err := export.Rows(mined(40), export.Options{Stage: 2, Counter: words{}, ValPercent: 25, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 1 || len(rows) != 80 {
		t.Fatalf("%d rows, %d skipped", len(rows), skipped)
	}
	split := map[string]string{}
	val := 0
	for _, r := range rows {
		if s, ok := split[r.Group]; ok && s != r.Split {
			t.Fatalf("group %s split across %s and %s", r.Group, s, r.Split)
		}
		split[r.Group] = r.Split
		if r.Split == "val" {
			val++
		}
		_, offered, _ := pickertest.Offered(r.Prompt)
		if !slices.Equal(offered, r.Offered) || len(r.Offered) != 3 || r.Stage != 2 || !strings.Contains(r.Prompt, "Favour precision") {
			t.Fatalf("row %+v", r)
		}
	}
	if val == 0 || val == len(rows) {
		t.Fatalf("%d of %d rows in val", val, len(rows))
	}
	// The budget caps what is offered: 4 words fit one passage.
	rows, _, _ = export.Rows(mined(1), export.Options{Stage: 1, Counter: words{}, Budget: 4})
	if len(rows[0].Offered) != 1 || !strings.Contains(rows[0].Prompt, "Favour recall") {
		t.Fatalf("budget 4: %+v", rows[0])
	}
	if _, _, err := export.Rows(mined(1), export.Options{Stage: 3}); err == nil {
		t.Fatal("stage 3 accepted")
	}
}

// The verl parquet file is read back by hyparquet, an independent reader
// run by node: every column as written, and the reward hook's inputs
// (ground truth, offered ids, stage) give the expected Eq. 6 reward.
func TestVerlParquetReadBackByHyparquet(t *testing.T) {
	dir, _ := filepath.Abs("testdata/hyparquet")
	node, err := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "hyparquet"))
	if err != nil || modErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI needs node and hyparquet: run `npm ci --prefix picker/export/testdata/hyparquet` (node: %v, module: %v)", err, modErr)
		}
		t.Skip("node or hyparquet missing: npm ci --prefix picker/export/testdata/hyparquet")
	}
	rows, _, err := export.Rows(mined(5), export.Options{Stage: 1, Counter: words{}, Order: ctxsel.DocumentOrder})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := export.WriteVerl(&buf, rows); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "train.parquet")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "read.mjs"), file)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got struct {
		NumRows int `json:"num_rows"`
		Rows    []struct {
			DataSource string `json:"data_source"`
			Prompt     []struct{ Role, Content string }
			Ability    string
			Reward     struct {
				Style       string
				GroundTruth string `json:"ground_truth"`
			} `json:"reward_model"`
			Extra struct {
				Split, ID, Group, Question string
				Index, Stage               int
				Offered                    []string
			} `json:"extra_info"`
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.NumRows != len(rows) || len(got.Rows) != len(rows) {
		t.Fatalf("read %d/%d rows of %d", got.NumRows, len(got.Rows), len(rows))
	}
	for i, g := range got.Rows {
		w := rows[i]
		var gold []string
		if err := json.Unmarshal([]byte(g.Reward.GroundTruth), &gold); err != nil {
			t.Fatal(err)
		}
		if g.DataSource != export.DataSource || len(g.Prompt) != 1 || g.Prompt[0].Role != "user" || g.Prompt[0].Content != w.Prompt ||
			g.Ability != "context-picking" || g.Reward.Style != "rule" || !slices.Equal(gold, w.Gold) ||
			g.Extra.ID != w.ID || g.Extra.Group != w.Group || g.Extra.Split != w.Split || g.Extra.Question != w.Question ||
			g.Extra.Index != i || g.Extra.Stage != 1 || !slices.Equal(g.Extra.Offered, w.Offered) {
			t.Fatalf("row %d read back as %+v, wrote %+v", i, g, w)
		}
		// The hook's inputs score the gold answer 1.
		r, err := reward.Score(`{"ids":`+g.Reward.GroundTruth+`}`, g.Extra.Offered, gold, g.Extra.Stage, reward.DefaultParams)
		if err != nil || r.Reward != 1 {
			t.Fatalf("row %d: reward %+v %v", i, r, err)
		}
	}
}

func TestWriteTRL(t *testing.T) {
	rows, _, err := export.Rows(mined(2), export.Options{Stage: 2, Counter: words{}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := export.WriteTRL(&buf, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(rows) {
		t.Fatalf("%d lines", len(lines))
	}
	var r struct {
		Prompt  []map[string]string
		Gold    []string
		Offered []string
		Stage   int
	}
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil || r.Prompt[0]["role"] != "user" || r.Prompt[0]["content"] != rows[0].Prompt || r.Stage != 2 || !slices.Equal(r.Gold, rows[0].Gold) {
		t.Fatalf("%v %s", err, lines[0])
	}
}
