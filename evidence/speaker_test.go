package evidence

import "testing"

// speaker_in_question reads a turn prefix's name: a Discord header's is
// the name before its em dash, so "Today at 9:41 PM" names no speaker; an
// IRC client's is the nick in its angle brackets.
func TestSpeakerNamed(t *testing.T) {
	for _, c := range []struct {
		prefix, question string
		want             bool
	}{
		{"Priya — Today at 9:41 PM", "what did priya say about the deploy?", true},
		{"Priya — Today at 9:41 PM", "what failed today at the deploy?", false},
		{"Sam Lee — 3/14/24, 9:41 PM", "when does lee leave?", true},
		{"Sam Lee — 3/14/24, 9:41 PM", "what happened on 3/14/24 at 9:41 pm?", false},
		{"[2023-05-08 13:58] Tom:", "where did tom go?", true},
		{"[2023-05-08 13:58] Tom:", "what happened on 2023-05-08?", false},
		// an IRC client's nick, its channel mode left out; the time is no name
		{"[09:12] <@maya>", "which driver did maya install?", true},
		{"09:12 <_tom>", "what did tom suggest?", true},
		{"[09:12] <maya>", "what happened at 09:12?", false},
	} {
		ss := []sentence{{kind: Context, text: c.prefix}, {kind: Turn, text: "The deploy failed.", needs: []int{0}}}
		if got := speakerNamed(ss, ss[1].needs, c.question); got != c.want {
			t.Errorf("speakerNamed(%q, %q) = %v, want %v", c.prefix, c.question, got, c.want)
		}
	}
}
