//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package flock

import "os"

// Lock, TryLock and Unlock lock nothing here (see the package
// documentation).
func Lock(*os.File) error            { return nil }
func TryLock(*os.File) (bool, error) { return false, nil }
func Unlock(*os.File) error          { return nil }
