package ingest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Reading is bounded: a file is read only when it is a regular file (a
// symlink's target is what counts: a link to /dev/zero or to a FIFO is
// skipped, not read forever or waited on), no larger than Limits.File
// bytes, and a .jsonl.gz is decompressed, streaming, only up to
// Limits.Decompressed bytes. A file over a limit is skipped with a note
// naming the limit; the others are read.

// Default read limits: far above any document a person indexes (LaRA's
// largest is 0.6 MB, the largest corpus in ../shared 21 MB decompressed),
// low enough that the memory a skipped file costs stays under 1 GB.
const (
	DefaultMaxFileBytes         = 256 << 20
	DefaultMaxDecompressedBytes = 256 << 20
)

// Limits bound what reading one file may take. Zero fields take the
// defaults.
type Limits struct {
	// File bounds a file's size on disk (compressed, for a .jsonl.gz).
	File int64
	// Decompressed bounds the decompressed bytes of a .jsonl.gz.
	Decompressed int64
}

func (l Limits) resolved() Limits {
	if l.File <= 0 {
		l.File = DefaultMaxFileBytes
	}
	if l.Decompressed <= 0 {
		l.Decompressed = DefaultMaxDecompressedBytes
	}
	return l
}

// Which limit a LimitError is about.
const (
	LimitFile         = "file"
	LimitDecompressed = "decompressed"
)

// LimitError is a file skipped because it is over a read limit.
type LimitError struct {
	Limit string // LimitFile or LimitDecompressed
	Max   int64  // the limit, in bytes
	Size  int64  // the file's size on disk, for LimitFile; 0 when unknown
}

func (e *LimitError) Error() string {
	if e.Limit == LimitDecompressed {
		return fmt.Sprintf("decompresses to more than %s, the limit", byteSize(e.Max))
	}
	if e.Size > e.Max {
		return fmt.Sprintf("%s, over the per-file limit of %s", byteSize(e.Size), byteSize(e.Max))
	}
	return fmt.Sprintf("more than the per-file limit of %s", byteSize(e.Max))
}

// notRegularError is a path that is not a regular file (or a symlink to one).
type notRegularError struct {
	mode fs.FileMode
	link bool
}

func (e *notRegularError) Error() string {
	if e.link {
		return "a symlink to " + modeName(e.mode) + ", not a regular file"
	}
	return modeName(e.mode) + ", not a regular file"
}

// modeName names a file type for a note.
func modeName(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeDir != 0:
		return "a folder"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a device"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeSymlink != 0:
		return "a symlink"
	default:
		return "an irregular file"
	}
}

// byteSize writes n bytes for a note: "4.0 GiB (4294967296 bytes)".
func byteSize(n int64) string {
	const unit = 1 << 10
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTP"[exp], n)
}

// readRegular reads the file at path whole, if it is a regular file of at
// most max bytes. It opens without blocking (a FIFO swapped in after Walk
// looked would otherwise wait for a writer forever) and checks the opened
// file itself, so what it reads is what it checked; it stops reading past
// max even when the file grows meanwhile.
func readRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		lst, lerr := os.Lstat(path)
		return nil, &notRegularError{mode: st.Mode(), link: lerr == nil && lst.Mode()&fs.ModeSymlink != 0}
	}
	if st.Size() > max {
		return nil, &LimitError{Limit: LimitFile, Max: max, Size: st.Size()}
	}
	// sized as os.ReadFile sizes it, so a file read whole costs its size once
	buf := make([]byte, 0, st.Size()+1)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return nil, &LimitError{Limit: LimitFile, Max: max}
		}
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // it grew since Stat
		}
	}
}

// cappedReader reads r, failing with a LimitError past max bytes.
type cappedReader struct {
	r    io.Reader
	left int64
	max  int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, &LimitError{Limit: LimitDecompressed, Max: c.max}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left+1] // one byte past the limit tells a longer stream
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n, &LimitError{Limit: LimitDecompressed, Max: c.max}
	}
	return n, err
}
