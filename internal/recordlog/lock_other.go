//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package recordlog

import "os"

// Without flock(2) there is no inter-process lock: a cache directory must
// have a single writer process (see the package documentation).
func LockFile(*os.File) error   { return nil }
func UnlockFile(*os.File) error { return nil }
