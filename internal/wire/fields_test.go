package wire

import "testing"

func TestMisspeltCandidateField(t *testing.T) {
	for key, want := range map[string]string{
		"Score": "score", "ID": "id", "TEXT": "text", "tokns": "tokens", "scroe": "score", "scores": "score",
		"txt": "text", "vectr": "vector", "tokenz": "tokens", "texts": "text",
		// metadata, not misspellings
		"gold": "", "title": "", "url": "", "source": "", "rank": "", "ids": "", "i": "", "meta": "", "tags": "",
	} {
		got, ok := MisspeltCandidateField(key)
		if ok != (want != "") || got != want {
			t.Errorf("%q: got %q, %v; want %q", key, got, ok, want)
		}
	}
}
