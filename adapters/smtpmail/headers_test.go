package smtpmail

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/mailtest"
)

// Every header built from what someone typed (the recipient and its
// display name, the subject, the sender's display name from the
// operator's setting) either goes out as one header that reads back as
// given, or the mail is refused whole: no text can start a header of
// its own (RFC 5322 section 2.2: a header ends at CRLF) or name a
// second recipient.
func TestHeadersCarryNoInjectedHeader(t *testing.T) {
	srv := mailtest.NewServer(t)
	m := newMailer(t, srv.URL())
	sent := []struct {
		name    string
		mail    ports.Mail
		subject string // as read back
	}{
		{"display name with quotes and angle brackets", ports.Mail{To: `"Ana <b@evil.example>, \"x\"" <ana@example.com>`, Subject: "s", Body: "b"}, "s"},
		{"non-ASCII display name", ports.Mail{To: "Ána Ñúñez <ana@example.com>", Subject: "s", Body: "b"}, "s"},
		{"subject with header-like text", ports.Mail{To: "ana@example.com", Subject: "s Bcc: victim@example.com", Body: "b"}, "s Bcc: victim@example.com"},
		{"subject with encoded-word syntax", ports.Mail{To: "ana@example.com", Subject: "=?UTF-8?b?DQpCY2M6IHZAZS5jb20=?=", Body: "b"},
			"=?UTF-8?b?DQpCY2M6IHZAZS5jb20=?="},
		{"subject with separators", ports.Mail{To: "ana@example.com", Subject: "s\u2028Bcc: v@example.com\u0085x", Body: "b"}, "s\u2028Bcc: v@example.com\u0085x"},
		{"body with a header", ports.Mail{To: "ana@example.com", Subject: "s", Body: "\r\nBcc: v@example.com\r\n\r\n.\r\nMAIL FROM:<x@y>"}, "s"},
	}
	for i, c := range sent {
		if err := m.Send(t.Context(), c.mail); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := srv.WaitFor(i+1, 5*time.Second)[i]
		if len(got.To) != 1 || got.To[0] != "ana@example.com" {
			t.Errorf("%s: envelope to %q", c.name, got.To)
		}
		head, _, _ := bytes.Cut(got.Raw, []byte("\r\n\r\n"))
		for _, h := range []string{"Bcc", "Cc"} {
			if got.Header.Get(h) != "" {
				t.Errorf("%s: a %s header went out:\n%s", c.name, h, head)
			}
		}
		if got.Subject != c.subject {
			t.Errorf("%s: subject %q, want %q", c.name, got.Subject, c.subject)
		}
		if strings.Contains(string(head), "MAIL FROM") {
			t.Errorf("%s: the body reached the header:\n%s", c.name, head)
		}
	}

	refused := []struct {
		name string
		mail ports.Mail
	}{
		{"CRLF in the subject", ports.Mail{To: "ana@example.com", Subject: "s\r\nBcc: v@example.com", Body: "b"}},
		{"bare LF in the subject", ports.Mail{To: "ana@example.com", Subject: "s\nBcc: v@example.com", Body: "b"}},
		{"bare CR in the subject", ports.Mail{To: "ana@example.com", Subject: "s\rBcc: v@example.com", Body: "b"}},
		{"CRLF in the display name", ports.Mail{To: "Ana\r\nBcc: v@example.com <ana@example.com>", Subject: "s", Body: "b"}},
		{"CRLF in a quoted display name", ports.Mail{To: "\"Ana\r\nBcc: v@example.com\" <ana@example.com>", Subject: "s", Body: "b"}},
		{"CRLF after the address", ports.Mail{To: "ana@example.com\r\nBcc: v@example.com", Subject: "s", Body: "b"}},
		{"two recipients", ports.Mail{To: "ana@example.com, v@example.com", Subject: "s", Body: "b"}},
		{"a group", ports.Mail{To: "all: ana@example.com, v@example.com;", Subject: "s", Body: "b"}},
		{"CRLF in the unsubscribe link", ports.Mail{To: "ana@example.com", Subject: "s", Body: "b", Unsubscribe: "https://x.example/off\r\nBcc: v@example.com"}},
	}
	logm := NewLogMailer(slog.New(slog.DiscardHandler))
	for _, c := range refused {
		for _, sender := range []ports.Mailer{m, logm} {
			if err := sender.Send(t.Context(), c.mail); !core.IsKind(err, core.KindInvalid) {
				t.Errorf("%s: %T.Send = %v, want kind %v", c.name, sender, err, core.KindInvalid)
			}
		}
	}
	if n := len(srv.Messages()); n != len(sent) {
		t.Errorf("%d messages reached the server, want %d", n, len(sent))
	}

	// The sender is the operator's setting: one with a line break in its
	// display name is refused at start.
	for _, from := range []string{"Earshot\r\nBcc: v@example.com <alerts@earshot.example>", "\"Earshot\r\nBcc: v@example.com\" <alerts@earshot.example>",
		"alerts@earshot.example, v@example.com"} {
		if _, err := New(srv.URL(), from, nil); !core.IsKind(err, core.KindInvalid) {
			t.Errorf("New with sender %q: %v, want kind %v", from, err, core.KindInvalid)
		}
	}
}
