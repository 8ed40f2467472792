//go:build unix

package index

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, all threads: what a
// benchmark costs regardless of what else the machine is running.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
