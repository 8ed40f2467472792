//go:build !(386 || arm || mips || mipsle)

package weaviate_test

import (
	"os/exec"
	"syscall"
	"unsafe"
)

// loopbackUp brings the loopback interface up, as `ip link set lo up` does:
// a fresh network namespace (unshare -n, which .ci/run uses to keep the
// server's all-interfaces ports private) starts with it down. It is a no-op
// where lo is already up and best-effort everywhere.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr struct {
		name  [syscall.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(ifr.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	if ifr.flags&syscall.IFF_UP != 0 {
		return nil
	}
	ifr.flags |= syscall.IFF_UP | syscall.IFF_RUNNING
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	return nil
}

// setPdeathsig kills the server if the test process dies first.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
