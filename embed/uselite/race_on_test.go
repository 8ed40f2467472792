//go:build race

package uselite

// raceEnabled trims the slowest duplicate checks (portable kernel, naive
// forward pass on long inputs) under the race detector; the full reference
// test still runs with the default kernel.
const raceEnabled = true
