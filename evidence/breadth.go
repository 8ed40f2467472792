package evidence

import (
	"regexp"
	"strings"
)

// A broad question asks for a discussion, a summary or someone's views
// ("Summarize the discussion about the budget.", "What did the Project
// Manager think of the buttons when discussing the design?") rather than
// one fact ("Who opens the door?"). Its evidence is a stretch of a
// conversation, not a line: a meeting question's gold is a run of ~51
// turns (QMSum, validation), a dialogue question's one turn (FriendsQA).
// The scores cannot tell the two apart (both texts are turns), the
// question's words can: with broad_run and broad_prior a broad question's
// turns are packed as runs (docs/evidence.md "Broad questions").
//
// Broad is a rule on the words, written down before it was measured and
// adjusted on the train questions only (their fire rates by genre and a
// read of those it got wrong): the question, lower-cased with every
// character but a-z, 0-9 and the apostrophe read as a space, is broad when
// it does not open with a word that asks for one fact (who, whom, whose,
// where, when, how many, how much, how long, how old, how often) and
// it holds one of broadPatterns.

// narrowOpening are the openings of a question for one fact.
var narrowOpening = regexp.MustCompile(`^(who|whom|whose|where|when|how many|how much|how long|how old|how often)\b`)

// broadPatterns are the words of a broad question.
var broadPatterns = []*regexp.Regexp{
	// a summary
	regexp.MustCompile(`\b(summari[sz]e|summari[sz]ed|summary|sum up|recap|overview|outline)\b|^(please )?describe\b`),
	// a discussion
	regexp.MustCompile(`\b(discuss|discussed|discussing|discussion|discussions|debate|debated|debating|talk about|talked about|talking about|conversation about)\b`),
	// views
	regexp.MustCompile(`\b(opinion|opinions|perspective|perspectives|stance|viewpoint|views|attitude)\b`),
	// what someone said or thought about something, in the past
	// ("What did Grad F think about intermediate categories?"; the present
	// tense is a dialogue's narration: "What does Joey think …")
	regexp.MustCompile(`\b(what|how|why) (did|had|would|was|were)\b.*\b(say|said|think|thought|suggest|suggested|propose|proposed|mention|mentioned|recommend|elaborate|contribute|argue|explain|comment|report|present|learn|add|note|raise|feel|react|respond|answer|approach|agree|disagree|decide|conclude|put forward) (about|of|on|regarding|towards|toward|when|while|during|in)\b`),
	// the reasons of a view or a decision
	regexp.MustCompile(`^why (did|would) .*\b(think|thought|agree|agreed|disagree|disagreed|decide|decided|propose|proposed|suggest|suggested|support|supported|put forward)\b`),
	// what was decided
	regexp.MustCompile(`\b(decision|decisions|decided|conclusion|conclusions|concluded|agreed upon)\b`),
}

// maxBroadQuestion bounds the bytes of a question Broad reads (a
// question is a line; a longer text is read from its start).
const maxBroadQuestion = 2000

// Broad reports whether a question asks for a discussion or a summary
// rather than one fact (the rule above). It reads only the question.
func Broad(question string) bool {
	if len(question) > maxBroadQuestion {
		question = question[:maxBroadQuestion] // a rune cut in two reads as a space
	}
	q := normQuestion(question)
	if q == "" || narrowOpening.MatchString(q) {
		return false
	}
	for _, p := range broadPatterns {
		if p.MatchString(q) {
			return true
		}
	}
	return false
}

// normQuestion lower-cases q, reads ’ as ', every other character but
// a-z, 0-9 and ' as a space, and joins runs of spaces.
func normQuestion(q string) string {
	var b strings.Builder
	space := true // no leading space
	for _, r := range strings.ToLower(q) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '\'', r == '’':
			if r == '’' {
				r = '\''
			}
			b.WriteRune(r)
			space = false
		case !space:
			b.WriteByte(' ')
			space = true
		}
	}
	return strings.TrimSuffix(b.String(), " ")
}
