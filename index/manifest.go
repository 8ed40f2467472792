package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/ctxsel/ctxsel/internal/atomicfile"
)

// The manifest is the index's single source of truth: the config, the
// segment files with their sizes and checksums, and every live document
// with the segment holding it. It is replaced as a whole, by writing a
// temporary file, fsyncing it, renaming it over MANIFEST and fsyncing the
// directory, so readers see the old or the new version, never a mix.
//
// On disk: one header line "ctxsel-index 1 crc32c=XXXXXXXX bytes=N" and N
// bytes of JSON whose CRC-32C is XXXXXXXX.
const (
	manifestName   = "MANIFEST"
	lockName       = "LOCK"
	manifestMagic  = "ctxsel-index"
	manifestFormat = 1
)

type segInfo struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	CRC    uint32 `json:"crc32c"`
	Chunks int    `json:"chunks"`
	Docs   int    `json:"docs"`
	// LexSize and LexCRC describe the segment's lexical file (lexName);
	// zero for an index written before lexical files existed.
	LexSize int64  `json:"lex_size,omitempty"`
	LexCRC  uint32 `json:"lex_crc32c,omitempty"`
	// SntSize and SntCRC describe the segment's sentence file (sntName);
	// zero for an index that keeps no sentence vectors.
	SntSize int64  `json:"snt_size,omitempty"`
	SntCRC  uint32 `json:"snt_crc32c,omitempty"`
}

type docEntry struct {
	DocInfo
	// Segment holds the document's chunks ("" for a document without any).
	Segment string `json:"segment,omitempty"`
}

type manifest struct {
	Version     int        `json:"version"`
	Generation  uint64     `json:"generation"`
	Config      Config     `json:"config"`
	Vectors     string     `json:"vectors"`
	NextSegment int        `json:"next_segment"`
	Segments    []segInfo  `json:"segments"`
	Docs        []docEntry `json:"docs"`
}

func encodeManifest(m *manifest) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	head := fmt.Sprintf("%s %d crc32c=%08x bytes=%d\n", manifestMagic, manifestFormat, crc32.Checksum(body, castagnoli), len(body))
	return append([]byte(head), body...), nil
}

// decodeManifest parses and checks a manifest; path is for messages.
func decodeManifest(path string, data []byte) (*manifest, error) {
	head, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		return nil, corruptf(path, "no header line (truncated?)")
	}
	f := strings.Fields(string(head))
	if len(f) != 4 || f[0] != manifestMagic || !strings.HasPrefix(f[2], "crc32c=") || !strings.HasPrefix(f[3], "bytes=") {
		return nil, corruptf(path, "bad header line %q", shorten(string(head), 80))
	}
	if v, err := strconv.Atoi(f[1]); err != nil || v != manifestFormat {
		return nil, corruptf(path, "manifest format %q, this build reads %d", f[1], manifestFormat)
	}
	want, err1 := strconv.ParseUint(strings.TrimPrefix(f[2], "crc32c="), 16, 32)
	n, err2 := strconv.Atoi(strings.TrimPrefix(f[3], "bytes="))
	if err1 != nil || err2 != nil {
		return nil, corruptf(path, "bad header line %q", shorten(string(head), 80))
	}
	if len(body) != n {
		return nil, corruptf(path, "%d bytes of manifest, header says %d (truncated?)", len(body), n)
	}
	if got := crc32.Checksum(body, castagnoli); got != uint32(want) {
		return nil, corruptf(path, "checksum mismatch (header %08x, content %08x): the file is damaged", want, got)
	}
	// encoding/json/v2's decoder (the experiment it comes from): the same
	// document, parsed 2-3× faster, which a fresh process waits for
	var m manifest
	if err := jsonv2.Unmarshal(body, &m); err != nil {
		return nil, corruptf(path, "%v", err)
	}
	if err := m.check(); err != nil {
		return nil, corruptf(path, "%v", err)
	}
	return &m, nil
}

// check verifies the manifest's internal consistency.
func (m *manifest) check() error {
	if m.Version != manifestFormat {
		return fmt.Errorf("version %d", m.Version)
	}
	if _, err := ParseFormat(m.Vectors); err != nil {
		return err
	}
	segs := make(map[string]int, len(m.Segments))
	for _, s := range m.Segments {
		if !validSegName(s.Name) {
			return fmt.Errorf("bad segment name %q", s.Name)
		}
		if _, dup := segs[s.Name]; dup {
			return fmt.Errorf("segment %s listed twice", s.Name)
		}
		if s.Size < segHeaderSize+4 || s.Chunks < 0 || s.Docs < 0 || (s.LexSize != 0 && s.LexSize < lexHeaderSize+4) ||
			(s.SntSize != 0) != (m.Config.SentenceModel != "") || (s.SntSize != 0 && s.SntSize < sntHeaderSize+4) {
			return fmt.Errorf("segment %s: bad size or counts", s.Name)
		}
		segs[s.Name] = 0
	}
	ids := make(map[string]bool, len(m.Docs))
	for _, d := range m.Docs {
		if d.ID == "" || ids[d.ID] {
			return fmt.Errorf("document %q empty or listed twice", d.ID)
		}
		ids[d.ID] = true
		if d.Segment == "" {
			if d.Chunks != 0 {
				return fmt.Errorf("document %q: %d chunks but no segment", d.ID, d.Chunks)
			}
			continue
		}
		if _, ok := segs[d.Segment]; !ok {
			return fmt.Errorf("document %q: unknown segment %q", d.ID, d.Segment)
		}
		segs[d.Segment] += d.Chunks
	}
	for _, s := range m.Segments {
		if segs[s.Name] > s.Chunks {
			return fmt.Errorf("segment %s: documents claim %d chunks, it holds %d", s.Name, segs[s.Name], s.Chunks)
		}
	}
	return nil
}

func validSegName(name string) bool {
	return strings.HasPrefix(name, "seg-") && strings.HasSuffix(name, segSuffix) && filepath.Base(name) == name &&
		!strings.ContainsAny(name, `/\`)
}

// readManifest reads dir's manifest; a missing one is os.ErrNotExist.
func readManifest(dir string) (*manifest, os.FileInfo, error) {
	path := filepath.Join(dir, manifestName)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	m, err := decodeManifest(path, data)
	return m, st, err
}

// writeManifest replaces dir's manifest atomically and durably.
func writeManifest(dir string, m *manifest) error {
	data, err := encodeManifest(m)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, manifestName), func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
