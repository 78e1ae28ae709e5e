package smtpmail

import (
	"bufio"
	"crypto/hmac"
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/mailtest"
)

// The mailer chooses its AUTH mechanism itself (for the SCRAM bound), so
// it is checked against what common servers offer: PLAIN over STARTTLS to
// a host that is not loopback (Postfix with Dovecot SASL, Gmail and
// Microsoft 365 on port 587), LOGIN alone (older Exchange) and CRAM-MD5
// alone (some local relays). 127.0.0.2 stands for a host elsewhere, so
// PLAIN goes only over the TLS that STARTTLS started.
func TestAuthPlainOverStartTLSElsewhere(t *testing.T) {
	srv := mailtest.NewServer(t, mailtest.WithAuth("earshot", password), mailtest.WithStartTLS())
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 here: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", srv.Addr())
				if err != nil {
					return
				}
				defer s.Close()
				go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
				_, _ = io.Copy(c, s)
			}()
		}
	}()
	m := newMailer(t, "smtp://earshot:"+password+"@"+ln.Addr().String(), WithTLSConfig(srv.TLSConfig()))
	if err := m.Send(t.Context(), alert); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := srv.WaitFor(1, 5*time.Second)[0]; !got.TLS || got.User != "earshot" {
		t.Errorf("delivered with TLS %v as %q, want TLS as earshot", got.TLS, got.User)
	}
}

// The first of PLAIN, LOGIN and CRAM-MD5 the server offers is used, and
// its exchange (RFC 4616; the LOGIN draft; RFC 2195) logs in.
func TestAuthMechanismsLogIn(t *testing.T) {
	for _, tt := range []struct{ offer, want string }{
		{"CRAM-MD5 LOGIN PLAIN", "PLAIN"},
		{"CRAM-MD5 LOGIN", "LOGIN"},
		{"CRAM-MD5", "CRAM-MD5"},
	} {
		addr, got := authServer(t, tt.offer)
		if err := newMailer(t, "smtp://earshot:"+password+"@"+addr).Send(t.Context(), alert); err != nil {
			t.Errorf("AUTH %s: Send = %v", tt.offer, err)
		}
		if mech := <-got; mech != tt.want {
			t.Errorf("AUTH %s: logged in with %q, want %s", tt.offer, mech, tt.want)
		}
	}
}

// authServer is a server on loopback for one client that offers AUTH
// offer, checks the credentials of the mechanism the client picks, and
// takes the mail after them; its address, and the mechanism that logged
// in ("" when none did).
func authServer(t *testing.T, offer string) (string, <-chan string) {
	t.Helper()
	got := make(chan string, 1)
	addr := oneClient(t, "127.0.0.1", offer, func(c net.Conn, r *bufio.Reader) {
		var mech string
		defer func() { got <- mech }()
		if c == nil {
			return
		}
		say := func(s string) { _, _ = c.Write([]byte(s + "\r\n")) }
		read := func() string { l, _ := r.ReadString('\n'); return strings.TrimRight(l, "\r\n") }
		decode := func(s string) string { b, _ := base64.StdEncoding.DecodeString(s); return string(b) }
		cmd := strings.Fields(read())
		if len(cmd) < 2 || cmd[0] != "AUTH" {
			return
		}
		ok := false
		switch cmd[1] {
		case "PLAIN":
			resp := ""
			if len(cmd) > 2 {
				resp = cmd[2]
			} else {
				say("334 ")
				resp = read()
			}
			ok = decode(resp) == "\x00earshot\x00"+password
		case "LOGIN":
			say("334 " + base64.StdEncoding.EncodeToString([]byte("Username:")))
			user := decode(read())
			say("334 " + base64.StdEncoding.EncodeToString([]byte("Password:")))
			ok = user == "earshot" && decode(read()) == password
		case "CRAM-MD5":
			challenge := "<1896.697170952@mail.example>"
			say("334 " + base64.StdEncoding.EncodeToString([]byte(challenge)))
			mac := hmac.New(md5.New, []byte(password))
			mac.Write([]byte(challenge))
			ok = decode(read()) == "earshot "+hex.EncodeToString(mac.Sum(nil))
		}
		if !ok {
			say("535 5.7.8 no")
			return
		}
		say("235 2.7.0 ok")
		mech = cmd[1]
		for {
			line := read()
			switch {
			case line == "" || strings.HasPrefix(line, "QUIT"):
				say("221 bye")
				return
			case strings.HasPrefix(line, "DATA"):
				say("354 go on")
				for {
					l, err := r.ReadString('\n')
					if err != nil || l == ".\r\n" {
						break
					}
				}
				say("250 queued")
			default:
				say("250 ok")
			}
		}
	})
	return addr, got
}
