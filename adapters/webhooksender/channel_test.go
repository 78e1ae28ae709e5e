package webhooksender_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Made-up secrets in each service's shape.
const (
	slackPath  = "/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstwxyz"
	discordID  = "112233445566778899"
	discordTok = "AbCdEf_gh-IjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwxyzAB"
	botToken   = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	ntfyTopic  = "earshot-alerts-9f3k2m"
	ntfyToken  = "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2"
)

// received is one request a fake saw.
type received struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// fake is a service on loopback that records each request and answers
// with the status, headers and body the test sets.
type fake struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	got     []received
	status  int
	header  map[string]string
	answer  string
	handler http.HandlerFunc // when set, answers instead
}

func newFake(t *testing.T) *fake {
	f := &fake{t: t, status: http.StatusOK}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.got = append(f.got, received{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		status, header, answer, h := f.status, f.header, f.answer, f.handler
		f.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) answerWith(status int, answer string, header map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.answer, f.header = status, answer, header
}

func (f *fake) last() received {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		f.t.Fatal("the fake received nothing")
	}
	return f.got[len(f.got)-1]
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.got)
}

var fixedNow = time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC)

func channelSender(telegramAPI string) *webhooksender.Sender {
	return webhooksender.New(webhooksender.Config{AllowPrivate: true, Timeout: 2 * time.Second, TelegramAPI: telegramAPI, Now: func() time.Time { return fixedNow }})
}

