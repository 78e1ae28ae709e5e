package core

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

// hostile is a stranger's post made to break or forge each destination's
// message: mentions of everyone in every spelling, markup of all four
// services, forged score lines, a forged link, control and bidi
// characters, invalid UTF-8, and far too much text.
func hostile() ChannelMatch {
	return ChannelMatch{
		Score:  91,
		Intent: IntentBuying,
		Reason: "asks <!here> for *help* & [more](http://evil.example)",
		Phrase: "acme & <co>",
		Author: "<@U123>|@Everyone",
		Title:  `</b><a href="http://evil.example">click</a> *bold* [x](http://evil.example) <!channel> @here`,
		Text: "line one @everyone @HERE <!channel> <@U1> <#C1>\r\n\n\n" +
			"</blockquote><b>Score 100</b>\n" +
			"*Score 100* _intent_ ~x~ `code` ||spoiler|| > quote\n" +
			"# heading\n- item\n[x](http://evil.example) <http://evil.example|Verified>\n" +
			"tab\there \u202eesrever\u202c \x00nul \x1b[31mred \ufeffbom \xff\xfe bad\n" +
			strings.Repeat("long words ", 600),
		URL:       "https://www.reddit.com/r/x/comments/abc/title/?a=1&b=<2>|(3) x",
		Platform:  Reddit,
		CreatedAt: time.Date(2026, 1, 10, 9, 30, 0, 0, time.UTC),
	}
}

const hostileLink = "https://www.reddit.com/r/x/comments/abc/title/?a=1&b=%3C2%3E%7C%283%29%20x"

func render(t *testing.T, k ChannelKind, m ChannelMatch) []byte {
	t.Helper()
	b, err := RenderChannelMatch(k, m)
	if err != nil {
		t.Fatalf("RenderChannelMatch(%s): %v", k, err)
	}
	return b
}

