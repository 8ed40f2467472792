//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package recordlog

import (
	"errors"
	"os"
	"syscall"
)

// LockFile takes an exclusive flock(2) on f, waiting for other holders.
func LockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func UnlockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
