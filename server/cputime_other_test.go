//go:build !unix

package server

import "time"

func processCPU() time.Duration { return 0 }