func TestSafeLink(t *testing.T) {
	for in, want := range map[string]string{
		"https://www.reddit.com/r/golang/comments/1/x/": "https://www.reddit.com/r/golang/comments/1/x/",
		"https://x.com/a/status/1?s=20&t=2":             "https://x.com/a/status/1?s=20&t=2",
		hostile().URL:                                   hostileLink,
		"https://en.wikipedia.org/wiki/Go_(game)":       "https://en.wikipedia.org/wiki/Go_%28game%29",
		"javascript:alert(1)":                           "",
		"data:text/html,<b>":                            "",
		"//evil.example/x":                              "",
		"https://user:pw@evil.example/":                 "",
		"ftp://evil.example/":                           "",
		"https:///nohost":                               "",
		"https://" + strings.Repeat("a", 900) + ".com/": "",
		"": "",
	} {
		if got := safeLink(in); got != want {
			t.Errorf("safeLink(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCutWordsAndExcerpt(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"one two three four", 10, "one two…"},
		{"abcdefghijklmnop", 5, "abcd…"},
		{"héllo wörld ünïcode", 12, "héllo wörld…"},
		{"日本語のテキストです", 4, "日本語…"},
		{"x", 1, "x"},
		{"xy", 1, "…"},
	} {
		got := cutWords(c.in, c.n)
		if got != c.want || utf8.RuneCountInString(got) > c.n || !utf8.ValidString(got) {
			t.Errorf("cutWords(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got := showExcerpt("a\n\n b  c \n\nd\ne\nf", 3, 100); got != "a\nb c\nd …" {
		t.Errorf("showExcerpt = %q", got)
	}
	if got := showExcerpt("\xff\u202e\x00ok", 3, 100); got != "\uFFFDok" {
		t.Errorf("showExcerpt of bad bytes = %q", got)
	}
}

func TestDefuseMentions(t *testing.T) {
	in := "@everyone @Here @CHANNEL @hereby mail@example.com @channels"
	got := defuseMentions(in)
	for _, w := range []string{"@everyone", "@here", "@channel"} {
		if strings.Contains(strings.ToLower(got), w) {
			t.Errorf("defuseMentions(%q) = %q still has %s", in, got, w)
		}
	}
	if !strings.Contains(got, "mail@example.com") {
		t.Errorf("defuseMentions changed an address: %q", got)
	}
}

// Slack

type slackMsg struct {
	Text        string `json:"text"`
	UnfurlLinks *bool  `json:"unfurl_links"`
	Blocks      []struct {
		Type string `json:"type"`
		Text *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"text"`
		Elements []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"elements"`
	} `json:"blocks"`
}

// checkSlack decodes a Slack body and checks what must hold whatever the
// input: within Block Kit's limits; every < starts a link of ours
// (<http…|label>, the label with no | < >), so no mention, channel link,
// @channel or forged link can be formed; no plain @everyone, @here or
// @channel either. It returns every mrkdwn text, first the fallback.
func checkSlack(t *testing.T, body []byte) []string {
	t.Helper()
	var m slackMsg
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("slack body is not JSON: %v\n%s", err, body)
	}
	if len(m.Blocks) == 0 || len(m.Blocks) > 50 {
		t.Fatalf("slack: %d blocks", len(m.Blocks))
	}
	texts := []string{m.Text}
	for _, b := range m.Blocks {
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Type != "mrkdwn" {
				t.Fatalf("slack section without mrkdwn text: %s", body)
			}
			texts = append(texts, b.Text.Text)
		case "context":
			if len(b.Elements) == 0 || len(b.Elements) > 10 {
				t.Fatalf("slack context with %d elements", len(b.Elements))
			}
			for _, e := range b.Elements {
				texts = append(texts, e.Text)
			}
		default:
			t.Fatalf("slack block type %q", b.Type)
		}
	}
	for _, s := range texts {
		if utf16Len(s) > slackTextMax || s == "" {
			t.Errorf("slack text of %d units: %.80q", utf16Len(s), s)
		}
		low := strings.ToLower(s)
		for _, w := range []string{"@everyone", "@here", "@channel", "<!", "<@", "<#"} {
			if strings.Contains(low, w) {
				t.Errorf("slack text has %s: %q", w, s)
			}
		}
		rest := s
		for {
			i := strings.IndexByte(rest, '<')
			if i < 0 {
				if strings.IndexByte(rest, '>') >= 0 && !quoteMarksOnly(rest) {
					t.Errorf("slack text has a stray >: %q", s)
				}
				break
			}
			j := strings.IndexByte(rest[i:], '>')
			if j < 0 {
				t.Errorf("slack text has an open <: %q", s)
				break
			}
			link := rest[i+1 : i+j]
			u, label, ok := strings.Cut(link, "|")
			if !ok || !strings.HasPrefix(u, "http") || strings.ContainsAny(u, " <>|") || strings.ContainsAny(label, "|<") {
				t.Errorf("slack link not ours: <%s> in %q", link, s)
			}
			rest = rest[i+j+1:]
		}
	}
	return texts
}

// quoteMarksOnly reports whether every > in s opens a line: Slack's
// quote, written by us.
func quoteMarksOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '>' && i > 0 && s[i-1] != '\n' {
			return false
		}
	}
	return true
}

