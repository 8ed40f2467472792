// Package progress draws a one-line progress bar with an ETA on a terminal
// and stays silent otherwise, so logs and pipes never fill with bars.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ctxsel/ctxsel/internal/termtext"
)

// Bar is a progress bar; the zero value is silent.
type Bar struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	start time.Time
	last  time.Time
	note  string
}

// New returns a bar drawing on w when w is a terminal, or a silent bar. A
// termtext.Writer is seen through: the bar's own CR must reach the
// terminal, and its label and note are escaped here instead.
func New(w io.Writer, label string) *Bar {
	w = termtext.Underlying(w)
	if f, ok := w.(*os.File); !ok || !isTerminal(f) {
		return &Bar{}
	}
	return &Bar{w: w, label: termtext.Line(label), start: time.Now()}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Note sets text drawn after the counts, e.g. the tokens spent so far.
func (b *Bar) Note(s string) {
	if b == nil || b.w == nil {
		return
	}
	b.mu.Lock()
	b.note = termtext.Line(s)
	b.mu.Unlock()
}

// Update redraws the bar (at most ten times a second, and always at the end),
// with the note set by Note after the ETA.
func (b *Bar) Update(done, total int) {
	if b == nil || b.w == nil || total <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if done < total && now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last = now
	const width = 30
	filled := width * done / total
	elapsed := now.Sub(b.start)
	eta := "?"
	if done > 0 {
		eta = (time.Duration(float64(elapsed) * float64(total-done) / float64(done))).Round(time.Second).String()
	}
	note := b.note
	if note != "" {
		note = " · " + note
	}
	fmt.Fprintf(b.w, "\r%s [%s%s] %d/%d  %s elapsed, ETA %s%s   ", b.label, strings.Repeat("#", filled), strings.Repeat(" ", width-filled),
		done, total, elapsed.Round(time.Second), eta, note)
	if done >= total {
		fmt.Fprintln(b.w)
	}
}