// stored renders a match as the delivery's payload would be stored, and
// checks that no secret of the target is in it.
func stored(t *testing.T, tg core.ChannelTarget) []byte {
	t.Helper()
	b, err := core.RenderChannelMatch(tg.Kind, core.ChannelMatch{
		Score: 88, Intent: core.IntentBuying, Reason: "weighs a purchase", Phrase: "acme", Author: "jdoe",
		Title: "Which CRM?", Text: "We need one <b>now</b> & @everyone", URL: "https://www.reddit.com/r/x/comments/1/",
		Platform: core.Reddit,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{tg.URL, tg.Token, tg.ChatID, ntfyTopic, "abcdefghijklmnopqrstwxyz", discordTok} {
		if len(secret) >= 6 && strings.Contains(string(b), secret) {
			t.Fatalf("the stored body carries a secret %q: %s", secret, b)
		}
	}
	return b
}

func send(s *webhooksender.Sender, tg core.ChannelTarget, body []byte) ports.WebhookResult {
	return s.SendChannel(context.Background(), ports.ChannelMessage{Target: tg, DeliveryID: "dlv_1", Body: body})
}

func checkRequest(t *testing.T, got received, path string) {
	t.Helper()
	if got.Method != http.MethodPost || got.Path != path {
		t.Errorf("request %s %s, want POST %s", got.Method, got.Path, path)
	}
	if ct := got.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if ua := got.Header.Get("User-Agent"); ua != webhooksender.UserAgent {
		t.Errorf("User-Agent %q", ua)
	}
	for _, h := range []string{core.HeaderSignature, core.HeaderStandardSignature, core.HeaderEvent} {
		if got.Header.Get(h) != "" {
			t.Errorf("a channel message carries the webhook header %s", h)
		}
	}
}

// The request shape of an incoming webhook:
// https://api.slack.com/messaging/webhooks#posting_with_webhooks — the
// JSON body as it is, to the address as it is.
func TestSlackRequest(t *testing.T) {
	f := newFake(t)
	f.answerWith(http.StatusOK, "ok", map[string]string{"Content-Type": "text/html"})
	tg := core.ChannelTarget{Kind: core.ChannelSlack, URL: f.srv.URL + slackPath}
	body := stored(t, tg)
	r := send(channelSender(""), tg, body)
	if !r.Delivered() || r.Status != 200 || r.Error != "" || r.Duration <= 0 {
		t.Fatalf("SendChannel = %+v", r)
	}
	got := f.last()
	checkRequest(t, got, slackPath)
	if got.Query != "" || string(got.Body) != string(body) || got.Header.Get("Authorization") != "" {
		t.Errorf("slack got ?%s %s", got.Query, got.Body)
	}
}

// Errors of an incoming webhook, a code as plain text with the status
// Slack documents at
// https://api.slack.com/messaging/webhooks#handling_errors .
func TestSlackAnswers(t *testing.T) {
	f := newFake(t)
	tg := core.ChannelTarget{Kind: core.ChannelSlack, URL: f.srv.URL + slackPath}
	s := channelSender("")
	for _, c := range []struct {
		status int
		body   string
		header map[string]string
		want   ports.WebhookResult
	}{
		{200, "ok", nil, ports.WebhookResult{Status: 200}},
		{403, "invalid_token", nil, ports.WebhookResult{Status: 410, Error: "slack: the webhook address was revoked (invalid_token), http 403"}},
		{404, "no_service", nil, ports.WebhookResult{Status: 410, Error: "slack: the webhook was removed or turned off (no_service), http 404"}},
		{404, "channel_not_found", nil, ports.WebhookResult{Status: 410, Error: "slack: the channel was deleted (channel_not_found), http 404"}},
		{410, "channel_is_archived", nil, ports.WebhookResult{Status: 410, Error: "slack: the channel is archived (channel_is_archived), http 410"}},
		{403, "action_prohibited", nil, ports.WebhookResult{Status: 403, Error: "slack: a workspace admin restricted posting to this channel (action_prohibited), http 403"}},
		{403, "posting_to_general_channel_denied", nil, ports.WebhookResult{Status: 403, Error: "slack: only admins may post in this channel (posting_to_general_channel_denied), http 403"}},
		{400, "invalid_payload", nil, ports.WebhookResult{Status: 400, Error: "slack: Slack refused the message as malformed (invalid_payload), http 400"}},
		{400, "no_text", nil, ports.WebhookResult{Status: 400, Error: "slack: Slack refused the message as empty (no_text), http 400"}},
		{429, "rate_limited", map[string]string{"Retry-After": "30"}, ports.WebhookResult{Status: 429, Error: "slack: rate limited (rate_limited), http 429", RetryAfter: 30 * time.Second}},
		{500, "rollup_error", nil, ports.WebhookResult{Status: 500, Error: "slack: rollup_error, http 500"}},
		{502, "<html><body>Bad gateway " + strings.Repeat("x", 5000), nil, ports.WebhookResult{Status: 502, Error: "slack: http 502"}},
		{302, "", map[string]string{"Location": "/elsewhere"}, ports.WebhookResult{Status: 302, Error: webhooksender.ReasonRedirect}},
	} {
		f.answerWith(c.status, c.body, c.header)
		r := send(s, tg, stored(t, tg))
		r.Duration = 0
		if r != c.want {
			t.Errorf("slack answers %d %.20q: %+v, want %+v", c.status, c.body, r, c.want)
		}
	}
	if f.count() != 13 {
		t.Errorf("%d requests, want 13: a redirect was followed or a send skipped", f.count())
	}
}

// https://discord.com/developers/docs/resources/webhook#execute-webhook:
// with wait=true a 200 carries the message posted.
func TestDiscordRequest(t *testing.T) {
	f := newFake(t)
	path := "/api/webhooks/" + discordID + "/" + discordTok
	tg := core.ChannelTarget{Kind: core.ChannelDiscord, URL: f.srv.URL + path}
	f.answerWith(http.StatusOK, `{"id":"1300000000000000000","type":0,"content":"","channel_id":"1200000000000000000","embeds":[{"type":"rich","title":"Which CRM?"}],"webhook_id":"`+discordID+`"}`, map[string]string{"Content-Type": "application/json"})
	body := stored(t, tg)
	if r := send(channelSender(""), tg, body); !r.Delivered() || r.Status != 200 {
		t.Fatalf("SendChannel = %+v", r)
	}
	got := f.last()
	checkRequest(t, got, path)
	if got.Query != "wait=true" || string(got.Body) != string(body) {
		t.Errorf("discord got ?%s %s", got.Query, got.Body)
	}
	var m struct {
		Embeds          []json.RawMessage `json:"embeds"`
		AllowedMentions struct {
			Parse []string `json:"parse"`
		} `json:"allowed_mentions"`
	}
	if err := json.Unmarshal(got.Body, &m); err != nil || len(m.Embeds) != 1 || m.AllowedMentions.Parse == nil || len(m.AllowedMentions.Parse) != 0 {
		t.Errorf("discord body %s", got.Body)
	}
}

// Discord's answers: 204 without wait; 429 with retry_after in seconds
// (a float) and Retry-After
// (https://discord.com/developers/docs/topics/rate-limits#exceeding-a-rate-limit);
// JSON error codes
// (https://discord.com/developers/docs/topics/opcodes-and-status-codes#json).
func TestDiscordAnswers(t *testing.T) {
	f := newFake(t)
	tg := core.ChannelTarget{Kind: core.ChannelDiscord, URL: f.srv.URL + "/api/webhooks/" + discordID + "/" + discordTok}
	s := channelSender("")
	js := map[string]string{"Content-Type": "application/json"}
	limited := func(retryAfter string) map[string]string {
		return map[string]string{"Content-Type": "application/json", "Retry-After": retryAfter, "X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "0", "X-RateLimit-Scope": "user"}
	}
	for _, c := range []struct {
		status int
		body   string
		header map[string]string
		want   ports.WebhookResult
	}{
		{204, "", nil, ports.WebhookResult{Status: 204}},
		{429, `{"message": "You are being rate limited.", "retry_after": 1.5, "global": false}`, limited("2"),
			ports.WebhookResult{Status: 429, Error: "discord: rate limited, http 429", RetryAfter: 2 * time.Second}},
		{429, `{"message": "You are being rate limited.", "retry_after": 64.57, "global": false}`, limited("64"),
			ports.WebhookResult{Status: 429, Error: "discord: rate limited, http 429", RetryAfter: 65 * time.Second}},
		{429, `{"message": "You are being rate limited.", "retry_after": 3.2, "global": true}`, js,
			ports.WebhookResult{Status: 429, Error: "discord: rate limited across the service, http 429", RetryAfter: 4 * time.Second}},
		{429, `{"message": "You are being rate limited.", "retry_after": 1e300, "global": false}`, js,
			ports.WebhookResult{Status: 429, Error: "discord: rate limited, http 429", RetryAfter: core.MaxRetryAfter}},
		{404, `{"message": "Unknown Webhook", "code": 10015}`, js, ports.WebhookResult{Status: 410, Error: "discord: the webhook was deleted (code 10015), http 404"}},
		{401, `{"message": "Invalid Webhook Token", "code": 50027}`, js, ports.WebhookResult{Status: 410, Error: "discord: the webhook address was reset or is wrong (code 50027), http 401"}},
		{400, `{"code": 50035, "errors": {"embeds": {"0": {"title": {"_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 256 or fewer in length."}]}}}}, "message": "Invalid Form Body"}`, js,
			ports.WebhookResult{Status: 400, Error: "discord: Invalid Form Body (code 50035), http 400"}},
		{404, `<html>not found</html>`, nil, ports.WebhookResult{Status: 404, Error: "discord: http 404"}},
		{503, `upstream connect error`, map[string]string{"Retry-After": "10"}, ports.WebhookResult{Status: 503, Error: "discord: http 503", RetryAfter: 10 * time.Second}},
	} {
		f.answerWith(c.status, c.body, c.header)
		r := send(s, tg, stored(t, tg))
		r.Duration = 0
		if r != c.want {
			t.Errorf("discord answers %d %.40q: %+v, want %+v", c.status, c.body, r, c.want)
		}
	}
}

// https://core.telegram.org/bots/api#making-requests: POST
// /bot<token>/METHOD_NAME with a JSON body; chat_id an integer or a
// channel's @username (https://core.telegram.org/bots/api#sendmessage).
func TestTelegramRequest(t *testing.T) {
	f := newFake(t)
	f.answerWith(http.StatusOK, `{"ok":true,"result":{"message_id":42,"from":{"id":123456789,"is_bot":true,"first_name":"earshot","username":"earshot_bot"},"chat":{"id":-1001234567890,"title":"Leads","type":"supergroup"},"date":1768035600,"text":"Score 88"}}`, map[string]string{"Content-Type": "application/json"})
	s := channelSender(f.srv.URL)
	for _, c := range []struct {
		chat string
		want any
	}{
		{"-1001234567890", float64(-1001234567890)},
		{"@leads_channel", "@leads_channel"},
	} {
		tg := core.ChannelTarget{Kind: core.ChannelTelegram, Token: botToken, ChatID: c.chat}
		body := stored(t, tg)
		if r := send(s, tg, body); !r.Delivered() || r.Status != 200 {
			t.Fatalf("SendChannel = %+v", r)
		}
		got := f.last()
		checkRequest(t, got, "/bot"+botToken+"/sendMessage")
		var sent, kept map[string]any
		if err := json.Unmarshal(got.Body, &sent); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal(body, &kept)
		if sent["chat_id"] != c.want || sent["parse_mode"] != "HTML" || sent["text"] != kept["text"] {
			t.Errorf("telegram got %s", got.Body)
		}
		if _, ok := kept["chat_id"]; ok {
			t.Error("the stored body names the chat")
		}
	}
}

// The Bot API's errors: {"ok":false,"error_code","description",
// "parameters"} (https://core.telegram.org/bots/api#making-requests,
// https://core.telegram.org/bots/api#responseparameters); descriptions
// as the API words them.
func TestTelegramAnswers(t *testing.T) {
	f := newFake(t)
	tg := core.ChannelTarget{Kind: core.ChannelTelegram, Token: botToken, ChatID: "-1001234567890"}
	s := channelSender(f.srv.URL + "/")
	js := map[string]string{"Content-Type": "application/json"}
	for _, c := range []struct {
		status int
		body   string
		header map[string]string
		want   ports.WebhookResult
	}{
		{403, `{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`, js,
			ports.WebhookResult{Status: 410, Error: "telegram: Forbidden: bot was blocked by the user, http 403"}},
		{403, `{"ok":false,"error_code":403,"description":"Forbidden: bot was kicked from the supergroup chat"}`, js,
			ports.WebhookResult{Status: 410, Error: "telegram: Forbidden: bot was kicked from the supergroup chat, http 403"}},
		{400, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`, js,
			ports.WebhookResult{Status: 410, Error: "telegram: Bad Request: chat not found, http 400"}},
		{400, `{"ok":false,"error_code":400,"description":"Bad Request: group chat was upgraded to a supergroup chat","parameters":{"migrate_to_chat_id":-1009876543210}}`, js,
			ports.WebhookResult{Status: 410, Error: "telegram: the group became a supergroup; its chat id is now -1009876543210, http 400"}},
		{401, `{"ok":false,"error_code":401,"description":"Unauthorized"}`, js,
			ports.WebhookResult{Status: 410, Error: "telegram: the bot token was refused: revoked or wrong, http 401"}},
		{404, `{"ok":false,"error_code":404,"description":"Not Found"}`, js,
			ports.WebhookResult{Status: 410, Error: "telegram: the Bot API does not know this bot token, http 404"}},
		{429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 35","parameters":{"retry_after":35}}`, map[string]string{"Content-Type": "application/json", "Retry-After": "35"},
			ports.WebhookResult{Status: 429, Error: "telegram: rate limited, http 429", RetryAfter: 35 * time.Second}},
		{429, `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`, js,
			ports.WebhookResult{Status: 429, Error: "telegram: rate limited, http 429", RetryAfter: 7 * time.Second}},
		{400, `{"ok":false,"error_code":400,"description":"Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 12"}`, js,
			ports.WebhookResult{Status: 400, Error: "telegram: Bad Request: can't parse entities: Unsupported start tag x at byte offset 12, http 400"}},
		{200, `{"ok":false,"description":"odd"}`, js, ports.WebhookResult{Status: 200, Error: "telegram: odd, http 200"}},
		{502, `<html><head><title>502 Bad Gateway</title></head></html>`, nil, ports.WebhookResult{Status: 502, Error: "telegram: http 502"}},
	} {
		f.answerWith(c.status, c.body, c.header)
		r := send(s, tg, stored(t, tg))
		r.Duration = 0
		if r != c.want {
			t.Errorf("telegram answers %d %.50q: %+v, want %+v", c.status, c.body, r, c.want)
		}
		if strings.Contains(r.Error, botToken) || strings.Contains(r.Error, "AAHdq") {
			t.Errorf("the reason carries the token: %q", r.Error)
		}
	}
}

// https://docs.ntfy.sh/publish/#publish-as-json: POST to the server's
// root, the topic in the body; an access token as a Bearer
// (https://docs.ntfy.sh/publish/#access-tokens).
func TestNtfyRequest(t *testing.T) {
	f := newFake(t)
	f.answerWith(http.StatusOK, `{"id":"sPs71M8A2T","time":1768035600,"expires":1768078800,"event":"message","topic":"`+ntfyTopic+`","title":"Score 88","message":"Which CRM?","priority":4,"tags":["ear"],"click":"https://www.reddit.com/r/x/comments/1/"}`, map[string]string{"Content-Type": "application/json"})
	s := channelSender("")
	for _, token := range []string{"", ntfyToken} {
		tg := core.ChannelTarget{Kind: core.ChannelNtfy, URL: f.srv.URL + "/" + ntfyTopic, Token: token}
		body := stored(t, tg)
		if r := send(s, tg, body); !r.Delivered() {
			t.Fatalf("SendChannel = %+v", r)
		}
		got := f.last()
		checkRequest(t, got, "/")
		want := ""
		if token != "" {
			want = "Bearer " + token
		}
		if a := got.Header.Get("Authorization"); a != want {
			t.Errorf("Authorization %q, want %q", a, want)
		}
		var sent map[string]any
		if err := json.Unmarshal(got.Body, &sent); err != nil || sent["topic"] != ntfyTopic || sent["title"] == nil || sent["priority"] != float64(4) {
			t.Errorf("ntfy got %s", got.Body)
		}
		if _, ok := sent["markdown"]; ok {
			t.Error("markdown turned on")
		}
	}
}

// ntfy's errors: {"code","http","error","link"}, as the server's
// errors.go writes them
// (https://github.com/binwiederhier/ntfy/blob/main/server/errors.go).
func TestNtfyAnswers(t *testing.T) {
	f := newFake(t)
	tg := core.ChannelTarget{Kind: core.ChannelNtfy, URL: f.srv.URL + "/" + ntfyTopic, Token: ntfyToken}
	s := channelSender("")
	js := map[string]string{"Content-Type": "application/json"}
	for _, c := range []struct {
		status int
		body   string
		header map[string]string
		want   ports.WebhookResult
	}{
		{401, `{"code":40101,"http":401,"error":"unauthorized","link":"https://ntfy.sh/docs/publish/#authentication"}`, js,
			ports.WebhookResult{Status: 410, Error: "ntfy: the access token was refused (unauthorized (40101)), http 401"}},
		{403, `{"code":40301,"http":403,"error":"forbidden","link":"https://ntfy.sh/docs/publish/#authentication"}`, js,
			ports.WebhookResult{Status: 403, Error: "ntfy: forbidden (40301), http 403"}},
		{429, `{"code":42901,"http":429,"error":"limit reached: too many requests, please be nice","link":"https://ntfy.sh/docs/publish/#limitations"}`, js,
			ports.WebhookResult{Status: 429, Error: "ntfy: limit reached: too many requests, please be nice (42901), http 429"}},
		{413, `{"code":41303,"http":413,"error":"JSON body too large"}`, js,
			ports.WebhookResult{Status: 413, Error: "ntfy: JSON body too large (41303), http 413"}},
		{500, `{"code":50001,"http":500,"error":"internal server error"}`, js,
			ports.WebhookResult{Status: 500, Error: "ntfy: internal server error (50001), http 500"}},
		{404, `404 page not found`, nil, ports.WebhookResult{Status: 404, Error: "ntfy: http 404"}},
	} {
		f.answerWith(c.status, c.body, c.header)
		r := send(s, tg, stored(t, tg))
		r.Duration = 0
		if r != c.want {
			t.Errorf("ntfy answers %d %.50q: %+v, want %+v", c.status, c.body, r, c.want)
		}
	}
}

// An answer that echoes the secrets, in a long description full of
// markup (within the 4 KB read), gives a short reason with none of them.
func TestReasonBoundedAndSanitized(t *testing.T) {
	f := newFake(t)
	echo := "Bad Request: <script>alert(1)</script> token " + botToken + " topic " + ntfyTopic + " hook " + discordTok + " \x1b[31m " + strings.Repeat("blah ", 500)
	s := channelSender(f.srv.URL)
	// Each answer puts the target's own secret first, where the bounded
	// reason still shows the words around it.
	for _, c := range []struct {
		tg     core.ChannelTarget
		answer map[string]any
		secret []string
	}{
		{core.ChannelTarget{Kind: core.ChannelTelegram, Token: botToken, ChatID: "1"}, map[string]any{"ok": false, "error_code": 400, "description": echo},
			[]string{botToken, "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"}},
		{core.ChannelTarget{Kind: core.ChannelNtfy, URL: f.srv.URL + "/" + ntfyTopic, Token: ntfyToken}, map[string]any{"code": 40001, "http": 400, "error": strings.Replace(echo, botToken, ntfyTopic+" "+ntfyToken, 1)},
			[]string{ntfyTopic, ntfyToken}},
		{core.ChannelTarget{Kind: core.ChannelDiscord, URL: f.srv.URL + "/api/webhooks/" + discordID + "/" + discordTok}, map[string]any{"code": 50035, "message": strings.Replace(echo, botToken, discordTok, 1)},
			[]string{discordTok}},
	} {
		js, _ := json.Marshal(c.answer)
		if len(js) > 4000 {
			t.Fatalf("the answer of %d bytes would be cut before it is read", len(js))
		}
		f.answerWith(http.StatusBadRequest, string(js), nil)
		r := send(s, c.tg, stored(t, c.tg))
		if r.Delivered() || len(r.Error) > 160 || !strings.Contains(r.Error, "Bad Request") {
			t.Errorf("%s: reason of %d bytes: %q", c.tg.Kind, len(r.Error), r.Error)
		}
		for _, bad := range append(c.secret, "<", ">", "\x1b") {
			if strings.Contains(r.Error, bad) {
				t.Errorf("%s: reason %q carries %q", c.tg.Kind, r.Error, bad)
			}
		}
	}
}

// A channel's address goes through the connect-time check: a Slack or
// Discord host, or the Telegram API, that resolves to a private address
// is refused, exactly as a webhook's is.
func TestChannelBlockedAtConnect(t *testing.T) {
	dns := newFakeDNS()
	for _, name := range []string{"hooks.slack.com", "discord.com", "api.telegram.org", "ntfy.sh"} {
		dns.set(name, "127.0.0.1")
	}
	s := webhooksender.New(webhooksender.Config{Resolver: dns.resolver(), Timeout: 2 * time.Second})
	for _, tg := range []core.ChannelTarget{
		{Kind: core.ChannelSlack, URL: "https://hooks.slack.com" + slackPath},
		{Kind: core.ChannelDiscord, URL: "https://discord.com/api/webhooks/" + discordID + "/" + discordTok},
		{Kind: core.ChannelTelegram, Token: botToken, ChatID: "1"},
		{Kind: core.ChannelNtfy, URL: "https://ntfy.sh/" + ntfyTopic},
	} {
		before := dns.count()
		if r := send(s, tg, stored(t, tg)); r.Error != webhooksender.ReasonBlocked || r.Status != 0 {
			t.Errorf("%s: SendChannel = %+v, want blocked", tg.Kind, r)
		}
		if dns.count() == before {
			t.Errorf("%s: refused before resolving: the connect-time check was not exercised", tg.Kind)
		}
	}
}

// The target is checked again before each send: one stored under looser
// rules, or one that no longer has its kind's shape, is refused before
// any lookup.
func TestChannelTargetRecheckedAtSend(t *testing.T) {
	f := newFake(t)
	dns := newFakeDNS()
	strict := webhooksender.New(webhooksender.Config{Resolver: dns.resolver(), Timeout: time.Second, TelegramAPI: f.srv.URL})
	for _, c := range []struct {
		tg   core.ChannelTarget
		want string
	}{
		{core.ChannelTarget{Kind: core.ChannelSlack, URL: f.srv.URL + slackPath}, webhooksender.ReasonBlocked},
		{core.ChannelTarget{Kind: core.ChannelSlack, URL: "https://hooks.example-public.com" + slackPath}, webhooksender.ReasonBadTarget},
		{core.ChannelTarget{Kind: core.ChannelNtfy, URL: "https://10.0.0.1/" + ntfyTopic}, webhooksender.ReasonBlocked},
		{core.ChannelTarget{Kind: core.ChannelTelegram, Token: "123:short", ChatID: "1"}, webhooksender.ReasonBadTarget},
		{core.ChannelTarget{Kind: core.ChannelWebhook, URL: "https://hooks.example-public.com/x"}, webhooksender.ReasonBadTarget},
		// The Telegram API set to loopback is refused without AllowPrivate.
		{core.ChannelTarget{Kind: core.ChannelTelegram, Token: botToken, ChatID: "1"}, webhooksender.ReasonBlocked},
	} {
		if r := send(strict, c.tg, []byte(`{"text":"x"}`)); r.Error != c.want {
			t.Errorf("%+v: SendChannel = %+v, want %s", c.tg, r, c.want)
		}
	}
	if dns.count() != 0 || f.count() != 0 {
		t.Errorf("%d lookups and %d requests for targets refused by the rules", dns.count(), f.count())
	}
}

func TestChannelBodyNotAnObject(t *testing.T) {
	f := newFake(t)
	s := channelSender(f.srv.URL)
	for _, tg := range []core.ChannelTarget{
		{Kind: core.ChannelTelegram, Token: botToken, ChatID: "1"},
		{Kind: core.ChannelNtfy, URL: f.srv.URL + "/" + ntfyTopic},
	} {
		for _, body := range []string{"", "null", "[1]", "not json"} {
			if r := send(s, tg, []byte(body)); r.Error != webhooksender.ReasonBadMessage {
				t.Errorf("%s body %q: %+v", tg.Kind, body, r)
			}
		}
	}
	if f.count() != 0 {
		t.Errorf("%d requests sent", f.count())
	}
}

// A failed connection never names the address: the Telegram token is in
// its path.
func TestTelegramConnectFailureHidesToken(t *testing.T) {
	f := newFake(t)
	api := f.srv.URL
	f.srv.Close()
	r := send(channelSender(api), core.ChannelTarget{Kind: core.ChannelTelegram, Token: botToken, ChatID: "1"}, []byte(`{"text":"x"}`))
	if r.Error != webhooksender.ReasonConnect || strings.Contains(r.Error, "AAHdq") {
		t.Fatalf("SendChannel = %+v", r)
	}
}

// A gone answer switches the channel off at once by the webhook rules as
// they are; a rate limit moves the next try.
func TestChannelResultsDriveWebhookRules(t *testing.T) {
	f := newFake(t)
	tg := core.ChannelTarget{Kind: core.ChannelDiscord, URL: f.srv.URL + "/api/webhooks/" + discordID + "/" + discordTok}
	s := channelSender("")

	f.answerWith(http.StatusNotFound, `{"message": "Unknown Webhook", "code": 10015}`, nil)
	r := send(s, tg, stored(t, tg))
	d := core.Delivery{Trigger: core.TriggerScheduled, Status: core.DeliveryQueued}.Attempted(core.DefaultRetrySchedule, r.Status, r.Error, fixedNow, 0)
	if d.Status != core.DeliveryFailed || !d.Gone() {
		t.Fatalf("delivery after Unknown Webhook = %+v", d)
	}
	if _, off, _ := core.CountFailure(0, d); !off {
		t.Fatal("the channel was not switched off at once")
	}

	f.answerWith(http.StatusTooManyRequests, `{"message": "You are being rate limited.", "retry_after": 600.5, "global": false}`, map[string]string{"Retry-After": "601"})
	r = send(s, tg, stored(t, tg))
	d = core.Delivery{Trigger: core.TriggerScheduled, Status: core.DeliveryQueued}.Attempted(core.DefaultRetrySchedule, r.Status, r.Error, fixedNow, 0)
	d = d.WithRetryAfter(r.RetryAfter, fixedNow)
	if d.Status != core.DeliveryQueued || !d.NextAttemptAt.Equal(fixedNow.Add(601*time.Second)) {
		t.Fatalf("delivery after a 429 = %+v", d)
	}
}

func TestConcurrentChannelSends(t *testing.T) {
	f := newFake(t)
	f.answerWith(http.StatusNoContent, "", nil)
	tg := core.ChannelTarget{Kind: core.ChannelDiscord, URL: f.srv.URL + "/api/webhooks/" + discordID + "/" + discordTok}
	s := channelSender("")
	body := stored(t, tg)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if r := send(s, tg, body); !r.Delivered() {
				t.Errorf("SendChannel = %+v", r)
			}
		})
	}
	wg.Wait()
	if f.count() != 8 {
		t.Fatalf("%d arrived, want 8", f.count())
	}
}
