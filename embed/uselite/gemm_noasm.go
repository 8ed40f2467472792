//go:build !amd64 || purego

package uselite

// gemmImpls lists the kernels usable on this CPU, fastest first.
func gemmImpls() []*gemmImpl { return []*gemmImpl{goImpl} }
