//go:build !unix

package uselite

import "time"

func processCPU() time.Duration { return 0 }