func TestSlackMatchHostile(t *testing.T) {
	body := render(t, ChannelSlack, hostile())
	texts := checkSlack(t, body)
	if len(texts) != 4 {
		t.Fatalf("slack: %d texts, want fallback, head, quote, context: %s", len(texts), body)
	}
	head, quote, ctx := texts[1], texts[2], texts[3]
	if !strings.HasPrefix(head, "*<"+hostileLink+"|") {
		t.Errorf("head does not open with the post's link: %q", head)
	}
	if strings.Count(head, "<") != 1 || strings.Count(head, "\n") != 1 || !strings.Contains(head, "\n*Score 91* · buying · “acme &amp; &lt;co&gt;” on reddit") {
		t.Errorf("head = %q", head)
	}
	for _, l := range strings.Split(quote, "\n") {
		if !strings.HasPrefix(l, "> ") || strings.Contains(l[2:], ">") && !strings.Contains(l[2:], "&gt;") {
			t.Errorf("quote line not quoted: %q", l)
		}
	}
	if n := strings.Count(quote, "\n") + 1; n > chExcerptLine {
		t.Errorf("quote has %d lines", n)
	}
	if strings.Contains(quote, "*Score 100*") && !strings.Contains(quote, "> *Score 100*") {
		t.Errorf("a forged score line left the quote: %q", quote)
	}
	if !strings.HasPrefix(ctx, "by &lt;@U123&gt;¦@\u200bEveryone") && !strings.HasPrefix(ctx, "by &lt;@U123&gt;|@\u200bEveryone") {
		t.Errorf("context = %q", ctx)
	}
	for _, s := range texts {
		if strings.ContainsAny(s, "\u202e\x00\x1b\ufeff") || !utf8.ValidString(s) {
			t.Errorf("control, bidi or invalid bytes left in %q", s)
		}
	}
	var raw map[string]any
	_ = json.Unmarshal(body, &raw)
	if raw["unfurl_links"] != false || raw["unfurl_media"] != false {
		t.Errorf("previews not turned off: %v %v", raw["unfurl_links"], raw["unfurl_media"])
	}
}

// Discord

type discordMsg struct {
	Embeds []struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		URL         string `json:"url"`
		Color       int    `json:"color"`
		Fields      []struct {
			Name   string `json:"name"`
			Value  string `json:"value"`
			Inline bool   `json:"inline"`
		} `json:"fields"`
		Footer struct {
			Text string `json:"text"`
		} `json:"footer"`
		Timestamp string `json:"timestamp"`
	} `json:"embeds"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
	} `json:"allowed_mentions"`
	Content string `json:"content"`
}

// unescapedMarkup returns the first character of Discord markdown in s
// that no backslash escapes, or 0.
func unescapedMarkup(s string) rune {
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped = true
		case strings.ContainsRune("*_~`|>#[]<@", r):
			return r
		}
	}
	return 0
}

// checkDiscord decodes a Discord body and checks what must hold whatever
// the input: one embed within every embed limit, mentions parsed for
// nobody, no @everyone or @here readable, no markup in the title or the
// field values.
func checkDiscord(t *testing.T, body []byte) discordMsg {
	t.Helper()
	var m discordMsg
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("discord body is not JSON: %v\n%s", err, body)
	}
	if m.AllowedMentions == nil || m.AllowedMentions.Parse == nil || len(m.AllowedMentions.Parse) != 0 {
		t.Fatalf("discord: allowed_mentions must parse nothing: %s", body)
	}
	if len(m.Embeds) != 1 || m.Content != "" {
		t.Fatalf("discord: %d embeds, content %q", len(m.Embeds), m.Content)
	}
	e := m.Embeds[0]
	total := utf16Len(e.Title) + utf16Len(e.Description) + utf16Len(e.Footer.Text)
	if utf16Len(e.Title) > discordTitleMax || utf16Len(e.Description) > discordDescMax || len(e.Fields) > 25 || e.Title == "" {
		t.Errorf("discord limits: title %d, description %d, %d fields", utf16Len(e.Title), utf16Len(e.Description), len(e.Fields))
	}
	for _, f := range e.Fields {
		total += utf16Len(f.Name) + utf16Len(f.Value)
		if f.Name == "" || f.Value == "" || utf16Len(f.Name) > 256 || utf16Len(f.Value) > discordFieldMax {
			t.Errorf("discord field %q: %d units", f.Name, utf16Len(f.Value))
		}
		if r := unescapedMarkup(f.Value); r != 0 {
			t.Errorf("discord field %s has an unescaped %q: %q", f.Name, r, f.Value)
		}
	}
	if total > discordTotalMax {
		t.Errorf("discord embed of %d units", total)
	}
	if r := unescapedMarkup(e.Title); r != 0 {
		t.Errorf("discord title has an unescaped %q: %q", r, e.Title)
	}
	for _, s := range []string{e.Title, e.Description, e.Footer.Text} {
		low := strings.ToLower(s)
		if strings.Contains(low, "@everyone") || strings.Contains(low, "@here") || !utf8.ValidString(s) {
			t.Errorf("discord text %q", s)
		}
	}
	if e.URL != "" && safeLink(e.URL) != e.URL {
		t.Errorf("discord embed url %q", e.URL)
	}
	return m
}

