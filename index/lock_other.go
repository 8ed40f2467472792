//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package index

import "os"

// Without flock(2) there is no inter-process lock: an index directory must
// have a single writer process at a time (writers in one process are still
// serialised by Dir's mutex).
func tryLock(*os.File) (bool, error) { return false, nil }
func unlock(*os.File) error          { return nil }
