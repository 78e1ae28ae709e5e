package smtpmail

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/mailtest"
)

const password = "pa55-w0rd-s3cret"

var alert = ports.Mail{
	To:      "ana@example.com",
	Subject: "3 new matches for “standing desk”",
	Body:    "Hello Ana,\n\nr/homeoffice: which standing desk lasts? (score 91)\nLong line " + strings.Repeat("é", 100) + "\n",
}

func newMailer(t *testing.T, url string, opts ...Option) *Mailer {
	t.Helper()
	m, err := New(url, "Earshot <alerts@earshot.example>", slog.New(slog.DiscardHandler), opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func TestDelivery(t *testing.T) {
	tests := []struct {
		name    string
		opts    []mailtest.Option
		wantTLS bool
	}{
		{"plain", nil, false},
		{"starttls", []mailtest.Option{mailtest.WithStartTLS()}, true},
		{"smtps", []mailtest.Option{mailtest.WithImplicitTLS()}, true},
		{"auth", []mailtest.Option{mailtest.WithAuth("earshot", password)}, false},
		{"auth-starttls", []mailtest.Option{mailtest.WithAuth("earshot", password), mailtest.WithStartTLS()}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := mailtest.NewServer(t, tt.opts...)
			var opts []Option
			if c := srv.TLSConfig(); c != nil {
				opts = append(opts, WithTLSConfig(c))
			}
			m := newMailer(t, srv.URL(), opts...)
			if err := m.Send(t.Context(), alert); err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := srv.WaitFor(1, 5*time.Second)[0]

			if got.From != "alerts@earshot.example" || len(got.To) != 1 || got.To[0] != alert.To {
				t.Errorf("envelope from %q to %q", got.From, got.To)
			}
			if got.TLS != tt.wantTLS {
				t.Errorf("TLS = %v, want %v", got.TLS, tt.wantTLS)
			}
			if strings.Contains(tt.name, "auth") && got.User != "earshot" {
				t.Errorf("authenticated as %q, want earshot", got.User)
			}
			checkHeader(t, got.Header)
			if got.Subject != alert.Subject {
				t.Errorf("Subject = %q, want %q", got.Subject, alert.Subject)
			}
			if body := strings.ReplaceAll(got.Body, "\r\n", "\n"); body != alert.Body {
				t.Errorf("body = %q, want %q", body, alert.Body)
			}
		})
	}
}

func checkHeader(t *testing.T, h mail.Header) {
	t.Helper()
	if from, err := mail.ParseAddress(h.Get("From")); err != nil || from.Address != "alerts@earshot.example" || from.Name != "Earshot" {
		t.Errorf("From = %q", h.Get("From"))
	}
	if to, err := mail.ParseAddress(h.Get("To")); err != nil || to.Address != alert.To {
		t.Errorf("To = %q", h.Get("To"))
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(strings.ToLower(ct), "charset=utf-8") {
		t.Errorf("Content-Type = %q, want text/plain; charset=UTF-8", ct)
	}
	if date, err := h.Date(); err != nil || time.Since(date) > time.Minute {
		t.Errorf("Date = %q (%v)", h.Get("Date"), err)
	}
	if id := h.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@earshot.example>") {
		t.Errorf("Message-ID = %q", id)
	}
}

func TestAuthFailureHidesPassword(t *testing.T) {
	srv := mailtest.NewServer(t, mailtest.WithAuth("earshot", "another-password"))
	m := newMailer(t, "smtp://earshot:"+password+"@"+srv.Addr())
	err := m.Send(t.Context(), alert)
	if !core.IsKind(err, core.KindUnavailable) {
		t.Fatalf("Send with a wrong password: %v, want kind %v", err, core.KindUnavailable)
	}
	if strings.Contains(err.Error(), password) {
		t.Errorf("error shows the password: %v", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("%d messages accepted", n)
	}
}

func TestRefused(t *testing.T) {
	for _, code := range []int{421, 451, 550, 554} {
		srv := mailtest.NewServer(t)
		srv.RejectWith(code, "not today")
		err := newMailer(t, srv.URL()).Send(t.Context(), alert)
		if !core.IsKind(err, core.KindUnavailable) {
			t.Errorf("server answering %d: Send = %v, want kind %v", code, err, core.KindUnavailable)
			continue
		}
		if !strings.Contains(err.Error(), "not today") {
			t.Errorf("server answering %d: error %q does not carry the server's reply", code, err)
		}
	}
}

func TestHangUp(t *testing.T) {
	srv := mailtest.NewServer(t)
	srv.HangUp()
	start := time.Now()
	err := newMailer(t, srv.URL()).Send(t.Context(), alert)
	if !core.IsKind(err, core.KindUnavailable) {
		t.Fatalf("Send to a server that hangs up: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Send took %v after the hang-up", d)
	}
}

func TestServerNeverAnswers(t *testing.T) {
	srv := mailtest.NewServer(t)
	srv.Stall()
	m := newMailer(t, srv.URL(), WithTimeout(500*time.Millisecond))
	start := time.Now()
	err := m.Send(t.Context(), alert)
	took := time.Since(start)
	if !core.IsKind(err, core.KindUnavailable) {
		t.Fatalf("Send to a silent server: %v", err)
	}
	if took > 3*time.Second {
		t.Errorf("Send took %v with a 500ms timeout", took)
	}

	// The caller's ctx ends the wait sooner than the timeout.
	m = newMailer(t, srv.URL())
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start = time.Now()
	err = m.Send(ctx, alert)
	if !errors.Is(err, context.DeadlineExceeded) || !core.IsKind(err, core.KindUnavailable) {
		t.Errorf("Send with a 300ms ctx: %v, want deadline exceeded of kind %v", err, core.KindUnavailable)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Send took %v with a 300ms ctx", took)
	}
}

func TestNothingListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	err = newMailer(t, "smtp://u:"+password+"@"+addr).Send(t.Context(), alert)
	if !core.IsKind(err, core.KindUnavailable) || strings.Contains(err.Error(), password) {
		t.Fatalf("Send with nothing listening: %v", err)
	}
}

func TestInvalidMail(t *testing.T) {
	srv := mailtest.NewServer(t)
	m := newMailer(t, srv.URL())
	logm := NewLogMailer(slog.New(slog.DiscardHandler))
	for _, mm := range []ports.Mail{
		{To: "", Subject: "s", Body: "b"},
		{To: "not an address", Subject: "s", Body: "b"},
		{To: "a@example.com, b@example.com", Subject: "s", Body: "b"},
		{To: "a@example.com", Subject: "s\r\nBcc: victim@example.com", Body: "b"},
	} {
		for _, sender := range []ports.Mailer{m, logm} {
			if err := sender.Send(t.Context(), mm); !core.IsKind(err, core.KindInvalid) {
				t.Errorf("%T.Send(%+v) = %v, want kind %v", sender, mm, err, core.KindInvalid)
			}
		}
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("%d invalid messages reached the server", n)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct{ url, from string }{
		{"http://host:25", "a@example.com"},
		{"smtp://:25", "a@example.com"},
		{"smtp://u:" + password + "@host:0", "a@example.com"},
		{"smtp://u:" + password + "@host:bad", "a@example.com"},
		{"smtp://u:" + password + "@[::1", "a@example.com"},
		{"smtp://host:25/path", "a@example.com"},
		{"smtp://host:25", "not an address"},
	}
	for _, tt := range tests {
		_, err := New(tt.url, tt.from, nil)
		if !core.IsKind(err, core.KindInvalid) {
			t.Errorf("New(%q, %q) = %v, want kind %v", tt.url, tt.from, err, core.KindInvalid)
			continue
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("New error shows the password: %v", err)
		}
	}
}

func TestDefaultPorts(t *testing.T) {
	for url, want := range map[string]string{
		"smtp://relay.example":       "relay.example:25",
		"smtps://relay.example":      "relay.example:465",
		"smtp://relay.example:587":   "relay.example:587",
		"smtps://u:p@[::1]:2465":     "[::1]:2465",
		"smtp://relay.example:25/":   "relay.example:25",
		"smtp://user@relay.example/": "relay.example:25",
	} {
		m, err := New(url, "a@example.com", nil)
		if err != nil {
			t.Errorf("New(%s): %v", url, err)
			continue
		}
		if m.addr() != want {
			t.Errorf("New(%s) dials %s, want %s", url, m.addr(), want)
		}
	}
}

// A mail holding a credential is logged without its body.
func TestLogMailerSecret(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogMailer(slog.New(slog.NewTextHandler(&buf, nil)))
	const link = "https://listen.example.com/app/login/n-9MzveyhUgZU830I8ZKZC6SpzHQJm2S6jxXPswfvJ4"
	if err := l.Send(t.Context(), ports.Mail{To: "ana@example.com", Subject: "Your earshot sign-in link", Body: "Open " + link, Secret: true}); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); strings.Contains(out, "n-9MzveyhUgZU830I8ZKZC6SpzHQJm2S6jxXPswfvJ4") || !strings.Contains(out, "ana@example.com") {
		t.Fatalf("log %q", out)
	}
}

func TestLogMailer(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogMailer(slog.New(slog.NewTextHandler(&buf, nil)))
	if err := l.Send(t.Context(), alert); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"ana@example.com", "standing desk", "homeoffice"} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
}