func TestDiscordMatchHostile(t *testing.T) {
	m := checkDiscord(t, render(t, ChannelDiscord, hostile()))
	e := m.Embeds[0]
	if e.URL != hostileLink || e.Color != discordColor(91) || e.Timestamp != "2026-01-10T09:30:00Z" || e.Footer.Text != "earshot · reddit" {
		t.Errorf("embed = %+v", e)
	}
	if r := unescapedMarkup(e.Description); r != 0 {
		t.Errorf("description has an unescaped %q: %q", r, e.Description)
	}
	if strings.Contains(e.Description, "](http") && !strings.Contains(e.Description, `\](http`) {
		t.Errorf("a masked link survived: %q", e.Description)
	}
	want := map[string]string{"Score": "91", "Intent": "buying", "Phrase": "acme & \\<co\\>", "Author": "\\<\\@U123\\>\\|\\@\u200bEveryone"}
	for _, f := range e.Fields {
		if w, ok := want[f.Name]; ok && f.Value != w {
			t.Errorf("field %s = %q, want %q", f.Name, f.Value, w)
		}
	}
	if len(e.Fields) != 5 || e.Fields[4].Name != "Reason" {
		t.Errorf("fields = %+v", e.Fields)
	}
}

// Telegram

type telegramMsg struct {
	Text        string `json:"text"`
	ParseMode   string `json:"parse_mode"`
	LinkPreview struct {
		IsDisabled bool `json:"is_disabled"`
	} `json:"link_preview_options"`
	ChatID any `json:"chat_id"`
}

