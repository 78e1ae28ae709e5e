package core

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below load on hosts without a zone database
)

// Addresses and tokens in the shapes each service hands out (the values
// are made up).
const (
	slackURL    = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstwxyz"
	discordURL  = "https://discord.com/api/webhooks/112233445566778899/AbCdEf_gh-IjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwxyzAB"
	botToken    = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	ntfyURL     = "https://ntfy.sh/earshot-alerts-9f3k2m"
	ntfyToken   = "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2"
	slackSecret = "abcdefghijklmnopqrstwxyz"
)

func TestChannelKindValid(t *testing.T) {
	for k, want := range map[ChannelKind]bool{
		"": true, ChannelWebhook: true, ChannelSlack: true, ChannelDiscord: true,
		ChannelTelegram: true, ChannelNtfy: true, "Slack": false, "email": false, "teams": false,
	} {
		if k.Valid() != want {
			t.Errorf("%q.Valid() = %v", k, !want)
		}
	}
	if ChannelKind("").Normal() != ChannelWebhook || ChannelSlack.Normal() != ChannelSlack {
		t.Error("Normal: the zero value is a webhook")
	}
	if ChannelKind("").IsChannel() || ChannelWebhook.IsChannel() || !ChannelNtfy.IsChannel() {
		t.Error("IsChannel: only the four destinations are channels")
	}
	for _, s := range []string{"slack", "discord", "telegram", "ntfy"} {
		if k, err := ParseChannelKind(s); err != nil || string(k) != s {
			t.Errorf("ParseChannelKind(%q) = %q, %v", s, k, err)
		}
	}
	for _, s := range []string{"", "webhook", "SLACK", "email"} {
		if _, err := ParseChannelKind(s); !IsKind(err, KindInvalid) {
			t.Errorf("ParseChannelKind(%q) = %v, want invalid", s, err)
		}
	}
}

func TestNewChannelTargetAccepts(t *testing.T) {
	for _, c := range []struct {
		kind, url, token, chat string
		want                   ChannelTarget
	}{
		{"slack", slackURL, "", "", ChannelTarget{Kind: ChannelSlack, URL: slackURL}},
		{"slack", "  " + slackURL + "\n", "", "", ChannelTarget{Kind: ChannelSlack, URL: slackURL}},
		{"slack", "https://HOOKS.slack.com/services/T1/B2/xyz", "", "", ChannelTarget{Kind: ChannelSlack, URL: "https://hooks.slack.com/services/T1/B2/xyz"}},
		{"slack", "https://hooks.slack-gov.com/services/T1/B2/xyz", "", "", ChannelTarget{Kind: ChannelSlack, URL: "https://hooks.slack-gov.com/services/T1/B2/xyz"}},
		{"discord", discordURL, "", "", ChannelTarget{Kind: ChannelDiscord, URL: discordURL}},
		{"discord", "https://discordapp.com/api/webhooks/1/tok", "", "", ChannelTarget{Kind: ChannelDiscord, URL: "https://discordapp.com/api/webhooks/1/tok"}},
		{"discord", "https://ptb.discord.com/api/webhooks/1/tok", "", "", ChannelTarget{Kind: ChannelDiscord, URL: "https://ptb.discord.com/api/webhooks/1/tok"}},
		{"discord", "https://canary.discord.com/api/v10/webhooks/1/tok", "", "", ChannelTarget{Kind: ChannelDiscord, URL: "https://canary.discord.com/api/v10/webhooks/1/tok"}},
		{"telegram", "", botToken, "-1001234567890", ChannelTarget{Kind: ChannelTelegram, Token: botToken, ChatID: "-1001234567890"}},
		{"telegram", "", " " + botToken + " ", " 42 ", ChannelTarget{Kind: ChannelTelegram, Token: botToken, ChatID: "42"}},
		{"telegram", "", botToken, "@my_channel", ChannelTarget{Kind: ChannelTelegram, Token: botToken, ChatID: "@my_channel"}},
		{"ntfy", ntfyURL, "", "", ChannelTarget{Kind: ChannelNtfy, URL: ntfyURL}},
		{"ntfy", ntfyURL + "/", ntfyToken, "", ChannelTarget{Kind: ChannelNtfy, URL: ntfyURL, Token: ntfyToken}},
		{"ntfy", "https://push.example.org/alerts_1", "Basic-like:token!", "", ChannelTarget{Kind: ChannelNtfy, URL: "https://push.example.org/alerts_1", Token: "Basic-like:token!"}},
	} {
		got, err := NewChannelTarget(c.kind, c.url, c.token, c.chat)
		if err != nil || got != c.want {
			t.Errorf("NewChannelTarget(%q, %q, %q, %q) = %+v, %v; want %+v", c.kind, c.url, c.token, c.chat, got, err, c.want)
		}
	}
}

