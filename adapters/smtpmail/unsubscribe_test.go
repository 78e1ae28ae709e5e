package smtpmail

import (
	"bytes"
	"log/slog"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/mailtest"
)

// The headers reach the server as sent, read back with net/mail from the
// message the in-process server received: Auto-Submitted on every mail
// (RFC 3834), List-Unsubscribe on a mail that names a link (RFC 2369),
// and List-Unsubscribe-Post only when that link is https (RFC 8058 3.1
// allows one-click only there). The token's shape is the alert emails'
// (43 base64url characters).
func TestUnsubscribeHeaders(t *testing.T) {
	t.Parallel()
	const token = "AZBn3kZfc4WqkLyD0TdWbQ-v2bq6cFJHUbXGxk9qQ3M"
	tests := []struct {
		name, link         string
		wantList, wantPost string
	}{
		{"https", "https://listen.example.com/app/alerts/off/" + token,
			"<https://listen.example.com/app/alerts/off/" + token + ">", "List-Unsubscribe=One-Click"},
		{"http", "http://127.0.0.1:8080/app/alerts/off/" + token, "<http://127.0.0.1:8080/app/alerts/off/" + token + ">", ""},
		{"none", "", "", ""},
	}
	srv := mailtest.NewServer(t)
	m := newMailer(t, srv.URL())
	for i, tt := range tests {
		mm := alert
		mm.Unsubscribe = tt.link
		if err := m.Send(t.Context(), mm); err != nil {
			t.Fatalf("%s: Send: %v", tt.name, err)
		}
		got := srv.WaitFor(i+1, 5*time.Second)[i]
		msg, err := mail.ReadMessage(bytes.NewReader(got.Raw))
		if err != nil {
			t.Fatalf("%s: the message does not parse: %v", tt.name, err)
		}
		h := msg.Header
		if v := h["Auto-Submitted"]; len(v) != 1 || v[0] != "auto-generated" {
			t.Errorf("%s: Auto-Submitted = %q", tt.name, v)
		}
		if v := h.Get("List-Unsubscribe"); v != tt.wantList || (tt.wantList == "" && len(h["List-Unsubscribe"]) != 0) {
			t.Errorf("%s: List-Unsubscribe = %q, want %q", tt.name, v, tt.wantList)
		}
		if v := h.Get("List-Unsubscribe-Post"); v != tt.wantPost || (tt.wantPost == "" && len(h["List-Unsubscribe-Post"]) != 0) {
			t.Errorf("%s: List-Unsubscribe-Post = %q, want %q", tt.name, v, tt.wantPost)
		}
		if body := strings.ReplaceAll(got.Body, "\r\n", "\n"); body != alert.Body {
			t.Errorf("%s: body = %q", tt.name, body)
		}
	}
}

// An unsubscribe address that would break the header, or that is no web
// address a mailbox could POST to, is refused before anything is sent,
// by the log mailer too.
func TestUnsubscribeRefused(t *testing.T) {
	srv := mailtest.NewServer(t)
	m := newMailer(t, srv.URL())
	logm := NewLogMailer(slog.New(slog.DiscardHandler))
	for _, link := range []string{
		"/app/alerts/off/x",
		"mailto:stop@example.com",
		"javascript:alert(1)",
		"https://",
		"https://user:pw@listen.example.com/off",
		"https://listen.example.com/off>, <https://evil.example/",
		"https://listen.example.com/off\r\nBcc: victim@example.com",
		"https://listen.example.com/a b",
		"https://listen.example.com/é",
		"https://listen.example.com/" + strings.Repeat("a", maxUnsubscribe),
	} {
		mm := alert
		mm.Unsubscribe = link
		for _, sender := range []ports.Mailer{m, logm} {
			if err := sender.Send(t.Context(), mm); !core.IsKind(err, core.KindInvalid) {
				t.Errorf("%T.Send with Unsubscribe %.60q = %v, want kind %v", sender, link, err, core.KindInvalid)
			}
		}
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("%d messages reached the server", n)
	}
}

// The log mailer writes the headers Mailer would send, the unsubscribe
// link with them: it can only stop alert emails, so it is no secret.
func TestLogMailerHeaders(t *testing.T) {
	var buf bytes.Buffer
	l := NewLogMailer(slog.New(slog.NewTextHandler(&buf, nil)))
	mm := alert
	mm.Unsubscribe = "https://listen.example.com/app/alerts/off/AZBn3kZfc4WqkLyD0TdWbQ-v2bq6cFJHUbXGxk9qQ3M"
	if err := l.Send(t.Context(), mm); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"auto_submitted=auto-generated", "list_unsubscribe=<" + mm.Unsubscribe + ">",
		`list_unsubscribe_post="List-Unsubscribe=One-Click"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}
