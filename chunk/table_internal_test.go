package chunk

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// cellGapPattern is what cellGaps reads by hand.
var cellGapPattern = regexp.MustCompile(`[ \x{00a0}]{2,}|\t+`)

// FuzzCellGaps checks that cellGaps and splitCells give what the pattern
// gives, on any text, and isValue what valueCell does.
func FuzzCellGaps(f *testing.F) {
	for _, s := range []string{"", "a  b\tc", " \u00a0 x", "x \t y", "  \t\t  ", "\u00a0", "a \u00a0b", "\xff  \xc2\xa0 \xc2", "1,234\u00a0\u00a0\u00a0$ (5)", "n/a", "—", "$ (1,234.5)%", "12/31/2024", "Total", "*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want [][2]int
		for _, m := range cellGapPattern.FindAllStringIndex(s, -1) {
			want = append(want, [2]int{m[0], m[1]})
		}
		if got := cellGaps(s); !slices.Equal(got, want) {
			t.Fatalf("cellGaps(%q) = %v, the pattern %v", s, got, want)
		}
		if got, want := splitCells(s), cellGapPattern.Split(s, -1); !slices.Equal(got, want) {
			t.Fatalf("splitCells(%q) = %q, the pattern %q", s, got, want)
		}
		if got, want := countFields(s), len(strings.Fields(s)); got != want {
			t.Fatalf("countFields(%q) = %d, strings.Fields %d", s, got, want)
		}
		if got, want := isValue(s), valueCell.MatchString(s); got != want {
			t.Fatalf("isValue(%q) = %v, valueCell %v", s, got, want)
		}
	})
}

// FuzzTextTablesSkip checks that the tables Above reads as starts ask for
// them, skipping the lines before a barrier, give every start the header
// a reading of every line gives it.
func FuzzTextTablesSkip(f *testing.F) {
	doc := "Intro prose that is long enough to be no label at all, a sentence of many words, ending here.\n" +
		"Region          Units      Revenue\nNorth           1,200      $ 45,000\nSouth             950      $ 31,500\nEast            1,430      $ 52,250\n\n" +
		"Prose between the tables, again a sentence long enough to end any statement before it.\n" +
		"                    December 31,\n                 2024        2023\nCash     $  1,234    $  1,100\n\nReceivables\nStock        890         812\nTotal    $  2,691    $  2,410\n" +
		"```\nA  B  C\n1  2  3\n4  5  6\n```\nAfter the code, a sentence long enough to be prose and no label of a statement.\n"
	f.Add(doc, uint64(0x0123456789abcdef))
	f.Add("a  b  c\n1  2  3\n4  5  6\n7  8  9\n", uint64(7))
	// a wrapped label's rest, too long for a label, between rows and after them
	f.Add("                    December 31,\n                 2024        2023\nCash     $  1,234    $  1,100\nStock        890         812\n"+
		" authorized; 33,592,055 and 23,270,404 shares of the common stock issued and outstanding as of\nTotal    $  2,691    $  2,410\n"+
		" and the rest of a wrapped label that runs on over a line too long for any label at all\nDebt         120          90\n", uint64(3))
	for pick := range uint64(64) { // short lines: a start may land past the wrapped line or the page number, its header unread
		f.Add("Intro.\n   Dec 31,\n  2024  2023\nA  1,234  1,100\nB  890  812\n a b c d e f g h i j k l m\nT  2,691  2,410\nU  1  2\n", pick)
		f.Add("Intro.\n   Dec 31,\n  2024  2023\nA  1,234  1,100\nB  890  812\n\n15\n\n\n\nT  2,691  2,410\nU  1  2\n", pick) // a page break
	}
	f.Fuzz(func(t *testing.T, text string, pick uint64) {
		full := newTextTables(text)
		if full == nil {
			return
		}
		for l := range full.lines {
			full.readTo(l)
		}
		lazy := newTextTables(text)
		for start := 1; start <= len(text); start += 1 + int(pick%97) {
			pick = pick*6364136223846793005 + 1442695040888963407
			full.next = 0
			want := full.headerAt(start)
			if got := lazy.headerAt(start); got != want {
				t.Fatalf("start %d: %q read as asked, %q reading every line", start, got, want)
			}
		}
	})
}