func TestNewChannelTargetRefuses(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, c := range []struct {
		kind, url, token, chat string
		says                   string // part of the message the owner reads
	}{
		{"email", "", "", "", "kind must be one of"},
		{"webhook", slackURL, "", "", "kind must be one of"},
		{"slack", "", "", "", "url is required"},
		{"slack", "http://hooks.slack.com/services/T1/B2/xyz", "", "", "https"},
		{"slack", "https://hooks.example.com/services/T1/B2/xyz", "", "", "hooks.slack.com"},
		{"slack", "https://hooks.slack.com.evil.io/services/T1/B2/xyz", "", "", "hooks.slack.com"},
		{"slack", "https://hooks.slack.com/services/T1/B2", "", "", "/services/"},
		{"slack", "https://hooks.slack.com/services/T1/B2/x/y", "", "", "/services/"},
		{"slack", "https://hooks.slack.com/workflows/T1/A2/123/xyz", "", "", "/services/"},
		{"slack", "https://hooks.slack.com/services/T1/B2/x%2Fy", "", "", "/services/"},
		{"slack", "https://hooks.slack.com/services/T1/B2/xyz?channel=general", "", "", "query"},
		{"slack", "https://hooks.slack.com/services/T1/B2/" + long, "", "", "/services/"},
		{"slack", slackURL, "tok", "", "token"},
		{"slack", slackURL, "", "1", "chat_id"},
		{"discord", "https://discord.com/api/webhooks/123", "", "", "/api/webhooks/"},
		{"discord", "https://discord.com/api/webhooks/abc/tok", "", "", "/api/webhooks/"},
		{"discord", "https://discord.com/api/webhooks/1/tok/slack", "", "", "/api/webhooks/"},
		{"discord", "https://discord.gg/api/webhooks/1/tok", "", "", "discord.com"},
		{"discord", "https://evil.com/api/webhooks/1/tok", "", "", "discord.com"},
		{"discord", "https://discord.com/api/webhooks/1/tok?thread_id=2", "", "", "query"},
		{"discord", "https://discord.com/api/webhooks/1/" + long, "", "", "/api/webhooks/"},
		{"telegram", "", "", "1", "token is required"},
		{"telegram", "", "123:abc", "1", "bot token"},
		{"telegram", "", "bot" + botToken, "1", "bot token"},
		{"telegram", "", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw\r\nX: y", "1", "bot token"},
		{"telegram", "", botToken, "", "chat_id is required"},
		{"telegram", "", botToken, "abc", "chat_id"},
		{"telegram", "", botToken, "0", "chat_id"},
		{"telegram", "", botToken, "12345678901234567890123", "chat_id"},
		{"telegram", "", botToken, "@ab", "chat_id"},
		{"telegram", "", botToken, "@1channel", "chat_id"},
		{"telegram", "", botToken, "@chan-nel", "chat_id"},
		{"telegram", "https://api.telegram.org", botToken, "1", "url"},
		{"ntfy", "", "", "", "url is required"},
		{"ntfy", "https://ntfy.sh/", "", "", "topic"},
		{"ntfy", "https://ntfy.sh/a/b", "", "", "topic"},
		{"ntfy", "https://ntfy.sh/bad.topic", "", "", "topic"},
		{"ntfy", "https://ntfy.sh/" + strings.Repeat("t", 65), "", "", "topic"},
		{"ntfy", "https://ntfy.sh/topic?x=1", "", "", "query"},
		{"ntfy", "https://127.0.0.1/topic", "", "", "IP address"},
		{"ntfy", "https://ntfy.internal/topic", "", "", ".internal"},
		{"ntfy", "https://ntfy.example.org:8080/topic", "", "", "port 443"},
		{"ntfy", ntfyURL, "tk_with space", "", "token"},
		{"ntfy", ntfyURL, "tk_\x00", "", "token"},
		{"ntfy", ntfyURL, long, "", "token"},
		{"ntfy", ntfyURL, "", "1", "chat_id"},
	} {
		_, err := NewChannelTarget(c.kind, c.url, c.token, c.chat)
		if !IsKind(err, KindInvalid) || !strings.Contains(Message(err), c.says) {
			t.Errorf("NewChannelTarget(%q, %q, %q, %q) = %v; want invalid saying %q", c.kind, c.url, c.token, c.chat, err, c.says)
		}
		if err != nil && len(c.token) > 8 && strings.Contains(Message(err), c.token) {
			t.Errorf("the error repeats the token: %v", err)
		}
	}
}

// For local development the host rules relax, as they do for webhooks,
// but the shape of each address still holds: a test fake on loopback
// passes, a wrong path does not.
func TestCheckChannelTargetAllowPrivate(t *testing.T) {
	for _, tg := range []ChannelTarget{
		{Kind: ChannelSlack, URL: "http://127.0.0.1:8080/services/T1/B2/xyz"},
		{Kind: ChannelDiscord, URL: "http://localhost:9000/api/webhooks/1/tok"},
		{Kind: ChannelNtfy, URL: "http://ntfy:80/alerts"},
	} {
		if _, err := CheckChannelTarget(tg, true); err != nil {
			t.Errorf("CheckChannelTarget(%+v, true) = %v", tg, err)
		}
		if _, err := CheckChannelTarget(tg, false); err == nil {
			t.Errorf("CheckChannelTarget(%+v, false) accepted a private address", tg)
		}
	}
	for _, tg := range []ChannelTarget{
		{Kind: ChannelSlack, URL: "http://127.0.0.1:8080/hook"},
		{Kind: ChannelDiscord, URL: "http://127.0.0.1:8080/services/T1/B2/xyz"},
		{Kind: ChannelSlack, URL: "ftp://127.0.0.1/services/T1/B2/xyz"},
	} {
		if _, err := CheckChannelTarget(tg, true); !IsKind(err, KindInvalid) {
			t.Errorf("CheckChannelTarget(%+v, true) = %v, want invalid", tg, err)
		}
	}
}

func TestChannelTargetRedacted(t *testing.T) {
	must := func(kind, url, token, chat string) ChannelTarget {
		t.Helper()
		tg, err := NewChannelTarget(kind, url, token, chat)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	for _, c := range []struct {
		t       ChannelTarget
		want    string
		secrets []string
	}{
		{must("slack", slackURL, "", ""), "hooks.slack.com/services/T0…/B0…/…wxyz", []string{slackSecret, "T0123ABCD", "B0456EFGH"}},
		{must("discord", discordURL, "", ""), "discord.com/api/webhooks/1122…/…yzAB", []string{"AbCdEf_gh-IjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwxyzAB", "112233445566778899"}},
		{must("telegram", "", botToken, "-1009876543210"), "telegram chat -1009876543210 (bot 123456…)", []string{botToken, "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "123456789"}},
		{must("ntfy", ntfyURL, "", ""), "ntfy.sh/…3k2m", []string{"earshot-alerts-9f3k2m"}},
		{must("ntfy", "https://ntfy.sh/a-much-longer-topic-name-x9z1", ntfyToken, ""), "ntfy.sh/…x9z1 (with access token)", []string{"a-much-longer-topic-name-x9z1", ntfyToken}},
		{must("ntfy", "https://ntfy.sh/abc", "", ""), "ntfy.sh/…", []string{"abc"}},
	} {
		got := c.t.Redacted()
		if got != c.want {
			t.Errorf("Redacted() = %q, want %q", got, c.want)
		}
		for _, s := range c.secrets {
			if strings.Contains(got, s) {
				t.Errorf("Redacted() = %q shows %q whole", got, s)
			}
		}
	}
}

func TestMarshalTargetRoundTrip(t *testing.T) {
	for _, tg := range []ChannelTarget{
		{Kind: ChannelSlack, URL: slackURL},
		{Kind: ChannelDiscord, URL: discordURL},
		{Kind: ChannelTelegram, Token: botToken, ChatID: "@chan_name"},
		{Kind: ChannelNtfy, URL: ntfyURL, Token: ntfyToken},
	} {
		b, err := MarshalTarget(tg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalTarget(b)
		if err != nil || got != tg {
			t.Errorf("round trip of %+v = %+v, %v (sealed form %s)", tg, got, err, b)
		}
	}
	for _, bad := range []string{"", "null", "{}", `{"v":2,"kind":"slack","url":"x"}`, `{"v":1,"kind":"email"}`, `{"v":1,"kind":"webhook","url":"x"}`, `[1]`, `{"v":1,"kind":"slack","url":"` + slackURL + `"`} {
		_, err := UnmarshalTarget([]byte(bad))
		if err == nil {
			t.Errorf("UnmarshalTarget(%q) accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), slackURL) {
			t.Errorf("the error shows the sealed content: %v", err)
		}
	}
	if _, err := MarshalTarget(ChannelTarget{Kind: "email"}); err == nil {
		t.Error("MarshalTarget of an unknown kind succeeded")
	}
}

// The sealed form opens only with its own aad: a channel's target copied
// to another row does not open there.
func TestTargetSealsWithSealer(t *testing.T) {
	s, err := NewSealer(strings.Repeat("k", 32))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := MarshalTarget(ChannelTarget{Kind: ChannelTelegram, Token: botToken, ChatID: "1"})
	sealed, err := s.Seal(b, []byte("ch_1"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), botToken) {
		t.Fatal("the sealed form carries the token in the clear")
	}
	if _, err := s.Open(sealed, []byte("ch_2")); err == nil {
		t.Fatal("opened with another row's aad")
	}
	open, err := s.Open(sealed, []byte("ch_1"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := UnmarshalTarget(open); err != nil || got.Token != botToken {
		t.Fatalf("UnmarshalTarget = %+v, %v", got, err)
	}
}

func TestNewChannelSchedule(t *testing.T) {
	for _, c := range []struct {
		freq string
		hour int
		zone string
		want AlertSchedule
	}{
		{"", 0, "", AlertSchedule{Frequency: AlertAtOnce}},
		{"at once", 0, "", AlertSchedule{Frequency: AlertAtOnce}},
		{"hourly", 0, "", AlertSchedule{Frequency: AlertHourly}},
		{"daily", 9, "Europe/Berlin", AlertSchedule{AlertDaily, 9, "Europe/Berlin"}},
	} {
		got, err := NewChannelSchedule(c.freq, c.hour, c.zone)
		if err != nil || got != c.want {
			t.Errorf("NewChannelSchedule(%q) = %+v, %v", c.freq, got, err)
		}
	}
	_, err := NewChannelSchedule("off", 0, "")
	if !IsKind(err, KindInvalid) || !strings.Contains(Message(err), "disable or delete") {
		t.Errorf("NewChannelSchedule(off) = %v, want invalid saying how to stop a channel", err)
	}
	if _, err := NewChannelSchedule("daily", 25, ""); !IsKind(err, KindInvalid) {
		t.Errorf("NewChannelSchedule(daily, 25) = %v", err)
	}
}

func TestDigestDue(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	var never time.Time
	hourly := AlertSchedule{Frequency: AlertHourly}
	daily9Berlin := AlertSchedule{AlertDaily, 9, "Europe/Berlin"} // 08:00 UTC in winter
	for _, c := range []struct {
		name      string
		s         AlertSchedule
		last, now time.Time
		due       bool
		from      time.Time
	}{
		{"at once is no digest", AlertSchedule{Frequency: AlertAtOnce}, never, at("2026-01-10T10:00:00Z"), false, never},
		{"off is no digest", AlertSchedule{Frequency: AlertOff}, never, at("2026-01-10T10:00:00Z"), false, never},
		{"hourly, never sent: the last hour", hourly, never, at("2026-01-10T10:00:00Z"), true, at("2026-01-10T09:00:00Z")},
		{"hourly, 59m after the last", hourly, at("2026-01-10T09:01:00Z"), at("2026-01-10T10:00:00Z"), false, never},
		{"hourly, an hour after the last: from the last", hourly, at("2026-01-10T09:00:00Z"), at("2026-01-10T10:00:00Z"), true, at("2026-01-10T09:00:00Z")},
		{"hourly, after a long outage: everything since the last", hourly, at("2026-01-08T09:00:00Z"), at("2026-01-10T10:00:00Z"), true, at("2026-01-08T09:00:00Z")},
		{"daily, never sent, within the hour: the day before", daily9Berlin, never, at("2026-01-10T08:10:00Z"), true, at("2026-01-09T08:00:00Z")},
		{"daily, never sent, outside the hour", daily9Berlin, never, at("2026-01-10T10:00:00Z"), false, never},
		{"daily, sent yesterday at the hour", daily9Berlin, at("2026-01-09T08:00:30Z"), at("2026-01-10T08:00:00Z"), true, at("2026-01-09T08:00:30Z")},
		{"daily, sent today already", daily9Berlin, at("2026-01-10T08:00:30Z"), at("2026-01-10T20:00:00Z"), false, never},
		{"daily, missed while down: next sweep", daily9Berlin, at("2026-01-09T08:00:30Z"), at("2026-01-10T15:00:00Z"), true, at("2026-01-09T08:00:30Z")},
	} {
		due, from := DigestDue(c.s, c.last, c.now)
		if due != c.due || !from.Equal(c.from) {
			t.Errorf("%s: DigestDue = %v, %v; want %v, %v", c.name, due, from, c.due, c.from)
		}
	}
}

// A digest on a clock the test moves: every match lands in exactly one
// digest, none in two, none lost, when each digest's end becomes the
// next one's last.
func TestDigestPeriodsTile(t *testing.T) {
	for _, s := range []AlertSchedule{{Frequency: AlertHourly}, {AlertDaily, 7, "America/New_York"}} {
		start := time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC) // the US clock change falls inside
		var matches []time.Time
		for i := range 24 * 6 * 4 {
			matches = append(matches, start.Add(time.Duration(i)*15*time.Minute+7*time.Second))
		}
		seen := map[time.Time]int{}
		var last, firstFrom time.Time
		for now := start; now.Before(start.Add(6 * 24 * time.Hour)); now = now.Add(5 * time.Minute) {
			due, from := DigestDue(s, last, now)
			if !due {
				continue
			}
			if last.IsZero() {
				firstFrom = from
			} else if !from.Equal(last) {
				t.Fatalf("%v: period starts at %v, not at the last digest %v", s, from, last)
			}
			for _, m := range matches {
				if !m.Before(from) && m.Before(now) {
					seen[m]++
				}
			}
			last = now
		}
		if last.IsZero() {
			t.Fatalf("%v: no digest in six days", s)
		}
		for _, m := range matches {
			want := 0
			if !m.Before(firstFrom) && m.Before(last) {
				want = 1
			}
			if seen[m] != want {
				t.Fatalf("%v: match at %v in %d digests, want %d", s, m, seen[m], want)
			}
		}
	}
}

// A channel's first daily period starts at the chosen hour of the day
// before; when the clocks skipped that hour, at the change, as Due reads
// it, not at the hour before the change west of UTC.
func TestDigestDueFirstPeriodAfterSkippedHour(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	s := AlertSchedule{AlertDaily, 2, "America/New_York"} // 8 March 2026 skips 02:00
	due, from := DigestDue(s, time.Time{}, time.Date(2026, 3, 9, 2, 30, 0, 0, ny))
	if want := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC); !due || !from.Equal(want) {
		t.Fatalf("DigestDue = %v, %v; want true, %v (03:00 EDT, when the clocks passed 02:00)", due, from, want)
	}
}
