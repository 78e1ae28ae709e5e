package helper_test

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// Through a socks5 proxy the platform client hands the proxy each host
// name (ATYP 3) and resolves none itself: a local lookup would tell the
// local resolver what the owner reads. net/http's Transport.Proxy with a
// socks5:// URL treats socks5 as socks5h, which this pins. The host is
// a name no resolver knows (RFC 2606's .invalid): a client that resolved
// it locally would fail before reaching the proxy, or hand it an
// address.
//
// Not shown: what the proxy does with the name, and https, which is
// dialed the same way (net/http's Transport.dialConn) with TLS on top.
func TestPlatformClientGivesSocksProxyTheName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served through the proxy to "+r.Host)
	}))
	t.Cleanup(srv.Close)
	px := newSocksProxy(t, srv.Listener.Addr().String())
	var p helper.ProxyInfo
	p.Required = true
	p.Proxy.Server = "socks5://" + px.addr()
	p.Proxy.Username, p.Proxy.Password = "owner", "secret"
	hc, via, err := helper.PlatformClient(p, false)
	if err != nil || !via {
		t.Fatalf("client: via %t, %v", via, err)
	}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://earshot-socks-test.invalid/page")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "served through the proxy to earshot-socks-test.invalid" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	want := []socksAsk{{atyp: 3, host: "earshot-socks-test.invalid", port: 80, user: "owner", password: "secret"}}
	if got := px.asked(); !slices.Equal(got, want) {
		t.Fatalf("the proxy was asked for %+v, want %+v", got, want)
	}
}

// socksAsk is one CONNECT a socks5 proxy was asked for: the address type
// (RFC 1928: 1 IPv4, 3 a domain name, 4 IPv6), the host as given, and
// the credentials of RFC 1929 when the client offered them.
type socksAsk struct {
	atyp           byte
	host           string
	port           int
	user, password string
}

// socksProxy is a minimal socks5 server after RFC 1928 and RFC 1929
// (username and password when the client offers them, CONNECT only): it
// records what each client asks for and joins every connection to
// target, whatever the host named, as the operator's proxy joins it to
// the platform. helper/browser's tests have its twin, without RFC 1929,
// which Chromium does not speak.
type socksProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	asks   []socksAsk
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

func newSocksProxy(t *testing.T, target string) *socksProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &socksProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns[c] = true
			p.mu.Unlock()
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.serve(c)
				p.mu.Lock()
				delete(p.conns, c)
				p.mu.Unlock()
			}()
		}
	}()
	// A client keeps its connections open: they are closed rather than
	// waited for.
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *socksProxy) addr() string { return p.ln.Addr().String() }

func (p *socksProxy) asked() []socksAsk {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]socksAsk(nil), p.asks...)
}

func (p *socksProxy) serve(c net.Conn) {
	defer c.Close()
	// Every length below is one byte: b holds the longest field.
	var b [255]byte
	// Greeting: VER, NMETHODS, METHODS; the answer picks username and
	// password (2) when offered, else no authentication (0).
	if _, err := io.ReadFull(c, b[:2]); err != nil || b[0] != 5 {
		return
	}
	if _, err := io.ReadFull(c, b[:b[1]]); err != nil {
		return
	}
	var ask socksAsk
	method := byte(0)
	if slices.Contains(b[:b[1]], 2) {
		method = 2
	}
	if _, err := c.Write([]byte{5, method}); err != nil {
		return
	}
	if method == 2 {
		// RFC 1929: VER 1, ULEN, UNAME, PLEN, PASSWD; any is accepted.
		field := func() (string, bool) {
			if _, err := io.ReadFull(c, b[:1]); err != nil {
				return "", false
			}
			n := int(b[0])
			if _, err := io.ReadFull(c, b[:n]); err != nil {
				return "", false
			}
			return string(b[:n]), true
		}
		if _, err := io.ReadFull(c, b[:1]); err != nil || b[0] != 1 {
			return
		}
		var ok bool
		if ask.user, ok = field(); !ok {
			return
		}
		if ask.password, ok = field(); !ok {
			return
		}
		if _, err := c.Write([]byte{1, 0}); err != nil {
			return
		}
	}
	// Request: VER, CMD, RSV, ATYP, DST.ADDR, DST.PORT.
	if _, err := io.ReadFull(c, b[:4]); err != nil || b[0] != 5 {
		return
	}
	cmd := b[1]
	ask.atyp = b[3]
	switch ask.atyp {
	case 1:
		if _, err := io.ReadFull(c, b[:4]); err != nil {
			return
		}
		ask.host = net.IP(b[:4]).String()
	case 4:
		if _, err := io.ReadFull(c, b[:16]); err != nil {
			return
		}
		ask.host = net.IP(b[:16]).String()
	case 3:
		if _, err := io.ReadFull(c, b[:1]); err != nil {
			return
		}
		n := int(b[0])
		if _, err := io.ReadFull(c, b[:n]); err != nil {
			return
		}
		ask.host = string(b[:n])
	default:
		return
	}
	if _, err := io.ReadFull(c, b[:2]); err != nil {
		return
	}
	ask.port = int(binary.BigEndian.Uint16(b[:2]))
	p.mu.Lock()
	p.asks = append(p.asks, ask)
	p.mu.Unlock()
	reply := func(rep byte) error {
		_, err := c.Write([]byte{5, rep, 0, 1, 127, 0, 0, 1, 0, 0})
		return err
	}
	if cmd != 1 {
		reply(7) // command not supported
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		reply(5) // connection refused
		return
	}
	defer up.Close()
	if reply(0) != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		close(done)
	}()
	io.Copy(c, up)
	c.Close()
	<-done
}
