package bus

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// proxy forwards loopback TCP connections to target. cut closes every
// connection and refuses new ones until restore. stall stops passing on
// what the client sends until resume, as RabbitMQ does with a publishing
// connection under a resource alarm (it stops reading from its socket),
// while what the broker sends (heartbeats) still reaches the client.
type proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	down    bool
	stalled chan struct{} // closed by resume; nil while not stalled
	conns   map[net.Conn]bool
	refused int           // connections closed at once while down: reconnect attempts
	changed chan struct{} // a send after each connection accepted or refused; never blocks
}

// waitUntil looks at ok now, after each connection the proxy accepts or
// refuses, and every few milliseconds meanwhile, since what the client
// makes of a closed socket shows in nothing the test can wait on; it
// fails t, saying what(), once within has passed.
func (p *proxy) waitUntil(t *testing.T, within time.Duration, ok func() bool, what func() string) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		select {
		case <-p.changed:
		case <-tick.C:
		case <-deadline.C:
			if !ok() {
				t.Fatal(what())
			}
			return
		}
	}
}

// seen tells a waitUntil under way of a connection.
func (p *proxy) seen() {
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// refusedCount is how many connections were refused while down.
func (p *proxy) refusedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}, changed: make(chan struct{}, 1)}
	t.Cleanup(func() {
		_ = ln.Close()
		p.cut()
	})
	go p.serve()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *proxy) forward(client net.Conn) {
	p.mu.Lock()
	down := p.down
	if down {
		p.refused++
	}
	p.mu.Unlock()
	if down {
		_ = client.Close()
		p.seen()
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client], p.conns[server] = true, true
	p.mu.Unlock()
	p.seen()
	go pipe(client, server)
	p.pipeHeld(server, client)
}

// pipeHeld copies the client's bytes to the broker, holding them while the
// proxy is stalled.
func (p *proxy) pipeHeld(dst, src net.Conn) {
	defer func() {
		_ = dst.Close()
		_ = src.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			stalled := p.stalled
			p.mu.Unlock()
			if stalled != nil {
				<-stalled
			}
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

func (p *proxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled == nil {
		p.stalled = make(chan struct{})
	}
}

func (p *proxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled != nil {
		close(p.stalled)
		p.stalled = nil
	}
}

func (p *proxy) cut() {
	p.resume()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}
