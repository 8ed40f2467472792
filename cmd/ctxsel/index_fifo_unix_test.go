//go:build unix

package main

import "syscall"

func init() { mkfifo = func(path string) error { return syscall.Mkfifo(path, 0o644) } }
