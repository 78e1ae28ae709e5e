package core

import "testing"

// Telegram finds links from their dots (tdlib's match_urls): a run of
// text with a dot before "https://" is read as one candidate from that
// dot, and the address after it, its scheme swallowed or its path
// taken for another's, is then no link of its own. An @ in it is read
// as a mention, so it is defused like any other.
func TestDefuseTelegramMentionsAfterADottedRun(t *testing.T) {
	for in, want := range map[string]string{
		// "x.https" is read as a host and the rest starts with "://".
		"x.https://x.com/@someone":   "x.https://x.com/@\u2060someone",
		"a.b~https://x.com/@someone": "a.b~https://x.com/@\u2060someone",
		// The path of "a.b" runs on to the next white space: a.b has no
		// top-level name, so none of it is a link.
		"a.b/c,https://x.com/@someone":   "a.b/c,https://x.com/@\u2060someone",
		"a.b/(https://x.com/@someone":    "a.b/(https://x.com/@\u2060someone",
		"see a.b?https://x.com/@someone": "see a.b?https://x.com/@\u2060someone",
		// A dot before white space or a line's end starts nothing that
		// reaches the link.
		"a.b https://x.com/@someone":  "a.b https://x.com/@someone",
		"a.b\nhttps://x.com/@someone": "a.b\nhttps://x.com/@someone",
		"(https://x.com/@someone)":    "(https://x.com/@someone)",
		// Telegram makes no link of this host (tdlib's fix_url).
		"https://teiegram.org/@someone": "https://teiegram.org/@\u2060someone",
		"https://TeIegram.ORG/@someone": "https://TeIegram.ORG/@\u2060someone",
	} {
		if got := defuseTelegramMentions(in); got != want {
			t.Errorf("defuseTelegramMentions(%q) = %q, want %q", in, got, want)
		}
	}
}
