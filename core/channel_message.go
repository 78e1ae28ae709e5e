package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// ChannelMatch is what a channel message tells of one match. Everything
// in it but Score and CreatedAt may come from a stranger (the post, its
// author, and the scorer's reason, which reads the post) and is escaped
// for each destination.
type ChannelMatch struct {
	Score     int
	Intent    Intent
	Reason    string
	Phrase    string
	Author    string
	Title     string
	Text      string
	URL       string
	Platform  Platform
	CreatedAt time.Time
}

// ChannelMatchOf is the view of a scored match; an unscored one shows
// score 0.
func ChannelMatchOf(m Match) ChannelMatch {
	c := ChannelMatch{
		Phrase: m.Phrase, Author: m.Post.Author, Title: m.Post.Title, Text: m.Post.Text,
		URL: m.Post.URL, Platform: m.Platform, CreatedAt: m.CreatedAt,
	}
	if m.Score != nil {
		c.Score, c.Intent, c.Reason = m.Score.Value, m.Score.Intent, m.Score.Reason
	}
	return c
}

// ChannelDigestShown is how many matches a digest lists; the rest are
// counted. A destination's size limit can make it list fewer.
const ChannelDigestShown = 10

// ChannelDigest is a period's matches for one channel.
type ChannelDigest struct {
	// Frequency is what the heading calls it: AlertHourly or AlertDaily,
	// or AlertAtOnce for a second's matches (RenderChannelBurst).
	Frequency AlertFrequency
	At        time.Time // when the digest was made
	// Total is how many matches the period had; fewer than len(Matches)
	// counts as len(Matches). The caller may hand in only the strongest
	// ChannelDigestShown with the count of all.
	Total   int
	Matches []ChannelMatch
	// MoreURL, optional, is where the owner sees them all.
	MoreURL string
}

// Bounds of each part of a message, in characters, before escaping. They
// keep every message well inside every destination's limits, so a long
// post is cut here, on a word, rather than by the service.
const (
	chTitle       = 150
	chExcerpt     = 500
	chExcerptLine = 4 // the first lines of the post
	chAuthor      = 60
	chReason      = 200
	chPhrase      = 100
	chIntent      = 32
	chPlatform    = 20
	chLabel       = 120 // a link's text in a digest
	chURL         = 800 // bytes of a link; a longer one is left out
)

// Limits of the destinations, from their documentation.
const (
	slackTextMax       = 3000 // a section block's text (Block Kit reference, section block)
	discordTitleMax    = 256  // embed limits (Discord developer docs, Embed Limits)
	discordDescMax     = 4096
	discordFieldMax    = 1024
	discordTotalMax    = 6000
	telegramTextMax    = 4096 // sendMessage text, after entities are parsed
	ntfyMessageMax     = 4000 // ntfy's message-size-limit is 4096 bytes by default; above it a message becomes an attachment
	ntfyPriorityStrong = 80   // at or above this score an ntfy message is high priority
)

// RenderChannelMatch writes the message for one match as the JSON body a
// channel of kind k takes, the bytes to store as the delivery's payload.
// It carries no secret of the target: the sender adds the Telegram chat
// and the ntfy topic. The error is KindInvalid for a kind that is not a
// channel.
func RenderChannelMatch(k ChannelKind, m ChannelMatch) ([]byte, error) {
	v := viewOf(m)
	switch k {
	case ChannelSlack:
		return encodeBody(slackMatch(v))
	case ChannelDiscord:
		return encodeBody(discordMatch(v))
	case ChannelTelegram:
		return encodeBody(telegramMessage(telegramMatch(v)))
	case ChannelNtfy:
		return encodeBody(ntfyMatch(v))
	}
	return nil, Errorf(KindInvalid, "kind must be one of slack, discord, telegram, ntfy")
}

