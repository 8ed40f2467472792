package server

import (
	"bytes"
	"crypto/sha256"
	stdembed "embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"time"
)

// The web page is plain HTML, CSS and JavaScript with no build step, embedded
// in the binary so `ctxsel serve` needs no files beside it and the page
// loads nothing from outside (no CDN).

// web/demo.json, the example the page opens with, is made from the bundled
// HotpotQA sample by gen_demo.go.
//
//go:generate go run gen_demo.go -q 61

//go:embed web
var webFiles stdembed.FS

//go:embed openapi.json
var openapiDoc []byte

type asset struct {
	body  []byte
	ctype string
	etag  string
}

var assets = loadAssets()

func loadAssets() map[string]asset {
	out := map[string]asset{}
	entries, err := fs.ReadDir(webFiles, "web")
	if err != nil {
		panic(err) // the directory is embedded: it exists
	}
	for _, e := range entries {
		b, err := webFiles.ReadFile("web/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		ctype := mime.TypeByExtension(path.Ext(e.Name()))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		out[e.Name()] = asset{body: b, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return out
}

// pageHeaders keep the page self-contained: scripts, styles and requests
// only from this origin, no framing.
func pageHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

func serveAsset(w http.ResponseWriter, r *http.Request, a asset) {
	h := w.Header()
	pageHeaders(h)
	h.Set("Content-Type", a.ctype)
	h.Set("ETag", a.etag)
	// Revalidate every time: the ETag makes that a 304, and a new binary
	// never serves a stale script.
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	serveAsset(w, r, assets["index.html"])
}

func (s *Server) handleAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := assets[r.PathValue("name")]
	if !ok {
		writeError(w, http.StatusNotFound, "name", "no such asset: "+r.PathValue("name"))
		return
	}
	serveAsset(w, r, a)
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*") // a public description, for API tools
	writeJSON(w, http.StatusOK, openapiDoc)
}
