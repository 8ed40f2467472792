//go:build !(386 || arm || mips || mipsle)

package weaviate_test

import (
	"os/exec"
	"syscall"
)

// setPdeathsig kills the server if the test process dies first.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
