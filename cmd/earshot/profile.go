//go:build profile

package main

// Built with -tags profile, the binary writes a CPU profile of its whole
// life to the file EARSHOT_CPU_PROFILE names, ending it on SIGINT or
// SIGTERM: the pipeline benchmark profiles the server it drives this
// way (README "Performance"). Release builds carry none of it.

import (
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
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
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sigs
		pprof.StopCPUProfile()
		f.Close()
	}()
}
