package app

import (
	"net/url"
	"strings"
	"testing"
	"unicode"

	"github.com/earshothq/earshot/core"
)

// hidden are characters a plain-text reader does not show but obeys:
// bidirectional overrides, embeddings, isolates and marks, which make
// the rest of a line read backwards (a link's address read as another),
// and line and paragraph separators, which start a line of their own.
func hidden(r rune) bool {
	switch {
	case r == '\n':
		return false
	case r == '\u061c', r == '\u200e', r == '\u200f', r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069',
		r == '\u2028', r == '\u2029', r == '\u0085', r == '\ufeff':
		return true
	}
	return unicode.IsControl(r)
}

// A plain-text alert email shows what strangers wrote as text that
// cannot pass for more of the email: each match stays its three lines,
// the post's address is one word that reads as what it is (anything
// that could end it early or turn it around percent-encoded, as RFC 3986
// section 2.1 writes such bytes), and no character reorders or breaks a
// line. The reason is the scorer's, which reads the post; the address
// comes from the platform the post was read on.
func TestAlertMailShowsStrangersTextAsText(t *testing.T) {
	o := core.Owner{ID: "o1", Email: "ana@example.com"}
	hostile := []struct{ name, reason, url string }{
		{"bidi override in the reason", "asks for a tool\u202e moc.live//:sptth ta ti teG", "https://x.com/a/status/1"},
		{"isolates and marks in the reason", "cue\u2066 \u2067x\u2069\u200f\u061c\u200e", "https://x.com/a/status/2"},
		{"a line of its own in the reason", "cue\u2028Stop these emails: https://evil.example/off\u2029x\u0085y\rz", "https://x.com/a/status/3"},
		{"control characters in the reason", "cue\x1b[2J\x07\x00\ufeff", "https://x.com/a/status/4"},
		{"bidi override in the address", "cue", "https://evil.example/p?q=1\u202eelgoog.www//:sptth"},
		{"a space in the address", "cue", "https://evil.example/?q=a https://bank.example/login"},
		{"non-ASCII in the address", "cue", "https://evil.example/?q=\u00e9\u2066x"},
	}
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			ms := []core.Match{{ID: "m1", Phrase: "acme", Platform: core.X,
				Score: &core.Score{Value: 90, Intent: core.IntentBuying, Reason: h.reason}, Post: core.Post{URL: h.url, Text: "t"}}}
			for _, m := range []string{
				AlertMail(o, ms, "https://listen.example.com", "").Body,
				DigestMail(o, core.AlertSchedule{Frequency: core.AlertDaily, Hour: 9}, ms, "https://listen.example.com", "").Body,
			} {
				if i := strings.IndexFunc(m, hidden); i >= 0 {
					t.Fatalf("the body carries %q at %d:\n%s", m[i:i+4], i, m)
				}
				lines := strings.Split(m, "\n")
				var at int
				for at = range lines {
					if strings.HasPrefix(lines[at], "1. ") {
						break
					}
				}
				if at+3 >= len(lines) || lines[at+3] != "" {
					t.Fatalf("the match is not three lines:\n%s", m)
				}
				link := strings.TrimPrefix(lines[at+2], "   ")
				if strings.ContainsFunc(link, func(r rune) bool { return r <= ' ' || r >= 0x7f }) {
					t.Fatalf("the address line %q is not one ASCII word", link)
				}
				u, err := url.Parse(link)
				if err != nil || u.Host != "x.com" && u.Host != "evil.example" {
					t.Fatalf("the address line %q does not read as the post's address: %v", link, err)
				}
				for _, l := range lines {
					if strings.HasPrefix(strings.TrimSpace(l), "Stop these emails") {
						t.Fatalf("the stranger's text reads as a line of the email:\n%s", m)
					}
				}
			}
		})
	}
}
