package webhooksender

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

var _ ports.ChannelSender = (*Sender)(nil)

// DefaultTelegramAPI is the Bot API's public address
// (https://core.telegram.org/bots/api#making-requests).
const DefaultTelegramAPI = "https://api.telegram.org"

// ReasonBadTarget: a channel's stored target no longer passes its kind's
// rules (a token of the wrong shape, say); nothing was sent.
const ReasonBadTarget = "invalid_destination"

// statusGone is what a result reports for an answer that says the
// destination is gone for good, so that core's switch-off rule for a 410
// acts on it (core.Delivery.Gone).
const statusGone = http.StatusGone

// maxReasonWords bounds what of a service's own words a reason repeats.
const maxReasonWords = 100

// SendChannel delivers m once; see ports.ChannelSender. It goes through
// the same client as Send: the connect-time address check, no proxy, no
// redirect, no decompression, the timeout, at most maxAnswer bytes of the
// answer read, and those only to classify it.
func (s *Sender) SendChannel(ctx context.Context, m ports.ChannelMessage) ports.WebhookResult {
	start := time.Now()
	r := s.sendChannel(ctx, m)
	r.Duration = time.Since(start)
	return r
}

func (s *Sender) sendChannel(ctx context.Context, m ports.ChannelMessage) ports.WebhookResult {
	t, err := core.CheckChannelTarget(m.Target, s.allowPrivate)
	if err != nil {
		if m.Target.URL != "" {
			if _, uerr := core.CheckWebhookURL(m.Target.URL, s.allowPrivate); uerr != nil {
				return ports.WebhookResult{Error: ReasonBlocked}
			}
		}
		return ports.WebhookResult{Error: ReasonBadTarget}
	}
	address, body, err := s.channelRequest(t, m.Body)
	if err != nil {
		return ports.WebhookResult{Error: err.Error()}
	}

	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, address, bytes.NewReader(body))
	if err != nil {
		return ports.WebhookResult{Error: ReasonBlocked}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	if t.Kind == core.ChannelNtfy && t.Token != "" {
		req.Header.Set("Authorization", "Bearer "+t.Token)
	}

	resp, err := s.client.Do(req)
	if err != nil {
		// reason gives a plain word: the error's text would carry the
		// address, and with it a Telegram token.
		return ports.WebhookResult{Error: reason(ctx, err)}
	}
	answer := readAnswer(ctx, resp)
	return s.classify(t, resp.StatusCode, resp.Header, answer)
}

// sendError is a reason that ends a send before it starts.
type sendError string

func (e sendError) Error() string { return string(e) }

// channelRequest is where the message goes and the body it goes with: the
// stored body as it is for Slack and Discord, with the chat (Telegram) or
// the topic (ntfy) merged in for the others, so that no secret is ever
// part of what is stored.
func (s *Sender) channelRequest(t core.ChannelTarget, stored []byte) (string, []byte, error) {
	switch t.Kind {
	case core.ChannelSlack:
		// https://api.slack.com/messaging/webhooks#posting_with_webhooks
		return t.URL, stored, nil
	case core.ChannelDiscord:
		// wait=true makes Discord answer 200 with the message, or an
		// error, once it is posted, rather than 204 before
		// (https://discord.com/developers/docs/resources/webhook#execute-webhook).
		return t.URL + "?wait=true", stored, nil
	case core.ChannelTelegram:
		// https://core.telegram.org/bots/api#making-requests:
		// POST {api}/bot{token}/sendMessage with a JSON body.
		base, err := core.CheckWebhookURL(s.telegramAPI, s.allowPrivate)
		if err != nil || strings.ContainsAny(base, "?#") {
			return "", nil, sendError(ReasonBlocked)
		}
		var chat any = t.ChatID
		if n, err := strconv.ParseInt(t.ChatID, 10, 64); err == nil {
			chat = n // the Bot API takes an integer, or a string for @username
		}
		body, err := withField(stored, "chat_id", chat)
		if err != nil {
			return "", nil, sendError(ReasonBadMessage)
		}
		return strings.TrimSuffix(base, "/") + "/bot" + t.Token + "/sendMessage", body, nil
	case core.ChannelNtfy:
		// https://docs.ntfy.sh/publish/#publish-as-json: POST to the
		// server's root with the topic in the body.
		root, topic, ok := t.NtfyTopic()
		if !ok {
			return "", nil, sendError(ReasonBadTarget)
		}
		body, err := withField(stored, "topic", topic)
		if err != nil {
			return "", nil, sendError(ReasonBadMessage)
		}
		return root, body, nil
	}
	return "", nil, sendError(ReasonBadTarget)
}