// checkTelegram decodes a Telegram body and checks what must hold
// whatever the input: HTML mode with previews off and no chat in the
// stored body; every tag one of ours (b, i, blockquote, a with an http
// address), balanced; every & one of the four entities Telegram knows;
// the text as shown within 4096 UTF-16 units. It returns the text as
// shown and the addresses linked.
func checkTelegram(t *testing.T, body []byte) (shown string, links []string) {
	t.Helper()
	var m telegramMsg
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("telegram body is not JSON: %v\n%s", err, body)
	}
	if m.ParseMode != "HTML" || !m.LinkPreview.IsDisabled || m.ChatID != nil {
		t.Fatalf("telegram: %s", body)
	}
	var out strings.Builder
	var open []string
	s := m.Text
	for i := 0; i < len(s); {
		switch s[i] {
		case '<':
			j := strings.IndexByte(s[i:], '>')
			if j < 0 {
				t.Fatalf("telegram: open < in %q", s)
			}
			tag := s[i+1 : i+j]
			switch {
			case tag == "b" || tag == "i" || tag == "blockquote":
				open = append(open, tag)
			case strings.HasPrefix(tag, `a href="`) && strings.HasSuffix(tag, `"`):
				href := strings.NewReplacer("&amp;", "&", "&quot;", `"`, "&lt;", "<", "&gt;", ">").Replace(tag[8 : len(tag)-1])
				if strings.ContainsAny(tag[8:len(tag)-1], `"<>`) || safeLink(href) != href {
					t.Errorf("telegram: link not ours: %q", tag)
				}
				links = append(links, href)
				open = append(open, "a")
			case strings.HasPrefix(tag, "/"):
				if len(open) == 0 || open[len(open)-1] != tag[1:] {
					t.Fatalf("telegram: </%s> closes %v in %q", tag[1:], open, s)
				}
				open = open[:len(open)-1]
			default:
				t.Fatalf("telegram: tag <%s> is not ours in %q", tag, s)
			}
			i += j + 1
		case '>', '"':
			t.Fatalf("telegram: raw %q in %q", s[i], s)
		case '&':
			ent := ""
			for _, e := range []string{"&amp;", "&lt;", "&gt;", "&quot;"} {
				if strings.HasPrefix(s[i:], e) {
					ent = e
				}
			}
			if ent == "" {
				t.Fatalf("telegram: & not an entity in %q", s[i:min(len(s), i+20)])
			}
			out.WriteString(strings.NewReplacer("&amp;", "&", "&quot;", `"`, "&lt;", "<", "&gt;", ">").Replace(ent))
			i += len(ent)
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	if len(open) != 0 {
		t.Fatalf("telegram: unclosed %v", open)
	}
	shown = out.String()
	if n := utf16Len(shown); n > telegramTextMax || n == 0 || !utf8.ValidString(shown) {
		t.Errorf("telegram text of %d units shown", n)
	}
	return shown, links
}

func TestTelegramMatchHostile(t *testing.T) {
	body := render(t, ChannelTelegram, hostile())
	shown, links := checkTelegram(t, body)
	if len(links) != 1 || links[0] != hostileLink {
		t.Errorf("links = %q", links)
	}
	var m telegramMsg
	_ = json.Unmarshal(body, &m)
	if !strings.HasPrefix(m.Text, "<b>Score 91</b> · buying · “acme &amp; &lt;co&gt;” on reddit\n<b><a href=") {
		t.Errorf("text = %q", m.Text[:min(len(m.Text), 200)])
	}
	// The forged tags show as text, inside the quote.
	if !strings.Contains(shown, "</blockquote><b>Score 100</b>") || strings.Count(m.Text, "<blockquote>") != 1 {
		t.Errorf("shown = %q", shown)
	}
}

// ntfy

type ntfyMsg struct {
	Topic    string   `json:"topic"`
	Title    string   `json:"title"`
	Message  string   `json:"message"`
	Tags     []string `json:"tags"`
	Click    string   `json:"click"`
	Priority int      `json:"priority"`
	Markdown *bool    `json:"markdown"`
}

// checkNtfy decodes an ntfy body and checks what must hold whatever the
// input: no topic stored, markdown off, the message within the size
// ntfy keeps as a message, a priority of 3 or 4, tags of emoji
// short-code characters, a click address that is a safe link.
func checkNtfy(t *testing.T, body []byte) ntfyMsg {
	t.Helper()
	var m ntfyMsg
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("ntfy body is not JSON: %v\n%s", err, body)
	}
	if m.Topic != "" || m.Markdown != nil || m.Title == "" || m.Message == "" {
		t.Fatalf("ntfy: %s", body)
	}
	if len(m.Message) > ntfyMessageMax || len(m.Title) > 1024 || !utf8.ValidString(m.Message) {
		t.Errorf("ntfy: message of %d bytes, title of %d", len(m.Message), len(m.Title))
	}
	if m.Priority != 3 && m.Priority != 4 {
		t.Errorf("ntfy priority %d", m.Priority)
	}
	for _, tag := range m.Tags {
		if ntfyTag(tag) != tag {
			t.Errorf("ntfy tag %q", tag)
		}
	}
	if m.Click != "" && safeLink(m.Click) != m.Click {
		t.Errorf("ntfy click %q", m.Click)
	}
	if strings.ContainsAny(m.Title, "\n\r") {
		t.Errorf("ntfy title on two lines: %q", m.Title)
	}
	return m
}

