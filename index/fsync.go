package index

import (
	"errors"
	"syscall"
)

// isUnsupportedSync reports a directory fsync the platform or file system
// does not support (e.g. EINVAL on some file systems, or on Windows); the
// rename is still as durable as the system allows.
func isUnsupportedSync(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EISDIR) ||
		errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM)
}