// withField returns the JSON object body with key set to v.
func withField(body []byte, key string, v any) ([]byte, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("body is not a JSON object")
	}
	val, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	obj[key] = val
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// classify turns a service's answer into a result; see
// ports.ChannelSender for what each part means.
func (s *Sender) classify(t core.ChannelTarget, status int, h http.Header, answer []byte) ports.WebhookResult {
	r := ports.WebhookResult{Status: status}
	if status >= 300 && status <= 399 {
		r.Error = ReasonRedirect
		return r
	}
	var (
		words string  // what the service said, as the reason repeats it
		gone  bool    // the destination is gone for good
		wait  float64 // seconds the body asked to wait
	)
	switch t.Kind {
	case core.ChannelSlack:
		words, gone = slackAnswer(status, answer)
	case core.ChannelDiscord:
		words, gone, wait = discordAnswer(status, answer)
	case core.ChannelTelegram:
		words, gone, wait = telegramAnswer(status, answer)
	case core.ChannelNtfy:
		words, gone = ntfyAnswer(status, answer)
	}
	if words == "" && status >= 200 && status <= 299 {
		return r
	}
	words = sanitize(words, t)
	if words == "" {
		words = "http " + strconv.Itoa(status)
	} else {
		words += ", http " + strconv.Itoa(status)
	}
	r.Error = strings.ToLower(t.Kind.Label()) + ": " + words
	if gone {
		r.Status = statusGone
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		r.RetryAfter, _ = core.ParseRetryAfter(h.Get("Retry-After"), s.now())
		if !math.IsNaN(wait) && wait > 0 {
			// Whole seconds, rounded up, so the wait is never shorter than
			// asked; the cap bounds it before it can overflow.
			secs := math.Min(math.Ceil(wait), core.MaxRetryAfter.Seconds())
			r.RetryAfter = max(r.RetryAfter, time.Duration(secs)*time.Second)
		}
	}
	return r
}

// slackAnswer reads an incoming webhook's answer: 200 "ok", or an error
// code as plain text with a 4xx or 5xx status
// (https://api.slack.com/messaging/webhooks#handling_errors).
func slackAnswer(status int, answer []byte) (words string, gone bool) {
	if status >= 200 && status <= 299 {
		return "", false
	}
	code := strings.TrimSpace(string(answer))
	if len(code) > 64 || strings.Trim(code, "abcdefghijklmnopqrstuvwxyz_") != "" {
		code = ""
	}
	if e, ok := slackErrors[code]; ok {
		return e.words + " (" + code + ")", e.gone
	}
	return code, false
}

// slackErrors are the codes an incoming webhook answers with, in plain
// words; gone marks those that mean the address will never work again.
var slackErrors = map[string]struct {
	words string
	gone  bool
}{
	"invalid_token":                     {"the webhook address was revoked", true},
	"no_service":                        {"the webhook was removed or turned off", true},
	"no_service_id":                     {"the webhook address is incomplete", true},
	"no_team":                           {"the workspace no longer exists", true},
	"team_disabled":                     {"the workspace was disabled", true},
	"channel_not_found":                 {"the channel was deleted", true},
	"channel_is_archived":               {"the channel is archived", true},
	"action_prohibited":                 {"a workspace admin restricted posting to this channel", false},
	"posting_to_general_channel_denied": {"only admins may post in this channel", false},
	"invalid_payload":                   {"Slack refused the message as malformed", false},
	"no_text":                           {"Slack refused the message as empty", false},
	"rate_limited":                      {"rate limited", false},
}

// discordAnswer reads an execute-webhook answer: 200 with the message
// (wait=true) or 204; an error is JSON {"code","message"}; a 429 carries
// "retry_after" in seconds, fractional, and a Retry-After header
// (https://discord.com/developers/docs/topics/rate-limits#exceeding-a-rate-limit,
// codes at https://discord.com/developers/docs/topics/opcodes-and-status-codes#json).
func discordAnswer(status int, answer []byte) (words string, gone bool, wait float64) {
	if status >= 200 && status <= 299 {
		return "", false, 0
	}
	var e struct {
		Code       int     `json:"code"`
		Message    string  `json:"message"`
		RetryAfter float64 `json:"retry_after"`
		Global     bool    `json:"global"`
	}
	_ = json.Unmarshal(answer, &e)
	switch {
	case status == http.StatusTooManyRequests:
		words = "rate limited"
		if e.Global {
			words += " across the service"
		}
		return words, false, e.RetryAfter
	case e.Code == 10015: // Unknown Webhook
		return "the webhook was deleted (code 10015)", true, 0
	case e.Code == 50027: // Invalid Webhook Token
		return "the webhook address was reset or is wrong (code 50027)", true, 0
	case e.Code != 0:
		return e.Message + " (code " + strconv.Itoa(e.Code) + ")", false, 0
	}
	return "", false, 0
}

