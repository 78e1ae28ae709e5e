package core

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ChannelKind is what a webhook row delivers to: a plain webhook (the
// spec's signed JSON to the owner's own receiver) or a channel, a message
// written for one chat service. Channels share the webhooks' queue, tries,
// back-off, switch-off and delivery log; only the message and the sender
// differ.
type ChannelKind string

// The kinds. The zero value "" is ChannelWebhook, so rows stored before
// channels existed keep meaning what they meant.
const (
	ChannelWebhook  ChannelKind = "webhook"
	ChannelSlack    ChannelKind = "slack"
	ChannelDiscord  ChannelKind = "discord"
	ChannelTelegram ChannelKind = "telegram"
	ChannelNtfy     ChannelKind = "ntfy"
)

// ChannelKinds lists the channel kinds, the ones a ChannelTarget holds, in
// the order pages show them.
var ChannelKinds = []ChannelKind{ChannelSlack, ChannelDiscord, ChannelTelegram, ChannelNtfy}

// Valid reports whether k is a known kind; "" is, as ChannelWebhook.
func (k ChannelKind) Valid() bool {
	return k == "" || k == ChannelWebhook || k.IsChannel()
}

// Normal returns k with the zero value spelled out as ChannelWebhook.
func (k ChannelKind) Normal() ChannelKind {
	if k == "" {
		return ChannelWebhook
	}
	return k
}

// IsChannel reports whether k is one of ChannelKinds, not a webhook.
func (k ChannelKind) IsChannel() bool {
	switch k {
	case ChannelSlack, ChannelDiscord, ChannelTelegram, ChannelNtfy:
		return true
	}
	return false
}

// Label is the service's name as its users write it.
func (k ChannelKind) Label() string {
	switch k {
	case ChannelSlack:
		return "Slack"
	case ChannelDiscord:
		return "Discord"
	case ChannelTelegram:
		return "Telegram"
	case ChannelNtfy:
		return "ntfy"
	}
	return "webhook"
}

// ParseChannelKind reads the kind of a new channel: one of ChannelKinds,
// else a KindInvalid error.
func ParseChannelKind(s string) (ChannelKind, error) {
	k := ChannelKind(s)
	if !k.IsChannel() {
		return "", Errorf(KindInvalid, "kind must be one of slack, discord, telegram, ntfy")
	}
	return k, nil
}

// ChannelTarget is where a channel's messages go, and everything of it
// that is a secret: whoever holds a Slack or Discord webhook address, a
// Telegram bot token or an ntfy topic can post there (or, for a topic on
// a public ntfy server, read along). The store keeps it sealed
// (MarshalTarget, then Sealer), pages and the API show only Redacted, and
// no delivery's stored body carries it: the sender adds what it needs.
type ChannelTarget struct {
	Kind ChannelKind
	// URL is the Slack or Discord webhook address, or the ntfy topic
	// address (https://host/topic); empty for Telegram, whose API address
	// is the operator's setting.
	URL string
	// Token is the Telegram bot token, or the ntfy access token (optional);
	// empty for Slack and Discord.
	Token string
	// ChatID is the Telegram chat: an integer (negative for groups and
	// channels) or a public channel's @username. Empty for the others.
	ChatID string
}

// Bounds of a target's parts, beside MaxWebhookURLLen for addresses.
const (
	MaxChannelTokenLen  = 256 // an ntfy access token
	maxSlackPartLen     = 64  // each of the three parts after /services/
	maxDiscordTokenLen  = 128 // the last part of a Discord webhook address (68 characters today)
	maxNtfyTopicLen     = 64  // ntfy's own limit on topic names
	maxTelegramChatID   = 20  // digits of an int64, with a sign
	minTelegramUsername = 5   // Telegram's bounds on a public @username
	maxTelegramUsername = 32
)

// slackHosts and discordHosts are the hosts that serve incoming webhooks;
// an address elsewhere is not one, whatever its path says.
var (
	slackHosts   = []string{"hooks.slack.com", "hooks.slack-gov.com"}
	discordHosts = []string{
		"discord.com", "ptb.discord.com", "canary.discord.com",
		"discordapp.com", "ptb.discordapp.com", "canary.discordapp.com",
	}
)

// NewChannelTarget checks a new channel's destination by the rules of its
// kind and returns it normalised (white space trimmed, the address as
// CheckWebhookURL returns it). Errors are KindInvalid and say what the
// owner should paste instead; they never repeat a token.
//
//   - slack: url is an incoming webhook address,
//     https://hooks.slack.com/services/T…/B…/… (or hooks.slack-gov.com).
//   - discord: url is a channel webhook address,
//     https://discord.com/api/webhooks/{id}/{token} (also discordapp.com,
//     the ptb. and canary. hosts, and /api/v{n}/webhooks/).
//   - telegram: token is a bot token from @BotFather (digits, a colon, 30
//     to 64 letters, digits, - and _); chat_id an integer or @username.
//   - ntfy: url is a topic address https://host/topic on any server that
//     passes CheckWebhookURL; token, optional, an access token (tk_…) or
//     any printable text up to MaxChannelTokenLen bytes.
//
// Every address also passes CheckWebhookURL's public-address rules, and
// none may carry a query: the sender adds what it needs.
func NewChannelTarget(kind, url, token, chatID string) (ChannelTarget, error) {
	return CheckChannelTarget(ChannelTarget{Kind: ChannelKind(kind), URL: url, Token: token, ChatID: chatID}, false)
}

// CheckChannelTarget is NewChannelTarget on a target already built, as the
// sender uses it before every send. With allowPrivate, for local
// development and tests only, the address rules relax as
// CheckWebhookURL's do and the Slack and Discord hosts are not required,
// but each kind's path shape still is.
func CheckChannelTarget(t ChannelTarget, allowPrivate bool) (ChannelTarget, error) {
	if !t.Kind.IsChannel() {
		return ChannelTarget{}, Errorf(KindInvalid, "kind must be one of slack, discord, telegram, ntfy")
	}
	t.URL = strings.TrimSpace(t.URL)
	t.Token = strings.TrimSpace(t.Token)
	t.ChatID = strings.TrimSpace(t.ChatID)
	var err error
	switch t.Kind {
	case ChannelSlack:
		err = checkNone(t.Token, "token", "Slack", "the webhook address only")
		if err == nil {
			err = checkNone(t.ChatID, "chat_id", "Slack", "the webhook address only")
		}
		if err == nil {
			t.URL, err = checkSlackURL(t.URL, allowPrivate)
		}
	case ChannelDiscord:
		err = checkNone(t.Token, "token", "Discord", "the webhook address only")
		if err == nil {
			err = checkNone(t.ChatID, "chat_id", "Discord", "the webhook address only")
		}
		if err == nil {
			t.URL, err = checkDiscordURL(t.URL, allowPrivate)
		}
	case ChannelTelegram:
		if t.URL != "" {
			return ChannelTarget{}, Errorf(KindInvalid, "url is not used for Telegram: give the bot token and the chat id")
		}
		err = checkTelegramToken(t.Token)
		if err == nil {
			err = checkTelegramChat(t.ChatID)
		}
	case ChannelNtfy:
		err = checkNone(t.ChatID, "chat_id", "ntfy", "the topic address and, for a protected topic, an access token")
		if err == nil {
			t.URL, err = checkNtfyURL(t.URL, allowPrivate)
		}
		if err == nil && t.Token != "" {
			err = checkNtfyToken(t.Token)
		}
	}
	if err != nil {
		return ChannelTarget{}, err
	}
	return t, nil
}

func checkNone(v, field, service, what string) error {
	if v != "" {
		return Errorf(KindInvalid, "%s is not used for %s: give %s", field, service, what)
	}
	return nil
}

// channelURL applies CheckWebhookURL and returns the address parsed, with
// no query allowed.
func channelURL(raw string, allowPrivate bool) (*url.URL, string, error) {
	norm, err := CheckWebhookURL(raw, allowPrivate)
	if err != nil {
		return nil, "", err
	}
	u, err := url.Parse(norm)
	if err != nil {
		return nil, "", Errorf(KindInvalid, "url is not a valid address")
	}
	if u.RawQuery != "" || u.ForceQuery {
		return nil, "", Errorf(KindInvalid, "url must not have a query (the part after ?): paste the address as the service shows it")
	}
	return u, norm, nil
}

func checkSlackURL(raw string, allowPrivate bool) (string, error) {
	bad := Errorf(KindInvalid, "url must be a Slack incoming webhook address: https://hooks.slack.com/services/T…/B…/…")
	u, norm, err := channelURL(raw, allowPrivate)
	if err != nil {
		return "", err
	}
	if !allowPrivate && !hostIn(u.Hostname(), slackHosts) {
		return "", bad
	}
	if u.RawPath != "" { // an escaped character in the path: no real address has one
		return "", bad
	}
	parts, ok := pathParts(u.Path, "services", 3)
	if !ok {
		return "", bad
	}
	for _, p := range parts {
		if len(p) > maxSlackPartLen || !alnum(p) {
			return "", bad
		}
	}
	return norm, nil
}

func checkDiscordURL(raw string, allowPrivate bool) (string, error) {
	bad := Errorf(KindInvalid, "url must be a Discord webhook address: https://discord.com/api/webhooks/{id}/{token}")
	u, norm, err := channelURL(raw, allowPrivate)
	if err != nil {
		return "", err
	}
	if !allowPrivate && !hostIn(u.Hostname(), discordHosts) {
		return "", bad
	}
	if u.RawPath != "" {
		return "", bad
	}
	if _, _, ok := discordWebhook(u.Path); !ok {
		return "", bad
	}
	return norm, nil
}

// discordWebhook splits /api[/v{n}]/webhooks/{id}/{token}.
func discordWebhook(path string) (id, token string, ok bool) {
	rest, found := strings.CutPrefix(path, "/api/")
	if !found {
		return "", "", false
	}
	if v, after, cut := strings.Cut(rest, "/"); cut && len(v) > 1 && len(v) <= 3 && v[0] == 'v' && digitsOnly(v[1:]) {
		rest = after
	}
	parts, found := pathParts("/"+rest, "webhooks", 2)
	if !found {
		return "", "", false
	}
	id, token = parts[0], parts[1]
	if len(id) > 20 || !digitsOnly(id) || len(token) > maxDiscordTokenLen || !tokenChars(token) {
		return "", "", false
	}
	return id, token, true
}

// pathParts splits /{first}/a/b/... into exactly n non-empty parts after
// first.
func pathParts(path, first string, n int) ([]string, bool) {
	rest, ok := strings.CutPrefix(path, "/"+first+"/")
	if !ok {
		return nil, false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != n {
		return nil, false
	}
	for _, p := range parts {
		if p == "" {
			return nil, false
		}
	}
	return parts, true
}

func checkTelegramToken(tok string) error {
	if tok == "" {
		return Errorf(KindInvalid, "token is required: the bot token @BotFather gave you")
	}
	bad := Errorf(KindInvalid, "token must be a Telegram bot token as @BotFather gives it, such as 123456789:AAH… (digits, a colon, then 30 to 64 letters, digits, - or _)")
	id, secret, ok := strings.Cut(tok, ":")
	if !ok || len(id) < 5 || len(id) > 16 || !digitsOnly(id) || len(secret) < 30 || len(secret) > 64 || !tokenChars(secret) {
		return bad
	}
	return nil
}

func checkTelegramChat(chat string) error {
	if chat == "" {
		return Errorf(KindInvalid, "chat_id is required: the chat's number, such as -1001234567890, or a public channel's @username")
	}
	bad := Errorf(KindInvalid, "chat_id must be a chat's number, such as -1001234567890, or a public channel's @username (5 to 32 letters, digits or _, starting with a letter)")
	if name, ok := strings.CutPrefix(chat, "@"); ok {
		if len(name) < minTelegramUsername || len(name) > maxTelegramUsername || !isLetter(name[0]) {
			return bad
		}
		for i := 0; i < len(name); i++ {
			if c := name[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' {
				return bad
			}
		}
		return nil
	}
	if len(chat) > maxTelegramChatID {
		return bad
	}
	n, err := strconv.ParseInt(chat, 10, 64)
	if err != nil || n == 0 || strconv.FormatInt(n, 10) != chat {
		return bad
	}
	return nil
}

func checkNtfyURL(raw string, allowPrivate bool) (string, error) {
	bad := Errorf(KindInvalid, "url must be an ntfy topic address such as https://ntfy.sh/your-topic: one topic of 1 to 64 letters, digits, - or _ after the server")
	// A trailing slash is a common slip when copying; the topic is the same.
	trimmed := strings.TrimSpace(raw)
	if strings.Count(trimmed, "/") > 3 {
		trimmed = strings.TrimSuffix(trimmed, "/")
	}
	u, norm, err := channelURL(trimmed, allowPrivate)
	if err != nil {
		return "", err
	}
	if u.RawPath != "" {
		return "", bad
	}
	topic, ok := strings.CutPrefix(u.Path, "/")
	if !ok || topic == "" || len(topic) > maxNtfyTopicLen || !tokenChars(topic) {
		return "", bad
	}
	return norm, nil
}

func checkNtfyToken(tok string) error {
	if len(tok) > MaxChannelTokenLen {
		return Errorf(KindInvalid, "token must be at most %d characters", MaxChannelTokenLen)
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] > '~' {
			return Errorf(KindInvalid, "token must be an ntfy access token such as tk_…: printable characters, no spaces")
		}
	}
	return nil
}

// NtfyTopic splits an ntfy target's address into the server's root
// (scheme://host[:port]/, where JSON messages are published) and the topic.
func (t ChannelTarget) NtfyTopic() (root, topic string, ok bool) {
	if t.Kind != ChannelNtfy {
		return "", "", false
	}
	u, err := url.Parse(t.URL)
	if err != nil || u.Host == "" {
		return "", "", false
	}
	topic = strings.TrimPrefix(u.Path, "/")
	if topic == "" || strings.Contains(topic, "/") {
		return "", "", false
	}
	return u.Scheme + "://" + u.Host + "/", topic, true
}

// Redacted describes the target for pages and the API without giving any
// secret whole: enough of each part for an owner to tell two channels
// apart, never enough to post there.
//
//	hooks.slack.com/services/T0…/B0…/…abcd
//	discord.com/api/webhooks/1122…/…abcd
//	telegram chat -1001234567890 (bot 123456…)
//	ntfy.sh/…abcd (with access token)
func (t ChannelTarget) Redacted() string {
	switch t.Kind {
	case ChannelSlack:
		u, err := url.Parse(t.URL)
		if err != nil {
			return "Slack webhook"
		}
		parts, ok := pathParts(u.Path, "services", 3)
		if !ok {
			return u.Host + "/…"
		}
		return u.Host + "/services/" + redactHead(parts[0], 2) + "/" + redactHead(parts[1], 2) + "/" + redactTail(parts[2])
	case ChannelDiscord:
		u, err := url.Parse(t.URL)
		if err != nil {
			return "Discord webhook"
		}
		id, token, ok := discordWebhook(u.Path)
		if !ok {
			return u.Host + "/…"
		}
		return u.Host + "/api/webhooks/" + redactHead(id, 4) + "/" + redactTail(token)
	case ChannelTelegram:
		id, _, _ := strings.Cut(t.Token, ":")
		return "telegram chat " + t.ChatID + " (bot " + redactHead(id, 6) + ")"
	case ChannelNtfy:
		s := "ntfy topic"
		if u, err := url.Parse(t.URL); err == nil {
			s = u.Host + "/" + redactTail(strings.TrimPrefix(u.Path, "/"))
		}
		if t.Token != "" {
			s += " (with access token)"
		}
		return s
	}
	return t.URL
}

// redactHead is the first n bytes of s and an ellipsis, never all of s.
func redactHead(s string, n int) string {
	n = min(n, len(s)-1)
	if n <= 0 {
		return "…"
	}
	return s[:n] + "…"
}

// redactTail is an ellipsis and the last few bytes of s: 4, or fewer for a
// short s, so that at most a quarter shows.
func redactTail(s string) string {
	n := min(4, len(s)/4)
	return "…" + s[len(s)-n:]
}

func hostIn(host string, hosts []string) bool {
	for _, h := range hosts {
		if host == h {
			return true
		}
	}
	return false
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// tokenChars: letters, digits, - and _, the alphabet of Discord and
// Telegram tokens and of ntfy topics.
func tokenChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '-' && c != '_' {
			return false
		}
	}
	return s != ""
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// sealedTarget is the form a target takes inside the sealed column. V
// lets a later form be told apart from this one.
type sealedTarget struct {
	V      int    `json:"v"`
	Kind   string `json:"kind"`
	URL    string `json:"url,omitempty"`
	Token  string `json:"token,omitempty"`
	ChatID string `json:"chat_id,omitempty"`
}

const sealedTargetVersion = 1

// MarshalTarget gives the bytes the store seals (Sealer.Seal, with the
// channel's id as aad) in place of the webhook signing secret.
func MarshalTarget(t ChannelTarget) ([]byte, error) {
	if !t.Kind.IsChannel() {
		return nil, errors.New("marshal target: not a channel kind")
	}
	return json.Marshal(sealedTarget{V: sealedTargetVersion, Kind: string(t.Kind), URL: t.URL, Token: t.Token, ChatID: t.ChatID})
}

// UnmarshalTarget reads what MarshalTarget wrote, once opened. It checks
// the form, not the rules (the sender checks those before every send);
// its error never holds any of the content.
func UnmarshalTarget(b []byte) (ChannelTarget, error) {
	var s sealedTarget
	if err := json.Unmarshal(b, &s); err != nil {
		return ChannelTarget{}, errors.New("unmarshal target: not a sealed channel target")
	}
	if s.V != sealedTargetVersion {
		return ChannelTarget{}, errors.New("unmarshal target: unknown version " + strconv.Itoa(s.V))
	}
	t := ChannelTarget{Kind: ChannelKind(s.Kind), URL: s.URL, Token: s.Token, ChatID: s.ChatID}
	if !t.Kind.IsChannel() {
		return ChannelTarget{}, errors.New("unmarshal target: not a channel kind")
	}
	return t, nil
}

// NewChannelSchedule validates a channel's frequency: at once, hourly, or
// daily at an hour in a zone, as NewAlertSchedule reads them. Off is
// refused: a channel is stopped by disabling or deleting it, so that one
// switch, not two, says whether it sends.
func NewChannelSchedule(frequency string, hour int, zone string) (AlertSchedule, error) {
	s, err := NewAlertSchedule(frequency, hour, zone)
	if err != nil {
		return AlertSchedule{}, err
	}
	if s.Frequency == AlertOff {
		return AlertSchedule{}, Errorf(KindInvalid, "frequency off is not for a channel: disable or delete the channel to stop its messages")
	}
	return s, nil
}

// DigestDue reports whether a digest schedule's next digest goes out at
// now, given when the last went out (zero: never), and the start of the
// period it gathers: the matches created at or after periodStart and
// before now. When each digest's now is kept as the next one's last, the
// periods follow one another with no gap and no overlap, however late a
// sweep comes (Due decides when).
//
// A first digest gathers one period back: the hour before now, or the day
// before the chosen hour; the caller starts no earlier than the channel's
// creation. At once and off are not digests: never due here.
//
// A last that clockAhead says a wrong clock stamped is taken as now: the
// period is due at once and empty (periodStart is now: it gathers
// nothing, so nothing is sent), and with now kept as the next one's
// last, the next digest is due one period after the present, not after
// the clock passes the stamp. A match stamped by a clock that agrees
// with the present is in no period twice; one the clock that was ahead
// scored before its last digest carries a stamp past now, and the period
// that reaches the stamp gathers it again.
func DigestDue(s AlertSchedule, last, now time.Time) (due bool, periodStart time.Time) {
	if !s.Digest() {
		return false, time.Time{}
	}
	if clockAhead(last, now) {
		return true, now
	}
	if !s.Due(now, last) {
		return false, time.Time{}
	}
	if !last.IsZero() {
		return true, last
	}
	if s.Frequency == AlertHourly {
		return true, now.Add(-time.Hour)
	}
	loc, err := alertZone(s.Zone)
	if err != nil {
		loc = time.UTC // as Due does
	}
	at := s.lastDailyHour(now.In(loc))
	y, m, d := at.Date()
	return true, s.hourOn(y, m, d-1, at.Location())
}
