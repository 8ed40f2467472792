package server

import "sync"

// Responses are appended to pooled byte slices (internal/wire's encoders):
// a 1,000-candidate selection's response is some 30 KB, and at thousands
// of requests a second fresh buffers would set the collector's pace.

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > 4<<20 { // let the GC have the rare giant response
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}
