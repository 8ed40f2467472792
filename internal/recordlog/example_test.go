package recordlog_test

import (
	"crypto/sha256"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ctxsel/ctxsel/internal/recordlog"
)

// A keyed store over a record log: records are delivered at Open, and
// Append writes only keys not yet present.
func Example() {
	dir, _ := os.MkdirTemp("", "recordlog")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "kv.log")

	for run := 1; run <= 2; run++ {
		m := map[recordlog.Key]string{}
		l, err := recordlog.Open(path, "example v1", recordlog.Options{}, func(r recordlog.Record) {
			m[r.Key] = string(r.Payload)
		})
		if err != nil {
			log.Fatal(err)
		}
		n, err := l.Append([]recordlog.Record{{Key: sha256.Sum256([]byte("k")), Payload: []byte("v")}},
			func(k recordlog.Key) bool { _, ok := m[k]; return ok })
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("run %d: %d loaded, %d written\n", run, l.Stats().Records-n, n)
		l.Close()
	}
	// Output:
	// run 1: 0 loaded, 1 written
	// run 2: 1 loaded, 0 written
}
