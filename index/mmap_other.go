//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package index

// mapFile reads the file at path, which must be size bytes long, into
// memory (no mapping on this platform).
func mapFile(path string, size int64) (data []byte, release func(), err error) {
	data, err = readFileSized(path, size)
	if err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}
