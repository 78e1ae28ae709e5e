package core

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// telegramMentionAt reports whether Telegram reads a mention of a user
// at s[i], an '@': the rule of its entity parser (tdlib's match_mentions,
// the Bot API's MessageEntity type "mention"): not after a word
// character, then 2 to 32 of [A-Za-z0-9_], then no word character. Only
// ASCII word characters are counted before the '@' here, so the check is
// stricter than Telegram.
func telegramMentionAt(s string, i int) bool {
	if i > 0 && isASCIIWord(s[i-1]) {
		return false
	}
	j := i + 1
	for j < len(s) && isASCIIWord(s[j]) {
		j++
	}
	return j-i-1 >= 2 && j-i-1 <= 32
}

func isASCIIWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// A stranger's @username reaches a Telegram chat as text that mentions
// nobody, in a match, a digest and a burst, in every field shown;
// addresses and links stay as written. Discord parses no mention, and
// Slack and ntfy read no plain @name as one: their text is left alone.
func TestTelegramStrangerMentions(t *testing.T) {
	at := time.Date(2026, 1, 10, 9, 30, 0, 0, time.UTC)
	cases := []struct{ in, want string }{
		{"@someone", "@\u2060someone"},
		{"hi @someone!", "hi @\u2060someone!"},
		{"mail a@b.com", "mail a@b.com"},
		{"https://x.com/@someone/status/1", "https://x.com/@someone/status/1"},
		{"@@x", "@@\u2060x"},
		{"@_x", "@\u2060_x"},
		{"@", "@"},
	}
	for _, c := range cases {
		m := ChannelMatch{Score: 70, Intent: IntentBuying, Reason: c.in, Phrase: c.in, Author: c.in,
			Title: c.in, Text: c.in, URL: "https://www.reddit.com/r/x/comments/abc/", Platform: Reddit, CreatedAt: at}
		other := m
		other.Score = 60
		bodies := map[string]func(ChannelKind) ([]byte, error){
			"match": func(k ChannelKind) ([]byte, error) { return RenderChannelMatch(k, m) },
			"digest": func(k ChannelKind) ([]byte, error) {
				return RenderChannelDigest(k, ChannelDigest{Frequency: AlertDaily, At: at, Matches: []ChannelMatch{m, other}})
			},
			"burst": func(k ChannelKind) ([]byte, error) { return RenderChannelBurst(k, []ChannelMatch{m, other}, at, "") },
		}
		for name, f := range bodies {
			for _, k := range ChannelKinds {
				b, err := f(k)
				if err != nil {
					t.Fatal(err)
				}
				checkAny(t, k, b)
				if k != ChannelTelegram {
					// Slack links plain @names only when asked (link_names).
					if strings.Contains(string(b), "\u2060") || strings.Contains(string(b), "link_names") {
						t.Errorf("%s %s of %q: %s", k, name, c.in, b)
					}
					continue
				}
				shown, _ := checkTelegram(t, b)
				var msg telegramMsg
				_ = json.Unmarshal(b, &msg)
				if !strings.Contains(shown, c.want) || (c.in != c.want && strings.Contains(shown, c.in)) {
					t.Errorf("telegram %s of %q shows %q, want %q in it", name, c.in, shown, c.want)
				}
				// Nothing of the text mentions anyone, but inside the link.
				rest := strings.ReplaceAll(shown, "https://x.com/@someone/status/1", "")
				for i := range len(rest) {
					if rest[i] == '@' && telegramMentionAt(rest, i) {
						t.Errorf("telegram %s of %q mentions at %d: %q", name, c.in, i, rest)
					}
				}
				if strings.Contains(msg.Text, `href="https://x.com`) {
					t.Errorf("telegram %s made a link of the text: %s", name, msg.Text)
				}
			}
		}
	}
}

func TestDefuseTelegramMentions(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "",
		"@ab":                                "@\u2060ab",
		"(@ab)":                              "(@\u2060ab)",
		"é@ab":                               "é@\u2060ab", // stricter than Telegram, which reads é as a letter
		"x_@ab a1@ab":                        "x_@ab a1@ab",
		"@\u2060ab":                          "@\u2060ab", // already no mention
		"http://x.com/@ab https://x.com/@ab": "http://x.com/@ab https://x.com/@ab",
		"HTTPS://X.COM/a/b?c=d&e=@ab#@cd":    "HTTPS://X.COM/a/b?c=d&e=@ab#@cd",
		// Not a link Telegram surely reads: no dot, an odd scheme, user
		// data, a quote or bracket that may end it, a space.
		"https://localhost/@ab":     "https://localhost/@\u2060ab",
		"ftp://x.com/@ab":           "ftp://x.com/@\u2060ab",
		"https://@ab":               "https://@\u2060ab",
		`https://x.com/"@ab`:        `https://x.com/"@` + "\u2060ab",
		"https://x.com/(@ab":        "https://x.com/(@\u2060ab",
		"https://x.com/ @ab":        "https://x.com/ @\u2060ab",
		"https://x.com\n@ab":        "https://x.com\n@\u2060ab",
		"https://x.com?@ab":         "https://x.com?@\u2060ab",
		"https://x.com:99999/@ab":   "https://x.com:99999/@\u2060ab",
		"https://x.c0m/@ab":         "https://x.c0m/@\u2060ab",
		"shttps://x.com/@ab":        "shttps://x.com/@\u2060ab",
		"https://x.com:8080/@ab":    "https://x.com:8080/@ab",
		"see https://x.com/a, @ab.": "see https://x.com/a, @\u2060ab.",
		// Telegram finds links from their dots (tdlib's match_urls): a
		// run of text with a dot before "https://" is read as one
		// candidate from that dot, and the address after it, its scheme
		// swallowed or its path taken for another's, is then no link of
		// its own. An @ in it is read as a mention, so it is defused like
		// any other. "x.https" is read as a host and the rest starts with
		// "://".
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

// The word joiners count in Telegram's limit: a digest of matches whose
// every part is made of mentions keeps within it.
func TestTelegramDigestOfMentionsWithinLimit(t *testing.T) {
	d := ChannelDigest{Frequency: AlertDaily, Total: 30}
	for i := range ChannelDigestShown {
		d.Matches = append(d.Matches, ChannelMatch{
			Score: 90 - i, Intent: Intent(strings.Repeat(".@a", 20)), Platform: Platform(strings.Repeat(".@a", 10)),
			Phrase: strings.Repeat(".@a", 60), Author: strings.Repeat(".@a", 30), Title: strings.Repeat(".@a", 60),
			URL: "https://www.reddit.com/r/x/comments/abc/",
		})
	}
	for _, b := range [][]byte{must(RenderChannelDigest(ChannelTelegram, d)), must(RenderChannelBurst(ChannelTelegram, d.Matches, time.Time{}, ""))} {
		shown, _ := checkTelegram(t, b)
		if !strings.Contains(shown, ".@\u2060a") {
			t.Errorf("no mention defused: %q", shown[:200])
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
