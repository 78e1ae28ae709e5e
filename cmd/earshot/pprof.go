//go:build pprof

package main

// Built with -tags pprof (never by default), the binary serves
// net/http/pprof on EARSHOT_PPROF_ADDR, a loopback address, so a
// benchmark can take a CPU profile of the running server
// (bench/deliverybench -deliverybench.cpuprofile).

import (
	"log"
	"net/http"
	_ "net/http/pprof"
	"os"
)

func init() {
	addr := os.Getenv("EARSHOT_PPROF_ADDR")
	if addr == "" {
		return
	}
	go func() { log.Println(http.ListenAndServe(addr, nil)) }()
}
