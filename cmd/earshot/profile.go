//go:build profile

package main

// Built with -tags profile, the binary writes a CPU profile of its whole
// life to the file EARSHOT_CPU_PROFILE names, ending it when the command
// returns (serve returns after SIGINT or SIGTERM have stopped it): the
// benchmarks profile the servers they drive this way
// (docs/performance/README.md). Release builds carry none of it.

import (
	"os"
	"runtime/pprof"
)

func init() {
	path := os.Getenv("EARSHOT_CPU_PROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return
	}
	stopProfile = func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