func TestNtfyMatchHostile(t *testing.T) {
	m := checkNtfy(t, render(t, ChannelNtfy, hostile()))
	if m.Click != hostileLink || m.Priority != 4 || strings.Join(m.Tags, ",") != "ear,reddit,buying" {
		t.Errorf("ntfy = %+v", m)
	}
	if m.Title != "Score 91 · buying · “acme & <co>” on reddit" {
		t.Errorf("title = %q", m.Title)
	}
	_, post, ok := strings.Cut(m.Message, "\n\n")
	if !ok {
		t.Fatalf("message = %q", m.Message)
	}
	for _, l := range strings.Split(post, "\n") {
		if !strings.HasPrefix(l, "> ") {
			t.Errorf("post line not quoted: %q", l)
		}
	}
	weak := hostile()
	weak.Score = 79
	if m := checkNtfy(t, render(t, ChannelNtfy, weak)); m.Priority != 3 {
		t.Errorf("priority %d for score 79", m.Priority)
	}
}

// A match with nothing but a score renders for every kind.
func TestRenderEmptyMatch(t *testing.T) {
	for _, k := range ChannelKinds {
		b := render(t, k, ChannelMatch{})
		checkAny(t, k, b)
	}
	if _, err := RenderChannelMatch(ChannelWebhook, hostile()); !IsKind(err, KindInvalid) {
		t.Errorf("RenderChannelMatch(webhook) = %v", err)
	}
	if _, err := RenderChannelDigest("email", ChannelDigest{}); !IsKind(err, KindInvalid) {
		t.Errorf("RenderChannelDigest(email) = %v", err)
	}
}

func checkAny(t *testing.T, k ChannelKind, b []byte) {
	t.Helper()
	if !json.Valid(b) || !utf8.Valid(b) {
		t.Fatalf("%s: not valid JSON: %q", k, b)
	}
	switch k {
	case ChannelSlack:
		checkSlack(t, b)
	case ChannelDiscord:
		checkDiscord(t, b)
	case ChannelTelegram:
		checkTelegram(t, b)
	case ChannelNtfy:
		checkNtfy(t, b)
	}
}

func TestRenderChannelTest(t *testing.T) {
	for _, k := range ChannelKinds {
		b, err := RenderChannelTest(k, time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		checkAny(t, k, b)
		if !strings.Contains(string(b), "earshot test message") {
			t.Errorf("%s test message: %s", k, b)
		}
	}
	if _, err := RenderChannelTest(ChannelWebhook, time.Time{}); !IsKind(err, KindInvalid) {
		t.Errorf("RenderChannelTest(webhook) = %v", err)
	}
}

// Digests

func digestOf(n int) ChannelDigest {
	d := ChannelDigest{Frequency: AlertHourly, At: time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC), MoreURL: "https://earshot.example.com/app/inbox"}
	for i := range n {
		d.Matches = append(d.Matches, ChannelMatch{
			Score: 50 + (i*37)%50, Intent: IntentQuestion, Phrase: "acme", Author: fmt.Sprintf("user%d", i),
			Title: fmt.Sprintf("post %d", i), Text: "text", URL: fmt.Sprintf("https://www.reddit.com/r/x/comments/%d/", i),
			Platform: Reddit, CreatedAt: d.At.Add(-time.Duration(i) * time.Minute),
		})
	}
	return d
}

