package mine

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/dataset"
)

// Rechunk splits every passage of rec, taken as a raw document, with c
// (the paper chunks semantically, §3.2) and returns the record over the
// chunks: ids "<passage id>#<n>", each chunk gold when its passage was.
func Rechunk(ctx context.Context, rec dataset.Record, c chunk.Chunker) (dataset.Record, error) {
	out := rec
	out.Passages = nil
	for _, p := range rec.Passages {
		cs, err := c.Chunk(ctx, p.ID, p.Text)
		if err != nil {
			return dataset.Record{}, fmt.Errorf("chunk %s/%s: %w", rec.ID, p.ID, err)
		}
		for _, ch := range cs {
			out.Passages = append(out.Passages, dataset.Passage{ID: ch.ID(), Text: ch.Text, Gold: p.Gold})
		}
	}
	if len(out.Passages) == 0 {
		return dataset.Record{}, fmt.Errorf("record %q: no chunks", rec.ID)
	}
	return out, nil
}
