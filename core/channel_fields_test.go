package core

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// channelHostile are, per destination, strings made against its rules,
// each put in turn into every field a stranger or an owner fills.
// Slack's rules: mrkdwn's control characters are &, < and >, and every
// link, user, channel and @channel mention is written <…>
// (https://api.slack.com/reference/surfaces/formatting#escaping).
// Discord's: markdown, masked links [x](y), <@id>, <@&role>, <#channel>
// and @everyone/@here, which allowed_mentions with an empty parse list
// keeps from pinging anyone
// (https://discord.com/developers/docs/resources/message#allowed-mentions-object).
// Telegram's, in the HTML parse mode in use: <, > and & (and " inside
// an attribute) must be entities, and only a few tags are known
// (https://core.telegram.org/bots/api#html-style). ntfy's: plain text
// with markdown off, so only its limits matter
// (https://docs.ntfy.sh/publish/#publish-as-json).
var channelHostile = map[ChannelKind][]string{
	ChannelSlack: {
		"<!channel>", "<!here|here>", "<!everyone>", "<@U024BE7LH>", "<#C024BE7LR|general>", "<!subteam^S123|team>",
		"<https://evil.example|Verified>", "&lt;!channel&gt;", "a > b < c & d", "@channel @here @everyone",
		"*bold* _it_ ~s~ `c` ```pre```", "> quote\n> more", "<!date^1392734382^{date}|x>",
	},
	ChannelDiscord: {
		"@everyone", "@here", "<@123456789012345678>", "<@!123456789012345678>", "<@&123456789012345678>", "<#123456789012345678>",
		"[Verified](https://evil.example)", "**b** __u__ ~~s~~ ||spoiler|| `c` ```pre```", "# heading", "-# small", "> quote",
		"<:emoji:123456789012345678>", "<t:1700000000:R>", "\\@everyone", "@\u200beveryone",
	},
	ChannelTelegram: {
		"</b><a href=\"https://evil.example\">Verified</a>", "<tg-spoiler>x</tg-spoiler>", "<blockquote>q", "</blockquote>",
		"&amp; &lt; &#60; &", "\"quoted\" 'single'", "<a href=\"tg://user?id=1\">you</a>", "<pre><code class=\"x\">c",
		"*bold* _it_ [x](https://evil.example)",
	},
	ChannelNtfy: {
		"**b** [x](https://evil.example)", "\n\n\nlines", "{\"topic\":\"other\"}", "\x00\x1b[31m", "\u202eesrever",
	},
}

// channelField sets one field of a match to s.
var channelField = map[string]func(*ChannelMatch, string){
	"author": func(m *ChannelMatch, s string) { m.Author = s },
	"title":  func(m *ChannelMatch, s string) { m.Title = s },
	"text":   func(m *ChannelMatch, s string) { m.Text = s },
	"url":    func(m *ChannelMatch, s string) { m.URL = "https://x.com/a/status/1?q=" + inLink(s) },
	"phrase": func(m *ChannelMatch, s string) { m.Phrase = s },
	"reason": func(m *ChannelMatch, s string) { m.Reason = s },
	"intent": func(m *ChannelMatch, s string) { m.Intent = Intent(s) },
}

// inLink is s as part of an address. An @ word there is the link's
// target, which neither Slack nor Discord shows or reads as a mention
// (and Discord's allowed_mentions pings nobody whatever the text), so it
// is written as %40 for the checks, which look for @ words anywhere.
func inLink(s string) string { return strings.ReplaceAll(s, "@", "%40") }

// Each hostile string in each field, as one match and in a digest whose
// "see them all" link carries it too, gives a body that keeps every rule
// of its destination (checkAny).
func TestChannelFieldsEscapedPerDestination(t *testing.T) {
	at := time.Date(2026, 1, 10, 9, 30, 0, 0, time.UTC)
	for k, strs := range channelHostile {
		for field, set := range channelField {
			for i, s := range strs {
				t.Run(fmt.Sprintf("%s/%s/%d", k, field, i), func(t *testing.T) {
					m := ChannelMatch{Score: 90, Intent: IntentBuying, Reason: "asks", Phrase: "acme", Author: "ada", Title: "t",
						Text: "x", URL: "https://x.com/a/status/1", Platform: X, CreatedAt: at}
					set(&m, s)
					checkAny(t, k, render(t, k, m))
					d, err := RenderChannelDigest(k, ChannelDigest{Frequency: AlertDaily, At: at, Total: 12, Matches: []ChannelMatch{m, m},
						MoreURL: "https://listen.example.com/app/?q=" + inLink(s)})
					if err != nil {
						t.Fatal(err)
					}
					checkAny(t, k, d)
					b, err := RenderChannelBurst(k, []ChannelMatch{m, m}, at, "")
					if err != nil {
						t.Fatal(err)
					}
					checkAny(t, k, b)
				})
			}
		}
	}
}
