//go:build !unix

package main

import (
	"errors"
	"os"
)

func mkfifo(string) error { return errors.New("no named pipes here") }

// maxRSS is unknown here: memory goes unchecked.
func maxRSS(*os.ProcessState) int64 { return 0 }
