package proxytest_test

import (
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/earshothq/earshot/testkit/proxytest"
)

// get fetches u with hc and returns the body, failing t otherwise.
func get(t *testing.T, hc *http.Client, u string) string {
	t.Helper()
	resp, err := hc.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %q", u, resp.StatusCode, body)
	}
	return string(body)
}

func echoHost(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "to "+r.Host)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// net/http hands a socks5 proxy the name (socks5h) and offers RFC 1929
// when the proxy URL carries credentials.
func TestSocksRecordsNameAndCredentials(t *testing.T) {
	srv := echoHost(t)
	for _, user := range []*url.Userinfo{nil, url.UserPassword("owner", "secret")} {
		px := proxytest.NewSocks(t, srv.Listener.Addr().String())
		tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "socks5", Host: px.Addr(), User: user})}
		defer tr.CloseIdleConnections()
		if body := get(t, &http.Client{Transport: tr}, "http://earshot-proxytest.invalid:8080/"); body != "to earshot-proxytest.invalid:8080" {
			t.Errorf("body %q", body)
		}
		want := proxytest.SocksAsk{ATYP: 3, Host: "earshot-proxytest.invalid", Port: 8080}
		if user != nil {
			want.User = "owner"
			want.Password, _ = user.Password()
		}
		if got := px.Asks(); !slices.Equal(got, []proxytest.SocksAsk{want}) {
			t.Errorf("asks %+v, want %+v", got, want)
		}
		select {
		case <-px.Wake():
		default:
			t.Error("no wake after an ask")
		}
	}
}

// An address is recorded as asked (RFC 1928's ATYP 1 and 4), and a
// command other than CONNECT is refused with reply 7.
func TestSocksRecordsAddresses(t *testing.T) {
	px := proxytest.NewSocks(t, "127.0.0.1:1")
	ask := func(cmd, atyp byte, addr []byte) byte {
		c, err := net.Dial("tcp", px.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		msg := append([]byte{5, 1, 0, 5, cmd, 0, atyp}, addr...)
		msg = binary.BigEndian.AppendUint16(msg, 443)
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		var r [12]byte
		if _, err := io.ReadFull(c, r[:]); err != nil {
			t.Fatal(err)
		}
		if r[0] != 5 || r[1] != 0 {
			t.Fatalf("greeting answered %v", r[:2])
		}
		return r[3]
	}
	if rep := ask(2, 1, []byte{192, 0, 2, 7}); rep != 7 {
		t.Errorf("BIND answered %d, want 7", rep)
	}
	if rep := ask(1, 4, net.ParseIP("2001:db8::1")); rep != 5 {
		t.Errorf("CONNECT to a closed port answered %d, want 5", rep)
	}
	want := []proxytest.SocksAsk{{ATYP: 1, Host: "192.0.2.7", Port: 443}, {ATYP: 4, Host: "2001:db8::1", Port: 443}}
	if got := px.Asks(); !slices.Equal(got, want) {
		t.Errorf("asks %+v, want %+v", got, want)
	}
}

// The http proxy tunnels CONNECT (net/http's way to https) and forwards
// a request in absolute form (its way to http), recording each host.
func TestConnectTunnelsAndForwards(t *testing.T) {
	plain := echoHost(t)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tls to "+r.Host)
	}))
	t.Cleanup(tlsSrv.Close)

	px := proxytest.NewConnect(t, plain.Listener.Addr().String())
	tr := &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: px.Addr()})}
	defer tr.CloseIdleConnections()
	if body := get(t, &http.Client{Transport: tr}, "http://earshot-proxytest.invalid/"); body != "to earshot-proxytest.invalid" {
		t.Errorf("forwarded: %q", body)
	}

	// httptest's certificate names example.com.
	tx := proxytest.NewConnect(t, tlsSrv.Listener.Addr().String())
	ttr := tlsSrv.Client().Transport.(*http.Transport).Clone()
	ttr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: tx.Addr()})
	defer ttr.CloseIdleConnections()
	if body := get(t, &http.Client{Transport: ttr}, "https://example.com/"); body != "tls to example.com" {
		t.Errorf("tunneled: %q", body)
	}
	for _, c := range []struct {
		px   *proxytest.Connect
		want []string
	}{{px, []string{"earshot-proxytest.invalid"}}, {tx, []string{"example.com"}}} {
		if got := c.px.Hosts(); !slices.Equal(got, c.want) {
			t.Errorf("hosts %q, want %q", got, c.want)
		}
		select {
		case <-c.px.Wake():
		default:
			t.Error("no wake after an ask")
		}
	}
}
