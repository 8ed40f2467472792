package evidence

import "testing"

// A chunk's first line is its title only when it reads as one: the tail
// of a sentence a chunk's edge cut, a line a hard-wrapped paragraph runs
// on from, a sentence broken off by a dash or an ellipsis, or one that
// ends inside it, is text (issue 29: a sentence fragment became a chunk's
// title).
func TestHeaderLineSkipsFragments(t *testing.T) {
	for _, c := range []struct {
		text  string
		title string
	}{
		{"Chapter I\nThe Signora had no business to do it.", "Chapter I"},
		{"THE SECRET GARDEN\nCHAPTER I\nWhen Clara was sent", "THE SECRET GARDEN"},
		{"The Worst Birthday\n\nNot for the first time, an argument broke out.", "The Worst Birthday"},
		{"# Setup\ninstall it first", "# Setup"},
		{"Nights of Horror—Pursuit of Apache Bob\n\nCHAPTER XXV.", "Nights of Horror—Pursuit of Apache Bob"},
		// fragments
		{", but no one could say \n\nTHE DIARY OF A YOUNG GIRL\n\nMore.", ""},
		{"’d collapsed on a delivery. So then I tried to borrow Hermes —”\n\n“Who?”", ""},
		{"'t you glad, Father\" he ended\n\nMore text.", ""},
		{"Turning to him, therefore, I said—\n\n“I consent to your demand.”", ""},
		{"I can speak Parseltongue. …”\n\n“You can speak it,” said Starling.", ""},
		{"I will not begin to try to describe my present\n  situation; it would take volumes.", ""},
		{"Then suddenly the grim face broke down into what\n\nmight have been a smile.", ""},
		{"Henry ran upstairs to their dark dormitory. He pulled out the\n\ncloak.", ""},
		{"'\n\n****\nThe introduction of the model.", ""},
		{"lower case start of a cut sentence\nMore.", ""},
	} {
		got := ""
		if h := headerLine(c.text); h != nil {
			got = c.text[h[0]:h[1]]
		}
		if got != c.title {
			t.Errorf("headerLine(%q) = %q, want %q", c.text, got, c.title)
		}
	}
}