// telegramAnswer reads a Bot API answer: {"ok":true,"result":…} or
// {"ok":false,"error_code","description","parameters":{"retry_after",
// "migrate_to_chat_id"}} (https://core.telegram.org/bots/api#making-requests,
// https://core.telegram.org/bots/api#responseparameters).
func telegramAnswer(status int, answer []byte) (words string, gone bool, wait float64) {
	var e struct {
		OK          *bool  `json:"ok"`
		Description string `json:"description"`
		Parameters  struct {
			RetryAfter      float64 `json:"retry_after"`
			MigrateToChatID int64   `json:"migrate_to_chat_id"`
		} `json:"parameters"`
	}
	parsed := json.Unmarshal(answer, &e) == nil
	if status >= 200 && status <= 299 {
		if parsed && e.OK != nil && !*e.OK {
			return orWords(e.Description, "the Bot API answered not ok"), false, 0
		}
		return "", false, 0
	}
	desc := e.Description
	low := strings.ToLower(desc)
	switch {
	case status == http.StatusTooManyRequests:
		return "rate limited", false, e.Parameters.RetryAfter
	case e.Parameters.MigrateToChatID != 0:
		// The group became a supergroup: the old id is gone for good, and
		// the new one is what the owner needs to set.
		return "the group became a supergroup; its chat id is now " + strconv.FormatInt(e.Parameters.MigrateToChatID, 10), true, 0
	case status == http.StatusUnauthorized:
		return "the bot token was refused: revoked or wrong", true, 0
	case status == http.StatusNotFound:
		return "the Bot API does not know this bot token", true, 0
	case status == http.StatusForbidden:
		// Blocked by the user, kicked from the group, not a member of the
		// channel, the user deactivated: the bot cannot post there.
		return orWords(desc, "the bot may not post in this chat"), true, 0
	case status == http.StatusBadRequest && strings.Contains(low, "chat not found"):
		return desc, true, 0
	}
	return desc, false, 0
}

// ntfyAnswer reads an ntfy answer: 200 with the message, or
// {"code","http","error","link"} (the server's errors.go,
// https://github.com/binwiederhier/ntfy/blob/main/server/errors.go).
func ntfyAnswer(status int, answer []byte) (words string, gone bool) {
	if status >= 200 && status <= 299 {
		return "", false
	}
	var e struct {
		Code  int    `json:"code"`
		Error string `json:"error"`
	}
	_ = json.Unmarshal(answer, &e)
	if e.Error != "" && e.Code != 0 {
		words = e.Error + " (" + strconv.Itoa(e.Code) + ")"
	}
	if status == http.StatusUnauthorized {
		// The access token is unknown, expired or deleted: it will not
		// come back by itself.
		return "the access token was refused (" + orWords(words, "unauthorized") + ")", true
	}
	return words, false
}

func orWords(s, otherwise string) string {
	if strings.TrimSpace(s) == "" {
		return otherwise
	}
	return s
}

// sanitize bounds a service's words for the delivery log: the target's
// secrets taken out should the answer echo them, characters other than
// letters, digits, spaces and plain punctuation dropped, white space
// collapsed, at most maxReasonWords characters.
func sanitize(s string, t core.ChannelTarget) string {
	for _, secret := range targetSecrets(t) {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "…")
		}
	}
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), strings.ContainsRune(" .,:;!?'()-_/@#…", r):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	if utf8.RuneCountInString(out) > maxReasonWords {
		out = core.Cut(out, maxReasonWords-1) + "…"
	}
	return out
}

// targetSecrets are the parts of a target that must not reach a log.
func targetSecrets(t core.ChannelTarget) []string {
	out := []string{t.URL, t.Token}
	if _, secret, ok := strings.Cut(t.Token, ":"); ok {
		out = append(out, secret)
	}
	if i := strings.LastIndexByte(t.URL, '/'); i >= 0 {
		out = append(out, t.URL[i+1:])
	}
	return out
}
