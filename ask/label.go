package ask

import (
	"path"
	"strings"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index"
)

// Labels name the hits' chunks in the prompt and in answers ("doc#index")
// without the user's directory layout: a document indexed by a relative
// path keeps it; a document indexed by an absolute path (index add
// /home/…/notes) is named by its path below the folder the hits' absolute
// paths share (the indexed root, or the file's own folder for one file),
// so the LLM provider and remote clients never see where it lives. The
// full path stays in the hit (Passage.Hit: Doc, Source) for the local
// diagnostics the user asks for (ask --json).
func Labels(hits []index.Hit) []string {
	root := ""
	first := true
	for _, h := range hits {
		doc := slashed(h.Doc)
		if !absolute(doc) {
			continue
		}
		dir := doc[:strings.LastIndexByte(doc, '/')+1]
		if first {
			root, first = dir, false
			continue
		}
		for !strings.HasPrefix(dir, root) {
			root = root[:strings.LastIndexByte(strings.TrimSuffix(root, "/"), '/')+1]
		}
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		doc := slashed(h.Doc)
		if absolute(doc) {
			doc = strings.TrimPrefix(doc, root)
			if doc == "" || absolute(doc) { // never a path from the root of the file system
				doc = path.Base(doc)
			}
			out[i] = chunk.ChunkID(doc, h.Index)
			continue
		}
		out[i] = h.ID()
	}
	return out
}

func slashed(p string) string { return strings.ReplaceAll(p, "\\", "/") }

// absolute reports a path from a file system's root: "/…", "//host/…",
// "C:/…".
func absolute(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && p[2] == '/' && (p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}
