package index

import (
	"errors"
	"fmt"
	"runtime/debug"
)

// errFault marks a memory fault reading a mapped file.
var errFault = errors.New("reading a mapped file faulted: a file of the index changed after it was verified (truncated?)")

// Searches read mapped segment and lexical files in place. Their checksums
// were verified when mapped; if a file is then truncated under the index
// (damage from outside: segments are never modified), reading it faults.
// Every goroutine that reads mapped memory turns such a fault into
// ErrCorrupt instead of a crash:
//
//	defer catchFault(&err)()

// catchFault arms the calling goroutine to panic, rather than crash, on a
// memory fault, and returns the function that disarms it and turns that
// panic into an ErrCorrupt error in *err. Other panics propagate.
func catchFault(err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		if _, ok := r.(interface{ Addr() uintptr }); ok {
			*err = fmt.Errorf("%w: %w", ErrCorrupt, errFault)
			return
		}
		panic(r)
	}
}

// afterSearch handles a search's error: after a fault it forgets the
// loaded files, so the next query maps and verifies them again, and names
// the index in the error.
func (d *Dir) afterSearch(err *error) {
	if !errors.Is(*err, errFault) {
		return
	}
	d.mu.Lock()
	d.snap, d.snapStat, d.loaded = nil, nil, map[string]*segment{}
	d.mu.Unlock()
	*err = corruptf(d.path, "%v; run: ctxsel index verify --index %s", errFault, d.path)
}
