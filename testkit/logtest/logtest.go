// Package logtest collects output that several goroutines write (a
// logger, a child process's stdout) for a test to read while it is still
// being written.
package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that a writer and the test may use at once.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