// A subject with a long word, such as the 2048-byte webhook address a
// switch-off notification names, reaches the server in header lines of
// at most 78 characters (RFC 5322 2.1.1; 998 is the hard limit) and
// reads back whole: go-mail folds only at spaces, so such a word would
// otherwise be one line past the limit, which servers refuse or cut.
func TestLongSubjectFolded(t *testing.T) {
	t.Parallel()
	srv := mailtest.NewServer(t)
	m := newMailer(t, srv.URL())
	for i, subject := range []string{
		"earshot: Your webhook https://hooks.example.com/" + strings.Repeat("a1b2", 512) + " was switched off",
		"earshot: " + strings.Repeat("x", 70) + " “é” " + strings.Repeat("y", 300),
	} {
		mm := alert
		mm.Subject = subject
		if err := m.Send(t.Context(), mm); err != nil {
			t.Fatalf("Send: %v", err)
		}
		got := srv.WaitFor(i+1, 5*time.Second)[i]
		head, _, _ := bytes.Cut(got.Raw, []byte("\r\n\r\n"))
		for _, line := range bytes.Split(head, []byte("\r\n")) {
			if len(line) > 78 {
				t.Errorf("a header line of %d characters: %.120s…", len(line), line)
			}
		}
		if got.Subject != subject {
			t.Errorf("Subject = %q, want %q", got.Subject, subject)
		}
	}
}

