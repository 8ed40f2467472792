//go:build !linux && !(386 || arm || mips || mipsle)

package weaviate_test

import "os/exec"

func setPdeathsig(*exec.Cmd) {}
