package main

// Channels in a real browser against the real binary: a channel of each
// kind added from its form, tested, and its health seen in the one list
// of webhooks and channels, and one deleted from its page, against fakes
// of the four services.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Made-up secrets in each service's shape.
const (
	browserSlackPath = "/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstwxyz"
	browserDiscord   = "/api/webhooks/112233445566778899/AbCdEf_gh-IjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwxyzAB"
	browserBotToken  = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	browserNtfyTopic = "earshot-alerts-9f3k2m"
)

// chatServices is Slack, Discord, the Telegram Bot API and ntfy on one
// loopback server, told apart by path, each answering as the service
// does: Slack's incoming webhook 200 "ok" or a status and its error code
// as plain text (https://api.slack.com/messaging/webhooks#handling_errors);
// Discord's execute webhook with wait=true 200 and the message
// (https://discord.com/developers/docs/resources/webhook#execute-webhook);
// Telegram's {"ok":true,"result":…} (https://core.telegram.org/bots/api#making-requests);
// ntfy's published message as JSON (https://docs.ntfy.sh/publish/#publish-as-json).
type chatServices struct {
	srv       *httptest.Server
	mu        sync.Mutex
	got       map[string]int
	slackGone bool
}

func newChatServices(t *testing.T) *chatServices {
	c := &chatServices{got: map[string]int{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		kind := "ntfy"
		switch {
		case strings.HasPrefix(r.URL.Path, "/services/"):
			kind = "slack"
		case strings.HasPrefix(r.URL.Path, "/api/webhooks/"):
			kind = "discord"
		case strings.HasPrefix(r.URL.Path, "/bot"):
			kind = "telegram"
		}
		c.mu.Lock()
		c.got[kind]++
		gone := c.slackGone
		c.mu.Unlock()
		switch kind {
		case "slack":
			w.Header().Set("Content-Type", "text/html")
			if gone {
				w.WriteHeader(http.StatusNotFound)
				_, _ = io.WriteString(w, "no_service")
				return
			}
			_, _ = io.WriteString(w, "ok")
		case "discord":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"1300000000000000000","type":0,"channel_id":"1200000000000000000","webhook_id":"112233445566778899"}`)
		case "telegram":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":42,"chat":{"id":-1001234567890,"type":"supergroup"},"date":1768035600}}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"sPs71M8A2T","time":1768035600,"event":"message","topic":"`+browserNtfyTopic+`"}`)
		}
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *chatServices) count(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got[kind]
}