// The scores the digest shows, in order, read from what each
// destination shows.
func digestScores(t *testing.T, k ChannelKind, b []byte) (scores []string, more string) {
	t.Helper()
	var lines []string
	switch k {
	case ChannelSlack:
		lines = checkSlack(t, b)[2:] // past the fallback and the heading
	case ChannelDiscord:
		lines = strings.Split(checkDiscord(t, b).Embeds[0].Description, "\n\n")
	case ChannelTelegram:
		shown, _ := checkTelegram(t, b)
		lines = strings.Split(shown, "\n\n")[1:]
	case ChannelNtfy:
		lines = strings.Split(checkNtfy(t, b).Message, "\n\n")
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "and ") {
			more = l
			continue
		}
		l = strings.TrimPrefix(l, "**")
		l = strings.TrimPrefix(l, "*")
		n, _, _ := strings.Cut(l, " ")
		scores = append(scores, strings.TrimRight(n, "*"))
	}
	return scores, more
}

func TestDigestStrongestFirstWithCount(t *testing.T) {
	d := digestOf(13)
	for _, k := range ChannelKinds {
		b, err := RenderChannelDigest(k, d)
		if err != nil {
			t.Fatal(err)
		}
		scores, more := digestScores(t, k, b)
		if len(scores) != ChannelDigestShown {
			t.Fatalf("%s: %d shown, want %d: %s", k, len(scores), ChannelDigestShown, b)
		}
		for i := 1; i < len(scores); i++ {
			if scores[i-1] < scores[i] {
				t.Errorf("%s: %v not strongest first", k, scores)
			}
		}
		if scores[0] != "98" || !strings.HasPrefix(more, "and 3 more") {
			t.Errorf("%s: scores %v, %q", k, scores, more)
		}
		if !strings.Contains(string(b), "13 new matches") || !strings.Contains(string(b), "https://earshot.example.com/app/inbox") {
			t.Errorf("%s: %s", k, b)
		}
	}
	// The caller may hand in the strongest ten and the count of all.
	d = digestOf(10)
	d.Total = 40
	for _, k := range ChannelKinds {
		b, _ := RenderChannelDigest(k, d)
		if _, more := digestScores(t, k, b); !strings.HasPrefix(more, "and 30 more") {
			t.Errorf("%s: %q", k, more)
		}
	}
	// The caller's slice is not reordered.
	d = digestOf(3)
	first := d.Matches[0].Score
	_, _ = RenderChannelDigest(ChannelSlack, d)
	if d.Matches[0].Score != first {
		t.Error("RenderChannelDigest sorted the caller's matches")
	}
}

// A digest of hostile posts keeps every limit: fewer are listed when the
// destination's limit says so, and the count of the rest makes up the
// total.
func TestDigestHostileWithinLimits(t *testing.T) {
	d := ChannelDigest{Frequency: AlertDaily, Total: 25, MoreURL: "https://earshot.example.com/app/inbox?x=" + strings.Repeat("y", 700)}
	for i := range 12 {
		m := hostile()
		m.Score = 99 - i
		m.Author = strings.Repeat("<@everyone>", 20)
		m.Phrase = strings.Repeat("&", 200)
		m.URL = "https://www.reddit.com/r/x/comments/" + strings.Repeat("z", 700)
		d.Matches = append(d.Matches, m)
	}
	for _, k := range ChannelKinds {
		b, err := RenderChannelDigest(k, d)
		if err != nil {
			t.Fatal(err)
		}
		scores, more := digestScores(t, k, b)
		var rest int
		if _, err := fmt.Sscanf(more, "and %d more", &rest); err != nil || len(scores)+rest != 25 || len(scores) == 0 {
			t.Errorf("%s: %d shown and %q, want 25 in all", k, len(scores), more)
		}
	}
}

func TestDigestEmpty(t *testing.T) {
	for _, k := range ChannelKinds {
		b, err := RenderChannelDigest(k, ChannelDigest{Frequency: AlertDaily})
		if err != nil {
			t.Fatal(err)
		}
		checkAny(t, k, b)
	}
}

