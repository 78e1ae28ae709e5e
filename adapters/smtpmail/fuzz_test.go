package smtpmail

import (
	"bufio"
	"context"
	"encoding/base64"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// FuzzNew reads any EARSHOT_SMTP_URL and sender, seeded with the forms
// the package doc names and malformed ones. New takes them or refuses
// them as KindInvalid, and a refusal never shows the URL's password
// (unless it is written elsewhere in the URL too, which no redaction can
// hide).
func FuzzNew(f *testing.F) {
	for _, s := range [][2]string{
		{"smtp://mail.example.com:587", "earshot@example.com"},
		{"smtps://earshot:" + password + "@mail.example.com", "Earshot <alerts@earshot.example>"},
		{"smtp://u:" + password + "@mail.example.com:99999", "a@b"},
		{"smtp://u:" + password + "@mail.example.com/inbox", "a@b"},
		{"smtp://u:" + password + "@[::1", "a@b"},
		{"http://u:" + password + "@h", "a@b"},
		{"smtp://u:" + password + "@h", "not an address"},
		{"smtp://:@", ""}, {"smtp://h:0", "a@b"}, {"smtp://h:-1", "a@b"}, {"smtp://u:p%zz@h", "a@b"},
	} {
		f.Add(s[0], s[1])
	}
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, rawURL, from string) {
		m, err := New(rawURL, from, log)
		if err != nil {
			if !core.IsKind(err, core.KindInvalid) {
				t.Fatalf("New(%q, %q): %v", rawURL, from, err)
			}
			u, perr := url.Parse(rawURL)
			if perr != nil || u.User == nil {
				return
			}
			pass, _ := u.User.Password()
			rest := *u
			rest.User = nil
			if len(pass) >= 4 && strings.Contains(err.Error(), pass) && !strings.Contains(rest.String()+from, pass) &&
				!strings.Contains(u.User.Username(), pass) {
				t.Fatalf("New(%q, %q) shows the password: %v", rawURL, from, err)
			}
			return
		}
		if m.host == "" || m.port < 1 || m.port > 65535 || m.from == nil || m.tlsConfig == nil || m.tlsConfig.ServerName != m.host {
			t.Fatalf("New(%q, %q) = %+v", rawURL, from, m)
		}
	})
}

// FuzzServerReplies sends a mail to a loopback server that answers with
// any script of replies (split at |), one per command, seeded with the
// replies of a server that takes the mail (RFC 5321's examples:
// greeting, EHLO with extensions, MAIL, RCPT, DATA's 354 and the final
// 250) and of servers that refuse, stall or echo the password (as
// written or in base64). Whatever the server says, Send returns soon
// after its timeout with nil or a KindUnavailable error of one line that
// never shows the password.
func FuzzServerReplies(f *testing.F) {
	ok := []string{"220 mail.example ESMTP", "250-mail.example\r\n250-8BITMIME\r\n250 SIZE 1000000", "250 ok", "250 ok", "354 go on", "250 queued", "221 bye"}
	f.Add(strings.Join(ok, "|"))
	f.Add(strings.Join([]string{"220 hi", "250-h\r\n250 AUTH PLAIN LOGIN", "535 bad password " + password}, "|"))
	f.Add(strings.Join([]string{"220 hi", "250-h\r\n250 AUTH LOGIN", "334 VXNlcm5hbWU6", "334 UGFzc3dvcmQ6", "535 you sent " + password}, "|"))
	f.Add(strings.Join([]string{"220 hi", "250-h\r\n250 AUTH PLAIN", "535 you sent AGVhcnNob3QA" + base64.StdEncoding.EncodeToString([]byte(password))}, "|"))
	f.Add(strings.Join([]string{"220 hi", "250-h\r\n250 STARTTLS", "454 no tls"}, "|"))
	f.Add("554 go away")
	f.Add("220-still\r\n220-going")
	f.Add(strings.Join([]string{"220 hi", "250 h", "250 ok", "550 no such user\r\n"}, "|"))
	f.Add(strings.Join([]string{"220 hi", "250 h", "250 ok", "250 ok", "354 go", "999 what"}, "|"))
	f.Add("220 hi|xyz||")

	const timeout = 500 * time.Millisecond
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, script string) {
		// A listener of its own for each script, so that no connection
		// of one send is answered with another's script.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			conn, err := ln.Accept()
			if err == nil {
				serve(conn, strings.Split(script, "|"))
			}
		}()
		m, err := New("smtp://earshot:"+password+"@"+ln.Addr().String(), "Earshot <alerts@earshot.example>", log, WithTimeout(timeout))
		if err != nil {
			t.Fatal(err)
		}
		sent := make(chan error, 1)
		go func() { sent <- m.Send(context.Background(), alert) }()
		select {
		case err = <-sent:
		case <-time.After(timeout + 2*time.Second):
			t.Fatalf("Send still running %v after its timeout, against %q", 2*time.Second, script)
		}
		if err == nil {
			return
		}
		if !core.IsKind(err, core.KindUnavailable) {
			t.Fatalf("script %q: %v", script, err)
		}
		s := err.Error()
		for _, secret := range []string{password, base64.StdEncoding.EncodeToString([]byte(password)), "\n"} {
			if strings.Contains(s, secret) {
				t.Fatalf("script %q: error %q shows the password or breaks the line", script, s)
			}
		}
	})
}

// serve answers conn with script: the first reply as the greeting, then
// one reply per command (the lines of a message after a 354 are one
// command, ended by "."), and hangs up when the script runs out. The
// connection is closed in any case once the client's timeout has passed,
// so a stalled exchange ends.
func serve(conn net.Conn, script []string) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	r := bufio.NewReader(conn)
	data := false
	for i, reply := range script {
		if i > 0 {
			for {
				line, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if !data || strings.TrimRight(line, "\r\n") == "." {
					break
				}
			}
		}
		data = false
		if _, err := conn.Write([]byte(reply + "\r\n")); err != nil {
			return
		}
		data = strings.HasPrefix(reply, "354")
	}
}
