package proxytest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
)

// Connect is a minimal http proxy after RFC 9110 (CONNECT, section
// 9.3.6) and RFC 9112 (a request in absolute form, section 3.2.2). It
// asks for no credentials.
type Connect struct {
	srv    *httptest.Server
	target string
	mu     sync.Mutex
	asks   []string
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
	wake   chan struct{}
}

// NewConnect starts an http proxy on 127.0.0.1 that joins every tunnel
// and request to target (host:port), and closes it and its tunnels when
// t ends.
func NewConnect(t testing.TB, target string) *Connect {
	t.Helper()
	p := &Connect{target: target, conns: map[net.Conn]bool{}, wake: make(chan struct{}, 1)}
	forward := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: "http", Host: target})
		r.Out.Host = r.In.Host
	}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if r.Method != http.MethodConnect && r.URL.Host != "" {
			host = r.URL.Host
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		p.mu.Lock()
		if len(p.asks) < maxAsks {
			p.asks = append(p.asks, host)
		}
		p.mu.Unlock()
		select {
		case p.wake <- struct{}{}:
		default:
		}
		if r.Method != http.MethodConnect {
			forward.ServeHTTP(w, r)
			return
		}
		p.tunnel(w)
	}))
	// A browser keeps its tunnels open: they are closed rather than
	// waited for.
	t.Cleanup(func() {
		p.srv.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Connect) Addr() string { return p.srv.Listener.Addr().String() }

// Hosts are the hosts of the tunnels and requests asked for so far,
// without their ports, oldest first (the first maxAsks of them).
func (p *Connect) Hosts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.asks)
}

// Wake has a value after each ask, for a test that waits on them.
func (p *Connect) Wake() <-chan struct{} { return p.wake }

func (p *Connect) tunnel(w http.ResponseWriter) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	c, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	p.mu.Lock()
	p.conns[c] = true
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer func() {
			p.mu.Lock()
			delete(p.conns, c)
			p.mu.Unlock()
		}()
		defer c.Close()
		defer up.Close()
		if _, err := rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || rw.Flush() != nil {
			return
		}
		// What the client sent after its CONNECT may be buffered in rw.
		join(c, up, rw)
	}()
}
