package proxytest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// Connect is a minimal http proxy after RFC 9110 (CONNECT, section
// 9.3.6) and RFC 9112 (a request in absolute form, section 3.2.2). It
// asks for no credentials.
type Connect struct {
	srv    *httptest.Server
	target string
	record[string]
}

// NewConnect starts an http proxy on 127.0.0.1 that joins every tunnel
// and request to target (host:port), and closes it and its tunnels when
// t ends.
func NewConnect(t testing.TB, target string) *Connect {
	t.Helper()
	p := &Connect{target: target}
	p.init()
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
		p.ask(host)
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
		p.closeAll()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Connect) Addr() string { return p.srv.Listener.Addr().String() }

// Hosts are the hosts of the tunnels and requests asked for so far,
// without their ports, oldest first (the first maxAsks of them).
func (p *Connect) Hosts() []string { return p.seen() }

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
	p.hold(c)
	go func() {
		defer p.let(c)
		defer c.Close()
		defer up.Close()
		if _, err := rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || rw.Flush() != nil {
			return
		}
		// What the client sent after its CONNECT may be buffered in rw.
		join(c, up, rw)
	}()
}
