//go:build !linux

// Package loopback brings the loopback interface of a fresh network
// namespace up, where the system has such namespaces (Linux).
package loopback

// Up does nothing: only Linux starts a process in a namespace whose
// loopback is down.
func Up() error { return nil }
