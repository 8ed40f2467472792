//go:build unix

package ingest

import "syscall"

func init() { Mkfifo = func(path string) error { return syscall.Mkfifo(path, 0o644) } }
