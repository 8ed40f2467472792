// Package loopback brings the loopback interface of a fresh network
// namespace up: one made by `unshare -n` (as .ci/run does, to keep
// loopback servers' all-interfaces ports private) starts with it down.
package loopback

import (
	"syscall"
	"unsafe"
)

// Up brings the loopback interface up, as `ip link set lo up` does. It is
// a no-op where lo is already up, and best-effort everywhere.
func Up() error {
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