// TestFailedSendClosesConnection: a send that fails after the connection
// is open (here, a server that offers no AUTH to a mailer with a
// password) hangs up at once, rather than leave the socket open until
// the server gives up on it; a mailer retrying every sweep would
// otherwise hold one more socket each time.
func TestFailedSendClosesConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	end := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			end <- err
			return
		}
		defer c.Close()
		// The replies of RFC 5321's examples, without an AUTH extension.
		_, _ = c.Write([]byte("220 mail.example ESMTP\r\n"))
		r := bufio.NewReader(c)
		if _, err := r.ReadString('\n'); err != nil {
			end <- err
			return
		}
		_, _ = c.Write([]byte("250 mail.example\r\n"))
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			if _, err := r.ReadString('\n'); err != nil {
				end <- err
				return
			}
		}
	}()
	err = newMailer(t, "smtp://earshot:"+password+"@"+ln.Addr().String()).Send(t.Context(), alert)
	if !core.IsKind(err, core.KindUnavailable) {
		t.Fatalf("Send: %v, want kind %v", err, core.KindUnavailable)
	}
	if err := <-end; !errors.Is(err, io.EOF) {
		t.Fatalf("after the failed send the server read %v, want the client's hang-up", err)
	}
}

// TestEchoedCredentialsHidden: a server that quotes the line it refused
// (as Sendmail does an unrecognised command) sends AUTH's credentials
// back in base64, and go-mail's error quotes the reply: neither AUTH
// PLAIN's nor AUTH LOGIN's encoding of the password may reach the error.
func TestEchoedCredentialsHidden(t *testing.T) {
	for _, mech := range []string{"PLAIN", "LOGIN"} {
		addr := refuseAuth(t, mech, func(last string) string { return "Authentication failed: " + strings.TrimSpace(last) })
		err := newMailer(t, "smtp://earshot:"+password+"@"+addr).Send(t.Context(), alert)
		if !core.IsKind(err, core.KindUnavailable) {
			t.Fatalf("AUTH %s: Send = %v", mech, err)
		}
		for _, enc := range []string{
			base64.StdEncoding.EncodeToString([]byte("\x00earshot\x00" + password)),
			base64.StdEncoding.EncodeToString([]byte(password)),
		} {
			if strings.Contains(err.Error(), enc) {
				t.Errorf("AUTH %s: the error shows the password in base64: %v", mech, err)
			}
		}
	}
}

// TestQuotedPasswordHidden: go-mail quotes a reply in Go syntax, so a
// password with a quote or a backslash that a server echoes reaches the
// error escaped, not as written.
func TestQuotedPasswordHidden(t *testing.T) {
	const pass = `pa"ss\w0rd`
	addr := refuseAuth(t, "PLAIN", func(string) string { return "bad password " + pass })
	err := newMailer(t, "smtp://earshot:"+url.QueryEscape(pass)+"@"+addr).Send(t.Context(), alert)
	if !core.IsKind(err, core.KindUnavailable) {
		t.Fatalf("Send = %v", err)
	}
	if q := strconv.Quote(pass); strings.Contains(err.Error(), q[1:len(q)-1]) || strings.Contains(err.Error(), pass) {
		t.Errorf("the error shows the password: %v", err)
	}
}

// refuseAuth is a server for one client that offers AUTH mech and
// refuses the credentials with a 535 whose text is refusal of the
// client's last line, after RFC 4954's exchanges; its address.
func refuseAuth(t *testing.T, mech string, refusal func(last string) string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		_, _ = c.Write([]byte("220 mail.example ESMTP\r\n"))
		_, _ = r.ReadString('\n')
		_, _ = c.Write([]byte("250-mail.example\r\n250 AUTH " + mech + "\r\n"))
		line, _ := r.ReadString('\n')
		if mech == "LOGIN" {
			_, _ = c.Write([]byte("334 VXNlcm5hbWU6\r\n"))
			_, _ = r.ReadString('\n')
			_, _ = c.Write([]byte("334 UGFzc3dvcmQ6\r\n"))
			line, _ = r.ReadString('\n')
		}
		_, _ = c.Write([]byte("535 5.7.8 " + refusal(line) + "\r\n"))
		_, _ = r.ReadString('\n')
	}()
	return ln.Addr().String()
}