// Fuzz: whatever a stranger writes, every body is valid JSON within its
// destination's limits, with nothing forged (the checks above).
func FuzzRenderChannel(f *testing.F) {
	h := hostile()
	f.Add(h.Score, string(h.Intent), h.Reason, h.Phrase, h.Author, h.Title, h.Text, h.URL)
	f.Add(0, "", "", "", "", "", "", "")
	f.Add(100, "buying", "r", "p", "@everyone", "[x](y)", "<b>\n> q\n*", "https://x.com/a(b)|c")
	f.Add(-5, "\xff", "&amp;", "<!channel>", "\u202e", "\\*", "````", "http://[::1]/")
	f.Fuzz(func(t *testing.T, score int, intent, reason, phrase, author, title, text, link string) {
		m := ChannelMatch{Score: score, Intent: Intent(intent), Reason: reason, Phrase: phrase, Author: author,
			Title: title, Text: text, URL: link, Platform: Platform(intent)}
		d := ChannelDigest{Frequency: AlertHourly, Total: score, MoreURL: link}
		for i := range 12 {
			m.Score = score + i
			d.Matches = append(d.Matches, m)
		}
		for _, k := range ChannelKinds {
			b, err := RenderChannelMatch(k, m)
			if err != nil {
				t.Fatal(err)
			}
			checkAny(t, k, b)
			b, err = RenderChannelDigest(k, d)
			if err != nil {
				t.Fatal(err)
			}
			checkAny(t, k, b)
		}
	})
}

// The cost of writing a message, which the delivery worker pays once per
// match and channel (the body is stored and sent as it is on every try),
// and the process's peak heap while it writes (peak-heap-MB).
func BenchmarkRenderChannel(b *testing.B) {
	m := hostile()
	d := digestOf(ChannelDigestShown)
	d.Total = 40
	for _, k := range ChannelKinds {
		b.Run(string(k)+"/match", func(b *testing.B) {
			stop := peakmem.MeasureHeap(b)
			for b.Loop() {
				if _, err := RenderChannelMatch(k, m); err != nil {
					b.Fatal(err)
				}
			}
			stop()
		})
		b.Run(string(k)+"/digest", func(b *testing.B) {
			stop := peakmem.MeasureHeap(b)
			for b.Loop() {
				if _, err := RenderChannelDigest(k, d); err != nil {
					b.Fatal(err)
				}
			}
			stop()
		})
	}
}

// A burst of one match is the match's own message; of several, a digest
// of them titled by their number, strongest first, the rest counted with
// the link, escaped as every message is.
func TestRenderChannelBurst(t *testing.T) {
	at := time.Date(2026, 1, 10, 9, 30, 1, 0, time.UTC)
	for _, k := range ChannelKinds {
		one := hostile()
		b, err := RenderChannelBurst(k, []ChannelMatch{one}, at, "https://earshot.example.com/app/")
		if err != nil || string(b) != string(render(t, k, one)) {
			t.Fatalf("%s: a burst of one is %s, %v; want the match's message", k, b, err)
		}
		d := digestOf(13)
		b, err = RenderChannelBurst(k, d.Matches, at, "https://earshot.example.com/app/")
		if err != nil {
			t.Fatal(err)
		}
		checkAny(t, k, b)
		scores, more := digestScores(t, k, b)
		if len(scores) != ChannelDigestShown || scores[0] != "98" || !strings.HasPrefix(more, "and 3 more") {
			t.Fatalf("%s: scores %v, %q: %s", k, scores, more, b)
		}
		if s := string(b); !strings.Contains(s, "13 new matches") || strings.Contains(s, "digest") ||
			!strings.Contains(s, "https://earshot.example.com/app/") {
			t.Fatalf("%s: %s", k, b)
		}
	}
	if _, err := RenderChannelBurst(ChannelWebhook, []ChannelMatch{hostile()}, at, ""); !IsKind(err, KindInvalid) {
		t.Fatalf("a webhook's burst: %v", err)
	}
	if _, err := RenderChannelBurst(ChannelSlack, nil, at, ""); !IsKind(err, KindInvalid) {
		t.Fatalf("an empty burst: %v", err)
	}
}