// RenderChannelDigest writes a digest: the matches strongest first (then
// newest first), at most ChannelDigestShown of them and fewer when the
// destination's limit is reached, then how many more there were.
func RenderChannelDigest(k ChannelKind, d ChannelDigest) ([]byte, error) {
	if !k.IsChannel() {
		return nil, Errorf(KindInvalid, "kind must be one of slack, discord, telegram, ntfy")
	}
	ms := slices.Clone(d.Matches)
	slices.SortStableFunc(ms, func(a, b ChannelMatch) int {
		if a.Score != b.Score {
			return b.Score - a.Score
		}
		return b.CreatedAt.Compare(a.CreatedAt)
	})
	dv := digestView{
		heading: digestHeading(d.Frequency),
		at:      d.At,
		total:   max(d.Total, len(ms)),
		more:    safeLink(d.MoreURL),
	}
	for _, m := range ms[:min(len(ms), ChannelDigestShown)] {
		dv.matches = append(dv.matches, viewOf(m))
	}
	switch k {
	case ChannelSlack:
		return encodeBody(slackDigest(dv))
	case ChannelDiscord:
		return encodeBody(discordDigest(dv))
	case ChannelTelegram:
		return encodeBody(telegramMessage(telegramDigest(dv)))
	default:
		return encodeBody(ntfyDigest(dv))
	}
}

// RenderChannelBurst writes one message for the matches a channel at
// once got within one second (ChannelSlot): a single match as its own
// message (RenderChannelMatch), several as a digest of them
// (RenderChannelDigest) headed by their number, the strongest
// ChannelDigestShown listed and the rest counted, with a link to moreURL
// (optional) for them. at is when the message is made. KindInvalid for a
// kind that is not a channel, or no match.
func RenderChannelBurst(k ChannelKind, ms []ChannelMatch, at time.Time, moreURL string) ([]byte, error) {
	switch {
	case !k.IsChannel():
		return nil, Errorf(KindInvalid, "kind must be one of slack, discord, telegram, ntfy")
	case len(ms) == 0:
		return nil, Errorf(KindInvalid, "a burst needs a match")
	case len(ms) == 1:
		return RenderChannelMatch(k, ms[0])
	}
	return RenderChannelDigest(k, ChannelDigest{Frequency: AlertAtOnce, At: at, Total: len(ms), Matches: ms, MoreURL: moreURL})
}

// RenderChannelTest writes the test message an owner sends to check a
// channel.
func RenderChannelTest(k ChannelKind, at time.Time) ([]byte, error) {
	const line = "earshot test message: this channel is set up, and matches will arrive here."
	switch k {
	case ChannelSlack:
		return encodeBody(slackBody{Text: line, Blocks: []slackBlock{sectionBlock(line)}})
	case ChannelDiscord:
		e := discordEmbed{Title: "earshot test message", Description: "This channel is set up, and matches will arrive here.", Color: discordColor(0), Footer: &discordFooter{Text: "earshot"}}
		if !at.IsZero() {
			e.Timestamp = at.UTC().Format(time.RFC3339)
		}
		return encodeBody(discordBody{Embeds: []discordEmbed{e}, AllowedMentions: noMentions()})
	case ChannelTelegram:
		return encodeBody(telegramMessage("<b>earshot test message</b>\nThis chat is set up, and matches will arrive here."))
	case ChannelNtfy:
		return encodeBody(ntfyBody{Title: "earshot test message", Message: "This topic is set up, and matches will arrive here.", Tags: []string{"ear"}, Priority: 3})
	}
	return nil, Errorf(KindInvalid, "kind must be one of slack, discord, telegram, ntfy")
}

