//go:build amd64 && !purego && !linux

package uselite

// amxPermit: AMX is used on Linux only, the one system whose way of
// granting the tile state this package knows.
func amxPermit() bool { return false }
