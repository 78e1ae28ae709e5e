package smtpmail

import (
	"bufio"
	"encoding/base64"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// scramServer is a server for one client that offers AUTH mech only
// and answers the client's first SCRAM message with a server-first
// message (RFC 5802 section 5.1: r=nonce,s=salt,i=iterations) naming
// iterations; its address, and the client's next message (its proof,
// "c=…,r=…,p=…"), or "" when none came. It then refuses and hangs up.
func scramServer(t *testing.T, mech, iterations string) (string, <-chan string) {
	t.Helper()
	final := make(chan string, 1)
	addr := oneClient(t, "127.0.0.1", mech, func(c net.Conn, r *bufio.Reader) {
		var proof string
		defer func() { final <- proof }()
		if c == nil {
			return
		}
		_, _ = r.ReadString('\n') // AUTH SCRAM-…, without an initial response
		_, _ = c.Write([]byte("334 \r\n"))
		line, _ := r.ReadString('\n') // client-first, base64
		first, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(line))
		_, nonce, _ := strings.Cut(string(first), ",r=")
		serverFirst := "r=" + nonce + "srv,s=" + base64.StdEncoding.EncodeToString([]byte("salt")) + ",i=" + iterations
		_, _ = c.Write([]byte("334 " + base64.StdEncoding.EncodeToString([]byte(serverFirst)) + "\r\n"))
		line, _ = r.ReadString('\n')
		if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(line)); err == nil {
			proof = string(b)
		}
		_, _ = c.Write([]byte("535 5.7.8 no\r\n"))
	})
	return addr, final
}

// oneClient is a server on host for one client that greets it, answers
// its EHLO offering AUTH offer, and hands the connection to serve; its
// address. serve gets a nil connection when none came.
func oneClient(t *testing.T, host, offer string, serve func(c net.Conn, r *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		if host != "127.0.0.1" {
			t.Skipf("no %s here: %v", host, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			serve(nil, nil)
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		_, _ = c.Write([]byte("220 mail.example ESMTP\r\n"))
		_, _ = r.ReadString('\n')
		_, _ = c.Write([]byte("250-mail.example\r\n250 AUTH " + offer + "\r\n"))
		serve(c, r)
	}()
	return ln.Addr().String()
}

// A server may ask SCRAM for any iteration count, and the key derivation
// it sets off runs on the CPU where neither ctx nor the timeout reaches
// it: a count of billions would hold Send (and a core) for hours. Send
// refuses a count no real server uses and keeps to its timeout.
func TestSCRAMIterationsBounded(t *testing.T) {
	for _, mech := range []string{"SCRAM-SHA-256", "SCRAM-SHA-1"} {
		addr, final := scramServer(t, mech, "2000000000")
		m := newMailer(t, "smtp://earshot:"+password+"@"+addr, WithTimeout(time.Second))
		start := time.Now()
		err := m.Send(t.Context(), alert)
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("%s: Send took %v with a 1s timeout", mech, took)
		}
		if !core.IsKind(err, core.KindUnavailable) {
			t.Errorf("%s: Send = %v, want kind %v", mech, err, core.KindUnavailable)
		}
		if p := <-final; p != "" {
			t.Errorf("%s: the client answered %q", mech, p)
		}

		// The count servers use is worked through: the client proves it
		// knows the password.
		addr, final = scramServer(t, mech, "4096")
		err = newMailer(t, "smtp://earshot:"+password+"@"+addr).Send(t.Context(), alert)
		if p := <-final; !strings.HasPrefix(p, "c=biws,r=") || !strings.Contains(p, ",p=") {
			t.Errorf("%s with 4096 iterations: the client answered %q (Send: %v)", mech, p, err)
		}
	}
}

// Without TLS, PLAIN and LOGIN go only to a host named as loopback
// (localhost, 127.0.0.1, ::1). 127.0.0.2 stands for a server elsewhere
// while the test stays on this machine: the password never reaches it.
// A server offering only mechanisms the mailer does not use (XOAUTH2)
// gets nothing either.
func TestPasswordNotSentWithoutTLS(t *testing.T) {
	for _, mech := range []string{"PLAIN", "LOGIN", "PLAIN LOGIN", "XOAUTH2"} {
		got := make(chan string, 1)
		addr := oneClient(t, "127.0.0.2", mech, func(c net.Conn, r *bufio.Reader) {
			var seen strings.Builder
			defer func() { got <- seen.String() }()
			if c == nil {
				return
			}
			for {
				line, err := r.ReadString('\n')
				seen.WriteString(line)
				if err != nil {
					return
				}
				_, _ = c.Write([]byte("221 bye\r\n"))
			}
		})
		err := newMailer(t, "smtp://earshot:"+password+"@"+addr, WithTimeout(2*time.Second)).Send(t.Context(), alert)
		if !core.IsKind(err, core.KindUnavailable) {
			t.Errorf("AUTH %s without TLS: Send = %v", mech, err)
		}
		seen := <-got
		if strings.Contains(seen, "AUTH") || strings.Contains(seen, base64.StdEncoding.EncodeToString([]byte(password))) ||
			strings.Contains(seen, base64.StdEncoding.EncodeToString([]byte("\x00earshot\x00"+password))) {
			t.Errorf("AUTH %s without TLS: the server read %q", mech, seen)
		}
	}
}
