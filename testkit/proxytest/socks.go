package proxytest

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"testing"
)

// SocksAsk is one CONNECT a socks5 proxy was asked for: the address type
// (RFC 1928: 1 IPv4, 3 a domain name, 4 IPv6), the host as given and the
// port, and the credentials of RFC 1929 when the client offered them.
type SocksAsk struct {
	ATYP           byte
	Host           string
	Port           int
	User, Password string
}

// Socks is a minimal socks5 server after RFC 1928 (CONNECT only) and RFC
// 1929 (username and password, any accepted, when the client offers
// them; Chromium does not, net/http does when the proxy URL has them).
type Socks struct {
	ln     net.Listener
	target string
	record[SocksAsk]
}

// NewSocks starts a socks5 server on 127.0.0.1 that joins every CONNECT
// to target (host:port), and closes it and its connections when t ends.
func NewSocks(t testing.TB, target string) *Socks {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Socks{ln: ln, target: target}
	p.init()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.hold(c)
			go func() {
				defer p.let(c)
				p.serve(c)
			}()
		}
	}()
	// A browser keeps its connections open: they are closed rather
	// than waited for.
	t.Cleanup(func() {
		ln.Close()
		p.closeAll()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *Socks) Addr() string { return p.ln.Addr().String() }

// Asks are the CONNECTs asked for so far, oldest first (the first
// maxAsks of them).
func (p *Socks) Asks() []SocksAsk { return p.seen() }

func (p *Socks) serve(c net.Conn) {
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
	var ask SocksAsk
	method := byte(0)
	if slices.Contains(b[:b[1]], 2) {
		method = 2
	}
	if _, err := c.Write([]byte{5, method}); err != nil {
		return
	}
	// field reads a length byte and that many bytes.
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
	if method == 2 {
		// RFC 1929: VER 1, ULEN, UNAME, PLEN, PASSWD; any is accepted.
		if _, err := io.ReadFull(c, b[:1]); err != nil || b[0] != 1 {
			return
		}
		var ok bool
		if ask.User, ok = field(); !ok {
			return
		}
		if ask.Password, ok = field(); !ok {
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
	ask.ATYP = b[3]
	switch ask.ATYP {
	case 1:
		if _, err := io.ReadFull(c, b[:4]); err != nil {
			return
		}
		ask.Host = net.IP(b[:4]).String()
	case 4:
		if _, err := io.ReadFull(c, b[:16]); err != nil {
			return
		}
		ask.Host = net.IP(b[:16]).String()
	case 3:
		var ok bool
		if ask.Host, ok = field(); !ok {
			return
		}
	default:
		return
	}
	if _, err := io.ReadFull(c, b[:2]); err != nil {
		return
	}
	ask.Port = int(binary.BigEndian.Uint16(b[:2]))
	p.ask(ask)
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
	join(c, up, c)
}

// join copies what from sends to up, and up's answers to c, until both
// are done; from is c, or a reader holding what c sent ahead.
func join(c net.Conn, up net.Conn, from io.Reader) {
	done := make(chan struct{})
	go func() {
		io.Copy(up, from)
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		close(done)
	}()
	io.Copy(c, up)
	c.Close()
	<-done
}
