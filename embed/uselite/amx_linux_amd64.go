//go:build !purego

package uselite

import "syscall"

// amxPermit asks Linux for the AMX tile state (arch_prctl
// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); it is granted to the whole
// process. Kernels before 5.16 and sandboxes that refuse it leave AMX off.
func amxPermit() bool {
	const archReqXcompPerm, xfeatureXtiledata = 0x1023, 18
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXtiledata, 0)
	return errno == 0
}
