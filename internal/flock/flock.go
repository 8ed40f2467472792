// Package flock is ctxsel's one inter-process file lock: an exclusive
// flock(2) on an open file, which the kernel releases when the process
// dies, so a crashed holder never leaves a stale lock. The embedding cache,
// the record logs under the LLM cache and mining's checkpoints, and the
// embedded index's writers all lock through it.
//
// A flock is held by an open file description: two files opened on one
// path in the same process exclude each other like two processes do.
// Without flock(2) (Windows, Plan 9, …) every call succeeds and locks
// nothing: such a directory must have a single writer process.
package flock