// Add a channel of each kind from its form (a refusal beside its field
// first), test each from the list, see each one's health and last
// deliveries; a Slack channel whose webhook was removed switches itself
// off at a match, and the list says why.
func TestDashboardChannels(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	chat := newChatServices(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=5",
		"EARSHOT_TELEGRAM_API="+chat.srv.URL)
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/webhooks")
	if got := b.text("h1"); got != "Webhooks and channels" {
		t.Fatalf("heading %q", got)
	}
	forms := eval[string](b, `document.querySelector('section[aria-labelledby="chan-h"]').textContent`)
	for _, where := range []string{"Incoming Webhooks", "Integrations, Webhooks", "@BotFather", "getUpdates", "access token"} {
		if !strings.Contains(forms, where) {
			t.Fatalf("the forms do not say %q:\n%s", where, forms)
		}
	}

	// A Telegram token of the wrong shape is refused beside its field,
	// and the page never shows it back.
	b.do(js(`document.querySelector("#add-telegram").open = true`),
		setValue("#telegram-token", "123:short-token"), setValue("#telegram-chat", "-1001234567890"), setValue("#telegram-min", "0"))
	b.submitAndWait(`#add-telegram button[type="submit"]`)
	if e := b.text("#telegram-e-token"); !strings.HasPrefix(e, "token must be a Telegram bot token") {
		t.Fatalf("beside the token: %q\n%s", e, b.text("main"))
	}
	if eval[bool](b, `document.documentElement.outerHTML.includes("short-token")`) {
		t.Fatal("the refused token is shown back")
	}

	add := func(kind string, fields map[string]string) {
		t.Helper()
		b.open(s.URL + "/app/webhooks")
		b.do(js(`document.querySelector("#add-`+kind+`").open = true`), setValue("#"+kind+"-min", "0"))
		for sel, v := range fields {
			b.do(setValue(sel, v))
		}
		b.submitAndWait(`#add-` + kind + ` button[type="submit"]`)
		if got := b.text(".notice"); !strings.Contains(got, "channel added") {
			t.Fatalf("adding %s: %q\n%s", kind, got, b.text("main"))
		}
	}
	add("slack", map[string]string{"#slack-url": chat.srv.URL + browserSlackPath})
	add("discord", map[string]string{"#discord-url": chat.srv.URL + browserDiscord})
	add("telegram", map[string]string{"#telegram-token": browserBotToken, "#telegram-chat": "-1001234567890"})
	add("ntfy", map[string]string{"#ntfy-url": chat.srv.URL + "/" + browserNtfyTopic, "#ntfy-token": "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2",
		"#ntfy-freq": "hourly"})
	for _, secret := range []string{"abcdefghijklmnopqrstwxyz", "AbCdEf_gh-IjKl", "AAHdqTcvCH1v", browserNtfyTopic, "tk_AgQdq7mV"} {
		if eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(secret)+`)`) {
			t.Fatalf("the list shows a secret, %q", secret)
		}
	}
	kinds := eval[[]string](b, `Array.from(document.querySelectorAll("#destinations tbody tr")).map(function(tr){return tr.dataset.kind})`)
	if strings.Join(kinds, ",") != "Slack,Discord,Telegram,ntfy" {
		t.Fatalf("rows %v", kinds)
	}
	if got := b.text(`#destinations tr[data-kind="Telegram"] th`); got != "telegram chat -1001234567890 (bot 123456…)" {
		t.Fatalf("the telegram row shows %q", got)
	}

	// Test each from its row: the channel's page says the service took it,
	// and the list shows the test as its last delivery.
	for _, kind := range []string{"Slack", "Discord", "Telegram", "ntfy"} {
		b.open(s.URL + "/app/webhooks")
		b.submitAndWait(`#destinations tr[data-kind="` + kind + `"] .row-actions button`)
		if got := b.text("#test-result"); !strings.Contains(got, kind+" took it") {
			t.Fatalf("testing %s: %q\n%s", kind, got, b.text("main"))
		}
		if got := b.text("table.deliveries tbody tr"); !strings.Contains(got, "ping") || !strings.Contains(got, "delivered") {
			t.Fatalf("%s's log: %q", kind, got)
		}
	}
	for _, kind := range []string{"slack", "discord", "telegram", "ntfy"} {
		if n := chat.count(kind); n != 1 {
			t.Fatalf("%s took %d requests, want the test", kind, n)
		}
	}
	b.open(s.URL + "/app/webhooks")
	if got := b.text(`#destinations tr[data-kind="Discord"] td.last`); !strings.Contains(got, "test delivered") {
		t.Fatalf("the Discord row's last deliveries: %q", got)
	}

	// The Slack webhook is removed: the next match switches the channel
	// off at once with Slack's words; the others take the match, except
	// ntfy, which is on an hourly digest.
	chat.mu.Lock()
	chat.slackGone = true
	chat.mu.Unlock()
	s.ingest(s.IngestKey, "x", xPost("c1", "ada", "acme for sale? <b>anyone</b> @everyone"))
	waitUntil(t, 20*time.Second, 50*time.Millisecond, func() bool {
		return chat.count("discord") == 2 && chat.count("telegram") == 2 && chat.count("slack") == 2
	},
		func() string { return fmt.Sprintf("requests %v", chat.got) })
	const reason = "switched off at once: slack: the webhook was removed or turned off (no_service), http 404"
	b.openUntil(s.URL+"/app/webhooks", `document.querySelector('#destinations tr[data-kind="Slack"] .status.off') !== null`, "the Slack channel switched off")
	if got := b.text(`#destinations tr[data-kind="Slack"] td.health`); !strings.Contains(got, reason) {
		t.Fatalf("the Slack row's health: %q", got)
	}
	if got := b.text(`#destinations tr[data-kind="Telegram"] td.health`); got != "on" {
		t.Fatalf("the Telegram row's health: %q", got)
	}
	if chat.count("ntfy") != 1 {
		t.Fatal("the hourly ntfy channel was sent the match at once")
	}
	b.submitAndWait(`#destinations tr[data-kind="Slack"] th a`)
	if got := b.text(".reason-off"); got != reason || b.text("#switch") != "Switch on" {
		t.Fatalf("the Slack channel's page:\n%s", b.text("main"))
	}
	if got := b.text("table.deliveries tbody tr"); !strings.Contains(got, "match.created") || !strings.Contains(got, "failed") || !strings.Contains(got, "no_service") {
		t.Fatalf("the Slack channel's newest delivery: %q", got)
	}
}

