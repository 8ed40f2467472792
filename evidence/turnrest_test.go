package evidence

import (
	"strings"
	"testing"
)

// turnRest finds the lines a chunk opens with that run into its first
// turn (the rest of a turn the chunk's start cut, starting cut), not a
// title or a paragraph above a blank line, lines above a table, or a line
// that opens whole.
func TestTurnRest(t *testing.T) {
	turns := "[10:01] Ana: Done.\n[10:02] Ben: Good.\n[10:03] Ana: Bye.\n"
	for _, c := range []struct {
		text string
		rest string
	}{
		{"the VPN first. Then reboot.\n" + turns, "the VPN first. Then reboot."},
		{"Paragraph above.\n\nthe VPN first.\n" + turns, "the VPN first."},
		{"Team chat\n\n" + turns, ""},
		{turns, ""},
		{"lines above a table\n| a | b |\n|---|---|\n| 1 | 2 |\n", ""},
		// a chunk cut inside the prefix's time or nick is cut too
		{"-05-15 15:28] Ines: yes.\n" + turns, "-05-15 15:28] Ines: yes."},
		// a line that opens whole may be a turn the splitter does not
		// read (a script's scene note): not a rest
		{"#NOTE#: [ Scene : Central Perk . ]\n" + turns, ""},
		{"Yes, that works.\n" + turns, ""},
		// a session's last line, cut, above a blank line and the next
		// session's turns
		{"27 19:05] Ana: then it worked.\nok\n\n" + turns, "27 19:05] Ana: then it worked.\nok"},
		// a blank line of CRLF or of spaces is one too
		{"27 19:05] Ana: then it worked.\r\nok\r\n\r\nNext session, notes follow.\r\n" + strings.ReplaceAll(turns, "\n", "\r\n"), "27 19:05] Ana: then it worked.\r\nok"},
		{"Notes.\n \nthe VPN first.\n" + turns, "the VPN first."},
	} {
		u := SplitUnits(c.text, AllUnits)
		from, to := turnRest(c.text, u)
		got := ""
		if to > from {
			got = c.text[u.Sentences[from][0]:u.Sentences[to-1][1]]
		}
		if got != c.rest {
			t.Errorf("turnRest(%q) = %q, want %q", c.text, got, c.rest)
		}
	}
}