// encodeBody marshals without HTML escaping (no service needs < as
// \u003c, and the stored payload stays readable) and without the
// encoder's trailing newline.
func encodeBody(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// matchView is a match cleaned and cut: valid UTF-8 with no control,
// bidi or invisible format characters, one line where one is shown, each
// part within its bound. Nothing in it is escaped yet.
type matchView struct {
	score    int
	intent   string
	reason   string
	phrase   string
	author   string
	title    string // may be empty
	excerpt  string // up to chExcerptLine lines
	label    string // what a link to the post says: the title, else the first words, else "post on …"
	url      string // a safe absolute http(s) address, or empty
	platform string
	created  time.Time
}

func viewOf(m ChannelMatch) matchView {
	v := matchView{
		score:    min(max(m.Score, 0), 100),
		intent:   showLine(string(m.Intent), chIntent),
		reason:   showLine(m.Reason, chReason),
		phrase:   showLine(m.Phrase, chPhrase),
		author:   showLine(m.Author, chAuthor),
		title:    showLine(m.Title, chTitle),
		excerpt:  showExcerpt(m.Text, chExcerptLine, chExcerpt),
		url:      safeLink(m.URL),
		platform: showLine(string(m.Platform), chPlatform),
		created:  m.CreatedAt,
	}
	if v.intent == "" {
		v.intent = "unscored"
	}
	if v.platform == "" {
		v.platform = "a platform"
	}
	switch {
	case v.title != "":
		v.label = cutWords(v.title, chLabel)
	case v.excerpt != "":
		first, _, _ := strings.Cut(v.excerpt, "\n")
		v.label = cutWords(first, chLabel)
	default:
		v.label = "post on " + v.platform
	}
	return v
}

type digestView struct {
	heading string
	at      time.Time
	total   int
	matches []matchView
	more    string
}

// digestHeading names a digest by its frequency; the matches of one
// second at once (RenderChannelBurst) are no digest, and their heading
// is the count alone: "earshot: 12 new matches".
func digestHeading(f AlertFrequency) string {
	switch f {
	case AlertHourly, AlertDaily:
		return "earshot " + string(f) + " digest"
	case AlertAtOnce:
		return "earshot"
	}
	return "earshot digest"
}

func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// maxShowInput bounds what of a text is read at all: far more than any
// part of a message shows, so a huge input costs no more than a long one.
const maxShowInput = 64 << 10

// showable makes s valid UTF-8 and drops what could change how the rest
// is shown: control characters but the newline (a tab becomes a space),
// bidirectional overrides and marks (they can make text read backwards,
// or a link label read as something else), and invisible format
// characters such as the byte order mark. Line and paragraph separators
// become newlines.
func showable(s string) string {
	if len(s) > maxShowInput {
		s = s[:maxShowInput] // a character cut in two becomes U+FFFD below
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == '\r':
			if i < len(s) && s[i] == '\n' {
				continue
			}
			b.WriteByte('\n')
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteByte(' ')
		case r == '\u2028', r == '\u2029':
			b.WriteByte('\n')
		case r < 0x20, r >= 0x7f && r < 0xa0:
		case r == '\u061c', r == '\u200e', r == '\u200f', r >= '\u202a' && r <= '\u202e',
			r >= '\u2066' && r <= '\u2069', r == '\ufeff', r >= '\ufff9' && r <= '\ufffb':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// showLine is s cleaned, its white space runs made single spaces, cut to
// at most n characters on a word.
func showLine(s string, n int) string {
	return cutWords(strings.Join(strings.Fields(showable(s)), " "), n)
}

// showExcerpt is the first lines of s that are not blank, each on one line
// of single spaces, at most n characters in all, cut on a word; an
// ellipsis says something was left out.
func showExcerpt(s string, lines, n int) string {
	var kept []string
	cut := false
	for _, l := range strings.Split(showable(s), "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			continue
		}
		if len(kept) == lines {
			cut = true
			break
		}
		kept = append(kept, l)
	}
	out := strings.Join(kept, "\n")
	if c := cutWords(out, n); c != out {
		return c
	}
	if cut {
		out += " …"
	}
	return out
}

// cutWords cuts s to at most n characters, ending in "…" when cut: at the
// last space if one falls in the last third, else after a whole
// character.
func cutWords(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	if n == 1 {
		return "…"
	}
	end, i := 0, 0
	for j := range s {
		if i == n-1 {
			end = j
			break
		}
		i++
	}
	cut := s[:end]
	if sp := strings.LastIndexAny(cut, " \n"); sp > 0 && utf8.RuneCountInString(cut[:sp]) >= (n-1)*2/3 {
		cut = cut[:sp]
	}
	return strings.TrimRight(cut, " \n") + "…"
}

// safeLink returns raw as an absolute http or https address fit to stand
// inside any destination's link markup, or "" when it is not one or is
// longer than chURL. Every character that ends or splits link markup
// somewhere (<>|"'()[]{}\^`, white space, control and non-ASCII bytes)
// is percent-encoded; existing escapes are kept.
func safeLink(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > chURL {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Opaque != "" {
		return ""
	}
	// The host is a name (or IPv4) and maybe a port: nothing in it needs
	// escaping, and an IPv6 literal, whose brackets would, is no post's
	// address.
	if strings.Trim(strings.ToLower(u.Host), "abcdefghijklmnopqrstuvwxyz0123456789.-:") != "" {
		return ""
	}
	s := u.String()
	prefix := u.Scheme + "://" + u.Host
	if !strings.HasPrefix(s, prefix) {
		return ""
	}
	var b strings.Builder
	b.WriteString(prefix)
	for i := len(prefix); i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`<>|"'()[]{}\^`+"`", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	if b.Len() > chURL {
		return ""
	}
	return b.String()
}

// defuseMentions puts a zero-width space after the @ of @everyone, @here
// and @channel, whatever their case, so that no service reads a
// stranger's text as a call to everyone.
func defuseMentions(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] != '@' {
			continue
		}
		for _, w := range []string{"everyone", "here", "channel"} {
			if len(s)-i-1 >= len(w) && strings.EqualFold(s[i+1:i+1+len(w)], w) {
				b.WriteString("\u200b")
				break
			}
		}
	}
	return b.String()
}

// utf16Len is the length of s in UTF-16 code units, the unit JavaScript
// and Telegram count in; never less than the count of characters.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// fitEscaped escapes s rune by rune with esc and keeps the result within limit
// UTF-16 units, ending in "…" when cut; it never splits an escape.
func fitEscaped(s string, limit int, esc func(rune) string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(esc(r))
	}
	if utf16Len(b.String()) <= limit {
		return b.String()
	}
	b.Reset()
	used := 0
	for _, r := range s {
		piece := esc(r)
		if used+utf16Len(piece) > limit-1 {
			break
		}
		b.WriteString(piece)
		used += utf16Len(piece)
	}
	return b.String() + "…"
}