// Add an ntfy channel from its form beside a webhook, open its page from
// the list, delete it through the confirmation page, which names it
// redacted and never shows its topic, and see the list say so once and
// list the webhook alone.
func TestDashboardDeleteChannel(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	chat := newChatServices(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=5")
	hookID := dataOf(t, s.call("POST", "/api/v1/webhooks", s.APIKey, map[string]any{"url": chat.srv.URL + "/hook"}).want(t, 201, ""))["id"].(string)
	b.signIn(s.loginLink(s.OwnerID))

	b.open(s.URL + "/app/webhooks")
	b.do(js(`document.querySelector("#add-ntfy").open = true`), setValue("#ntfy-url", chat.srv.URL+"/"+browserNtfyTopic))
	b.submitAndWait(`#add-ntfy button[type="submit"]`)
	if got := b.text(".notice"); !strings.Contains(got, "ntfy channel added") {
		t.Fatalf("adding the channel: %q\n%s", got, b.text("main"))
	}
	const kinds = `Array.from(document.querySelectorAll("#destinations tbody tr")).map(function(tr){return tr.dataset.kind}).join(",")`
	if got := eval[string](b, kinds); got != "Webhook,ntfy" {
		t.Fatalf("the list before: %q", got)
	}

	// The ntfy topic's last four characters, after the fake's host.
	redacted := strings.TrimPrefix(chat.srv.URL, "http://") + "/…3k2m"
	b.open(s.URL + "/app/webhooks")
	b.submitAndWait(`#destinations tr[data-kind="ntfy"] th a`)
	if got := b.text("#delete"); got != "Delete…" {
		t.Fatalf("the channel's page offers no Delete…, %q:\n%s", got, b.text("main"))
	}
	b.submitAndWait("#delete")
	if got := b.text("h1"); got != "Delete this ntfy channel?" {
		t.Fatalf("the confirmation's heading: %q\n%s", got, b.text("main"))
	}
	if text := b.text("main"); !strings.Contains(text, redacted) || !strings.Contains(text, "queued deliveries") {
		t.Fatalf("the confirmation says:\n%s", text)
	}
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+jsString(browserNtfyTopic)+`)`) {
		t.Fatal("the confirmation shows the secret topic")
	}
	b.submitAndWait("#delete-confirm")

	if got := eval[string](b, `location.pathname`); got != "/app/webhooks" {
		t.Fatalf("after the deletion the browser is at %s", got)
	}
	if got := b.text(".notice"); !strings.Contains(got, "Deleted the ntfy channel "+redacted) {
		t.Fatalf("the list's notice: %q", got)
	}
	if got := eval[string](b, kinds); got != "Webhook" {
		t.Fatalf("the list after: %q", got)
	}
	if chans := listOf(t, s.call("GET", "/api/v1/channels", s.APIKey, nil).want(t, 200, "")); len(chans) != 0 {
		t.Fatalf("the channels left: %v", chans)
	}
	if hooks := listOf(t, s.call("GET", "/api/v1/webhooks", s.APIKey, nil).want(t, 200, "")); len(hooks) != 1 || hooks[0].(map[string]any)["id"] != hookID {
		t.Fatalf("the webhooks left: %v", hooks)
	}
	// The notice is said once: a reload no longer names the deletion.
	b.do(chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("main")))
	if eval[bool](b, `!!document.querySelector(".notice")`) {
		t.Fatalf("a reload names the deletion again: %q", b.text(".notice"))
	}
}

