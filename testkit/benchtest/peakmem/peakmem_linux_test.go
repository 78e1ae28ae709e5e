package peakmem

import (
	"os"
	"syscall"
	"testing"
)

// After ResetRSS the peak follows what the process touches from then on.
// The 64 MiB are mapped afresh, not taken from the Go heap, which may
// hold pages already resident from an earlier test.
func TestRSS(t *testing.T) {
	pid := os.Getpid()
	if err := ResetRSS(pid); err != nil {
		t.Skipf("the kernel does not reset the peak: %v", err)
	}
	before, err := RSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := syscall.Mmap(-1, 0, 64<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(mem); i += os.Getpagesize() {
		mem[i] = 1
	}
	if err := syscall.Munmap(mem); err != nil {
		t.Fatal(err)
	}
	after, err := RSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	if after < before+60<<20 { // less a little the heap may have handed back meanwhile
		t.Fatalf("peak %d bytes after touching 64 MiB, %d before", after, before)
	}
	if _, err := RSS(-1); err == nil {
		t.Fatal("RSS of no process: no error")
	}
}
