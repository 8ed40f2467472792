// Package sample ships a small labelled data set inside the binary, so
// `ctxsel eval` runs on a fresh machine with no download: 100 HotpotQA
// questions (CC BY-SA 4.0, see LICENSE.md), 2 gold and ~8 distractor
// passages each.
package sample

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/ctxsel/ctxsel/dataset"
)

//go:embed hotpotqa_sample.jsonl.gz
var hotpotqa []byte

// Name describes the bundled sample in reports.
const Name = "bundled sample: 100 HotpotQA dev questions (CC BY-SA 4.0)"

// HotpotQA returns the bundled records.
func HotpotQA() ([]dataset.Record, error) {
	recs, err := dataset.Load(bytes.NewReader(hotpotqa))
	if err != nil {
		return nil, fmt.Errorf("bundled sample: %w", err)
	}
	return recs, nil
}