// The channel routes end to end: a channel made, shown redacted and never
// whole in any answer; the spec's /webhooks routes neither list nor
// reach it, and the channel routes do not reach a webhook; webhooks and
// channels share the plan's limit; a refusal is the documented error
// body naming the field.
func TestChannelsAPI(t *testing.T) {
	t.Parallel()
	chat := newChatServices(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2")
	const token = "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2"
	r := s.call("POST", "/api/v1/channels", s.APIKey, map[string]any{"kind": "ntfy", "url": chat.srv.URL + "/" + browserNtfyTopic,
		"token": token, "min_score": 0, "frequency": "daily", "hour": 9, "zone": "+05:30"}).want(t, 201, "")
	ch := dataOf(t, r)
	if ch["kind"] != "ntfy" || !strings.HasSuffix(ch["address"].(string), "/…3k2m (with access token)") || ch["frequency"] != "daily" ||
		ch["hour"] != 9.0 || ch["zone"] != "+05:30" || ch["lastDigestAt"] == nil {
		t.Fatalf("created %v", ch)
	}
	id := ch["id"].(string)
	hook := dataOf(t, s.call("POST", "/api/v1/webhooks", s.APIKey, map[string]any{"url": chat.srv.URL + "/hook"}).want(t, 201, ""))["id"].(string)
	for _, r := range []response{
		r,
		s.call("GET", "/api/v1/channels", s.APIKey, nil).want(t, 200, ""),
		s.call("GET", "/api/v1/channels/"+id, s.APIKey, nil).want(t, 200, ""),
		s.call("POST", "/api/v1/channels/"+id+"/test", s.APIKey, nil).want(t, 200, ""),
		s.call("GET", "/api/v1/channels/"+id+"/deliveries", s.APIKey, nil).want(t, 200, ""),
	} {
		if strings.Contains(string(r.Body), token) || strings.Contains(string(r.Body), browserNtfyTopic) {
			t.Fatalf("an answer shows the secret: %s", r.Body)
		}
	}
	if hooks := listOf(t, s.call("GET", "/api/v1/webhooks", s.APIKey, nil).want(t, 200, "")); len(hooks) != 1 || hooks[0].(map[string]any)["id"] != hook {
		t.Fatalf("GET /webhooks: %v", hooks)
	}
	s.call("PATCH", "/api/v1/webhooks/"+id, s.APIKey, map[string]any{"active": false}).want(t, 404, "not_found")
	s.call("GET", "/api/v1/webhooks/"+id+"/deliveries", s.APIKey, nil).want(t, 404, "not_found")
	s.call("DELETE", "/api/v1/webhooks/"+id, s.APIKey, nil).want(t, 404, "not_found")
	s.call("GET", "/api/v1/channels/"+hook, s.APIKey, nil).want(t, 404, "not_found")
	s.call("POST", "/api/v1/channels/"+hook+"/test", s.APIKey, nil).want(t, 404, "not_found")

	// Two of two: a third destination of either kind is refused.
	s.call("POST", "/api/v1/channels", s.APIKey, map[string]any{"kind": "slack", "url": chat.srv.URL + browserSlackPath}).want(t, 403, "plan_limit")
	s.call("POST", "/api/v1/webhooks", s.APIKey, map[string]any{"url": chat.srv.URL + "/other"}).want(t, 403, "plan_limit")

	_, msg := s.call("PATCH", "/api/v1/channels/"+id, s.APIKey, map[string]any{"url": "https://ntfy.sh/two/topics"}).want(t, 400, "invalid_parameter").errorCode(t)
	if !strings.HasPrefix(msg, "url must be an ntfy topic address") {
		t.Fatalf("refusal %q", msg)
	}
	_, msg = s.call("PATCH", "/api/v1/channels/"+id, s.APIKey, map[string]any{"frequency": "off"}).want(t, 400, "invalid_parameter").errorCode(t)
	if !strings.HasPrefix(msg, "frequency off is not for a channel") {
		t.Fatalf("refusal %q", msg)
	}
	up := dataOf(t, s.call("PATCH", "/api/v1/channels/"+id, s.APIKey, map[string]any{"token": "", "frequency": "at once"}).want(t, 200, ""))
	if strings.Contains(up["address"].(string), "access token") || up["frequency"] != "at once" || up["hour"] != nil || up["lastDigestAt"] != nil {
		t.Fatalf("after dropping the token: %v", up)
	}
	s.call("DELETE", "/api/v1/channels/"+id, s.APIKey, nil).want(t, 200, "")
	s.call("GET", "/api/v1/channels/"+id, s.APIKey, nil).want(t, 404, "not_found")
}