// Slack: Block Kit, https://api.slack.com/reference/block-kit/blocks ;
// mrkdwn and its escaping,
// https://api.slack.com/reference/surfaces/formatting#escaping .

type slackBody struct {
	Text        string       `json:"text"`
	Blocks      []slackBlock `json:"blocks"`
	UnfurlLinks bool         `json:"unfurl_links"`
	UnfurlMedia bool         `json:"unfurl_media"`
}

type slackBlock struct {
	Type     string      `json:"type"`
	Text     *slackText  `json:"text,omitempty"`
	Elements []slackText `json:"elements,omitempty"`
}

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func sectionBlock(mrkdwn string) slackBlock {
	return slackBlock{Type: "section", Text: &slackText{Type: "mrkdwn", Text: mrkdwn}}
}

func contextBlock(mrkdwn string) slackBlock {
	return slackBlock{Type: "context", Elements: []slackText{{Type: "mrkdwn", Text: mrkdwn}}}
}

// escSlack escapes the three characters Slack reads as control
// characters. With < escaped no link, user, channel or @channel mention
// (all written <…>) can be formed; defuseMentions covers the plain
// @channel a workspace's settings may still read.
func escSlack(s string) string {
	return slackEscaper.Replace(defuseMentions(s))
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackLink is <url|label>, the label escaped and with no | to end it
// early.
func slackLink(u, label string) string {
	label = strings.ReplaceAll(escSlack(label), "|", "¦")
	if u == "" {
		return label
	}
	return "<" + u + "|" + label + ">"
}

func slackMatch(v matchView) slackBody {
	head := fmt.Sprintf("*Score %d* · %s · “%s” on %s", v.score, escSlack(v.intent), escSlack(v.phrase), escSlack(v.platform))
	blocks := []slackBlock{sectionBlock("*" + slackLink(v.url, v.label) + "*\n" + head)}
	if v.excerpt != "" {
		// Each line of the post is quoted: the quote marks are ours (a
		// stranger's > is escaped), so the post cannot step out of its
		// quote to pass for part of the message.
		lines := strings.Split(v.excerpt, "\n")
		for i, l := range lines {
			lines[i] = "> " + escSlack(l)
		}
		blocks = append(blocks, sectionBlock(strings.Join(lines, "\n")))
	}
	ctx := "by " + escSlack(orDash(v.author))
	if v.reason != "" {
		ctx += " · " + escSlack(v.reason)
	}
	blocks = append(blocks, contextBlock(ctx))
	fallback := fmt.Sprintf("Score %d · %s · “%s” on %s: %s", v.score, escSlack(v.intent), escSlack(v.phrase), escSlack(v.platform), escSlack(v.label))
	return slackBody{Text: fallback, Blocks: blocks}
}

func slackDigest(d digestView) slackBody {
	head := fmt.Sprintf("%s: %s, strongest first", d.heading, countNoun(d.total, "new match", "new matches"))
	blocks := []slackBlock{sectionBlock("*" + escSlack(head) + "*")}
	for _, v := range d.matches {
		blocks = append(blocks, sectionBlock(fmt.Sprintf("*%d* · %s · %s\n“%s” on %s by %s",
			v.score, escSlack(v.intent), slackLink(v.url, v.label), escSlack(v.phrase), escSlack(v.platform), escSlack(orDash(v.author)))))
	}
	if rest := d.total - len(d.matches); rest > 0 {
		more := fmt.Sprintf("and %d more", rest)
		if d.more != "" {
			more += ": " + slackLink(d.more, "see them all")
		}
		blocks = append(blocks, contextBlock(more))
	}
	return slackBody{Text: escSlack(head), Blocks: blocks}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// Discord: execute webhook,
// https://discord.com/developers/docs/resources/webhook#execute-webhook ;
// embed limits,
// https://discord.com/developers/docs/resources/message#embed-object-embed-limits ;
// allowed mentions,
// https://discord.com/developers/docs/resources/message#allowed-mentions-object .

type discordBody struct {
	Embeds          []discordEmbed  `json:"embeds"`
	AllowedMentions discordMentions `json:"allowed_mentions"`
}

type discordMentions struct {
	Parse []string `json:"parse"`
}

// noMentions: nobody is pinged, whatever the text says.
func noMentions() discordMentions { return discordMentions{Parse: []string{}} }

type discordEmbed struct {
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	URL         string         `json:"url,omitempty"`
	Color       int            `json:"color"`
	Fields      []discordField `json:"fields,omitempty"`
	Footer      *discordFooter `json:"footer,omitempty"`
	Timestamp   string         `json:"timestamp,omitempty"`
}

type discordField struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

type discordFooter struct {
	Text string `json:"text"`
}

// escDiscordRune backslash-escapes every character Discord's markdown
// reads: emphasis, code, spoilers, quotes, headings, lists, masked links
// ([x](y)), mentions and custom emoji (<@…>, <#…>, <:…>). A backslash
// before punctuation is always taken as an escape, so the text shows as
// written.
func escDiscordRune(r rune) string {
	if strings.ContainsRune(`\*_~`+"`"+`|>#[]<-@`, r) {
		return `\` + string(r)
	}
	return string(r)
}

func escDiscord(s string, limit int) string {
	return fitEscaped(defuseMentions(s), limit, escDiscordRune)
}

func discordColor(score int) int {
	switch {
	case score >= 80:
		return 0x2e7d32
	case score >= 60:
		return 0xf9a825
	}
	return 0x607d8b
}

func discordMatch(v matchView) discordBody {
	e := discordEmbed{
		Title:       escDiscord(v.label, discordTitleMax),
		Description: escDiscord(v.excerpt, discordDescMax),
		URL:         v.url,
		Color:       discordColor(v.score),
		Fields: []discordField{
			{Name: "Score", Value: strconv.Itoa(v.score), Inline: true},
			{Name: "Intent", Value: escDiscord(v.intent, discordFieldMax), Inline: true},
			{Name: "Phrase", Value: escDiscord(orDash(v.phrase), discordFieldMax), Inline: true},
			{Name: "Author", Value: escDiscord(orDash(v.author), discordFieldMax), Inline: true},
		},
		// A footer shows no markdown: nothing in it to escape.
		Footer: &discordFooter{Text: "earshot · " + defuseMentions(v.platform)},
	}
	if v.reason != "" {
		e.Fields = append(e.Fields, discordField{Name: "Reason", Value: escDiscord(v.reason, discordFieldMax)})
	}
	if !v.created.IsZero() {
		e.Timestamp = v.created.UTC().Format(time.RFC3339)
	}
	return discordBody{Embeds: []discordEmbed{e}, AllowedMentions: noMentions()}
}

// discordLink is a masked link [label](url); the label's brackets are
// escaped and safeLink left no parenthesis in the address.
func discordLink(u, label string) string {
	l := escDiscord(label, 2*chLabel+1)
	if u == "" {
		return l
	}
	return "[" + l + "](" + u + ")"
}

func discordDigest(d digestView) discordBody {
	title := fmt.Sprintf("%s: %s", d.heading, countNoun(d.total, "new match", "new matches"))
	var lines []string
	used := 0
	moreLink := ""
	if d.more != "" {
		moreLink = ": [see them all](" + d.more + ")"
	}
	// Room kept for the "and K more" line while lines are added.
	reserve := len("\n\nand 99999999999 more") + utf16Len(moreLink)
	for _, v := range d.matches {
		l := fmt.Sprintf("**%d** · %s · %s\n“%s” on %s by %s", v.score, escDiscord(v.intent, 2*chIntent+1),
			discordLink(v.url, v.label), escDiscord(v.phrase, 2*chPhrase+1), escDiscord(v.platform, 2*chPlatform+1), escDiscord(orDash(v.author), 2*chAuthor+1))
		if used+2+utf16Len(l) > discordDescMax-reserve {
			break
		}
		lines = append(lines, l)
		used += utf16Len(l) + 2
	}
	if rest := d.total - len(lines); rest > 0 {
		lines = append(lines, fmt.Sprintf("and %d more", rest)+moreLink)
	}
	e := discordEmbed{
		Title:       escDiscord(title, discordTitleMax),
		Description: strings.Join(lines, "\n\n"),
		Color:       discordColor(0),
		Footer:      &discordFooter{Text: "earshot · strongest first"},
	}
	if len(d.matches) > 0 {
		e.Color = discordColor(d.matches[0].score)
	}
	if !d.at.IsZero() {
		e.Timestamp = d.at.UTC().Format(time.RFC3339)
	}
	return discordBody{Embeds: []discordEmbed{e}, AllowedMentions: noMentions()}
}

// Telegram: sendMessage, https://core.telegram.org/bots/api#sendmessage ;
// HTML style and its escaping,
// https://core.telegram.org/bots/api#html-style ;
// LinkPreviewOptions, https://core.telegram.org/bots/api#linkpreviewoptions .

type telegramBody struct {
	Text        string          `json:"text"`
	ParseMode   string          `json:"parse_mode"`
	LinkPreview telegramPreview `json:"link_preview_options"`
}

type telegramPreview struct {
	IsDisabled bool `json:"is_disabled"`
}

func telegramMessage(html string) telegramBody {
	return telegramBody{Text: html, ParseMode: "HTML", LinkPreview: telegramPreview{IsDisabled: true}}
}

// escTelegramHTML replaces the four characters Telegram's HTML mode
// requires as entities; nothing else of a stranger's text is read as
// markup.
var escTelegramHTML = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace

// escTelegram is text as a Telegram message shows it: no markup and no
// mention (defuseTelegramMentions). Every part of a message is text to
// it, the owner's phrase too: a phrase is a search term, and one written
// as @name would otherwise ping that user in the chat with every match.
func escTelegram(s string) string {
	return escTelegramHTML(defuseTelegramMentions(s))
}

// defuseTelegramMentions puts an invisible U+2060 WORD JOINER after each
// @ that could start a mention, so that nobody in the chat is notified
// of a stranger's @username. Telegram finds mentions in the text itself,
// whatever the parse mode, and has no switch to turn that off as
// Discord's allowed_mentions does: the Bot API's MessageEntity type
// "mention" (@username), https://core.telegram.org/bots/api#messageentity ,
// and https://core.telegram.org/api/mentions . Its parser (tdlib,
// MessageEntity.cpp, match_mentions) reads @ then 2 to 32 of
// [A-Za-z0-9_] where the @ follows no letter, digit or underscore. Here
// any @ before a username character is defused unless an ASCII letter,
// digit or underscore comes before it, which is stricter: an e-mail
// address (a@b.com) is left as written. So is an @ inside an http(s)
// link Telegram surely reads as one (telegramLinkAt): the link starts
// first, so Telegram reads no mention in it, and the link must still
// work. Telegram finds links from their dots (match_urls), and a
// candidate found from an earlier dot runs on to the next white space
// or bracket of <>": with such a dot before the link and none of those
// between, the link may be swallowed (its scheme read as a host,
// "x.https", or its whole as another's path, "a.b/https://..."), so its
// @ is defused too.
func defuseTelegramMentions(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	linkEnd := 0    // s[:linkEnd] is inside a link
	dotted := false // a '.' since the last byte that ends every link
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i >= linkEnd && !dotted && (c == 'h' || c == 'H') && (i == 0 || !telegramProtocolByte(s[i-1])) {
			linkEnd = max(linkEnd, telegramLinkAt(s, i))
		}
		switch c {
		case ' ', '\n', '<', '>', '"':
			dotted = false
		case '.':
			dotted = true
		}
		b.WriteByte(c)
		if c == '@' && i >= linkEnd && i+1 < len(s) && usernameByte(s[i+1]) && (i == 0 || !usernameByte(s[i-1])) {
			b.WriteString("\u2060")
		}
	}
	return b.String()
}

// usernameByte reports whether c is one of a Telegram username's
// characters.
func usernameByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// telegramProtocolByte reports whether c could belong to a link's
// scheme, or be a byte of a character that could (Telegram counts any
// letter before "https://" into the scheme and then may refuse it).
func telegramProtocolByte(c byte) bool {
	return usernameByte(c) || c == '+' || c == '-' || c >= 0x80
}

// telegramLinkAt returns where the link at s[i] ends when s[i:] starts
// with a link Telegram reads whole up to there: http:// or https://, a
// host of dotted labels of letters, digits and hyphens ending in a label
// of two or more letters, an optional port (1 to 65535), then a path of characters
// that end no link and unbalance no bracket (a query or fragment right
// after the host is not taken: Telegram's parser reads an @ in it as
// the end of user data).
// Otherwise it returns i. It is stricter than Telegram's parser
// (tdlib's match_urls and fix_url): a link it refuses has its @ defused.
func telegramLinkAt(s string, i int) int {
	j := i
	switch {
	case len(s)-j >= 8 && strings.EqualFold(s[j:j+8], "https://"):
		j += 8
	case len(s)-j >= 7 && strings.EqualFold(s[j:j+7], "http://"):
		j += 7
	default:
		return i
	}
	hostStart := j
	for j < len(s) && (usernameByte(s[j]) && s[j] != '_' || s[j] == '.' || s[j] == '-') {
		j++
	}
	labels := strings.Split(s[hostStart:j], ".")
	// Telegram makes no link of teiegram.org, a look-alike of its own
	// name (tdlib's fix_url), and so reads an @ in it as a mention.
	if len(labels) < 2 || strings.EqualFold(s[hostStart:j], "teiegram.org") {
		return i
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return i
		}
	}
	tld := labels[len(labels)-1]
	if len(tld) < 2 || strings.Trim(strings.ToLower(tld), "abcdefghijklmnopqrstuvwxyz") != "" {
		return i
	}
	if j < len(s) && s[j] == ':' {
		k := j + 1
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if port, err := strconv.Atoi(s[j+1 : k]); err != nil || k-j-1 > 5 || port == 0 || port > 65535 {
			return i
		}
		j = k
	}
	if j == len(s) || s[j] != '/' {
		return i
	}
	for j < len(s) && (usernameByte(s[j]) || strings.IndexByte("/?#-.~!$&*+,;=:%@", s[j]) >= 0) {
		j++
	}
	return j
}

func telegramLink(u, label string) string {
	if u == "" {
		return escTelegram(label)
	}
	return `<a href="` + escTelegramHTML(u) + `">` + escTelegram(label) + "</a>"
}

func telegramMatch(v matchView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<b>Score %d</b> · %s · “%s” on %s\n", v.score, escTelegram(v.intent), escTelegram(v.phrase), escTelegram(v.platform))
	fmt.Fprintf(&b, "<b>%s</b>\nby %s", telegramLink(v.url, v.label), escTelegram(orDash(v.author)))
	if v.excerpt != "" {
		b.WriteString("\n<blockquote>" + escTelegram(v.excerpt) + "</blockquote>")
	}
	if v.reason != "" {
		b.WriteString("\n<i>" + escTelegram(v.reason) + "</i>")
	}
	return b.String()
}

func telegramDigest(d digestView) string {
	var b strings.Builder
	head := fmt.Sprintf("%s: %s, strongest first", d.heading, countNoun(d.total, "new match", "new matches"))
	b.WriteString("<b>" + escTelegram(d.heading) + "</b>" + escTelegram(strings.TrimPrefix(head, d.heading)))
	// Telegram's limit counts the text as shown, so the visible text is
	// what is measured, with the word joiners escTelegram adds; an
	// address inside href is not shown.
	used := utf16Len(head)
	const reserve = len("\n\nand 99999999999 more: see them all")
	shown := 0
	for _, v := range d.matches {
		dm := defuseTelegramMentions
		visible := fmt.Sprintf("\n\n%d · %s · %s\n“%s” on %s by %s", v.score, dm(v.intent), dm(v.label), dm(v.phrase), dm(v.platform), dm(orDash(v.author)))
		if used+utf16Len(visible) > telegramTextMax-reserve {
			break
		}
		fmt.Fprintf(&b, "\n\n<b>%d</b> · %s · %s\n“%s” on %s by %s", v.score, escTelegram(v.intent), telegramLink(v.url, v.label),
			escTelegram(v.phrase), escTelegram(v.platform), escTelegram(orDash(v.author)))
		used += utf16Len(visible)
		shown++
	}
	if rest := d.total - shown; rest > 0 {
		fmt.Fprintf(&b, "\n\nand %d more", rest)
		if d.more != "" {
			b.WriteString(": " + telegramLink(d.more, "see them all"))
		}
	}
	return b.String()
}

// ntfy: publish as JSON, https://docs.ntfy.sh/publish/#publish-as-json ;
// limits, https://docs.ntfy.sh/config/#message-limits . Markdown stays
// off, so the message is plain text and nothing in it is markup.

type ntfyBody struct {
	Title    string   `json:"title"`
	Message  string   `json:"message"`
	Tags     []string `json:"tags,omitempty"`
	Click    string   `json:"click,omitempty"`
	Priority int      `json:"priority"`
}

// ntfyTag keeps a tag to the characters of ntfy's emoji short codes.
func ntfyTag(s string) string {
	s = strings.ToLower(s)
	if s == "" || len(s) > 32 || strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" {
		return ""
	}
	return s
}

// cutBytes cuts s on a character to at most n bytes, ending in "…" when
// cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

func ntfyMatch(v matchView) ntfyBody {
	var b strings.Builder
	b.WriteString(v.label)
	b.WriteString("\nby " + orDash(v.author))
	if v.reason != "" {
		b.WriteString("\n" + v.reason)
	}
	if v.excerpt != "" {
		// Quoted, line by line, as in Slack: the post reads as the post.
		b.WriteString("\n")
		for _, l := range strings.Split(v.excerpt, "\n") {
			b.WriteString("\n> " + l)
		}
	}
	prio := 3
	if v.score >= ntfyPriorityStrong {
		prio = 4
	}
	var tags []string
	for _, t := range []string{"ear", ntfyTag(v.platform), ntfyTag(v.intent)} {
		if t != "" {
			tags = append(tags, t)
		}
	}
	return ntfyBody{
		Title:    fmt.Sprintf("Score %d · %s · “%s” on %s", v.score, v.intent, v.phrase, v.platform),
		Message:  cutBytes(b.String(), ntfyMessageMax),
		Tags:     tags,
		Click:    v.url,
		Priority: prio,
	}
}

func ntfyDigest(d digestView) ntfyBody {
	var b strings.Builder
	reserve := len("\n\nand 99999999999 more: ") + len(d.more)
	shown := 0
	for _, v := range d.matches {
		l := fmt.Sprintf("%d · %s · %s\n“%s” on %s by %s", v.score, v.intent, v.label, v.phrase, v.platform, orDash(v.author))
		if v.url != "" {
			l += "\n" + v.url
		}
		if b.Len()+len(l)+2 > ntfyMessageMax-reserve {
			break
		}
		if shown > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(l)
		shown++
	}
	if rest := d.total - shown; rest > 0 {
		if shown > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "and %d more", rest)
		if d.more != "" {
			b.WriteString(": " + d.more)
		}
	}
	body := ntfyBody{
		Title:    fmt.Sprintf("%s: %s", d.heading, countNoun(d.total, "new match", "new matches")),
		Message:  cutBytes(b.String(), ntfyMessageMax),
		Tags:     []string{"ear"},
		Click:    d.more,
		Priority: 3,
	}
	if body.Message == "" {
		body.Message = "No new matches."
	}
	return body
}
