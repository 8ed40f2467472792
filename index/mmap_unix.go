//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package index

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the file at path, which must be size bytes long, read-only
// into memory; release unmaps it. The pages are the page cache's: opening
// copies nothing, and processes share them.
func mapFile(path string, size int64) (data []byte, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if st.Size() != size {
		return nil, nil, corruptf(path, "size %d bytes, the manifest recorded %d (truncated or overwritten)", st.Size(), size)
	}
	if size == 0 {
		return []byte{}, func() {}, nil
	}
	if int64(int(size)) != size {
		return nil, nil, fmt.Errorf("map %s: %d bytes do not fit the address space", path, size)
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|mapPopulate)
	if err != nil {
		// not mappable (some file systems): read it instead
		data, err = readFileSized(path, size)
		if err != nil {
			return nil, nil, err
		}
		return data, func() {}, nil
	}
	return data, func() { unix.Munmap(data) }, nil
}
