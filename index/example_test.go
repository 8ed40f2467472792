package index_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxsel/ctxsel/index"
)

// Corruption is detected and named, never served.
func ExampleErrCorrupt() {
	dir, _ := os.MkdirTemp("", "idx")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "MANIFEST"), []byte("ctxsel-index 1 crc32c=00000000 bytes=2\n{}"), 0o644)
	_, err := index.OpenDir(dir, index.DirOptions{})
	fmt.Println(errors.Is(err, index.ErrCorrupt))
	// Output: true
}
