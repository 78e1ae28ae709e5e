package dashboard

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// A refused change of an ntfy channel's destination comes back with
// "no access token" as it was ticked, as every other field is kept, so
// sending the form again does not quietly keep the token.
func TestRefusedDestinationKeepsNoToken(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	f := &fakeChannels{ch: core.Webhook{ID: "c1", Kind: core.ChannelNtfy, URL: "ntfy.sh/…abcd (with access token)", Active: true}}
	d := channelDashboard(t, f, 100, now)
	f.err = core.Errorf(core.KindInvalid, "url must be https://host/topic")
	ticked := regexp.MustCompile(`<input type="checkbox" name="no_token"[^>]* checked`)
	w := postAs(d, "a", "/app/channels/c1/destination", "url=http%3A%2F%2Fntfy.sh%2Ft&no_token=on")
	if w.Code != http.StatusBadRequest || !ticked.MatchString(w.Body.String()) {
		t.Fatalf("refused with the box ticked: %d\n%s", w.Code, w.Body)
	}
	w = postAs(d, "a", "/app/channels/c1/destination", "url=http%3A%2F%2Fntfy.sh%2Ft")
	if w.Code != http.StatusBadRequest || ticked.MatchString(w.Body.String()) {
		t.Fatalf("refused with the box not ticked: %d", w.Code)
	}
}

// A Telegram channel's destination form has no address field: a refusal
// that names no field of its own (the form sent empty) is shown beside
// the token, not beside an address field the page does not have.
func TestRefusedTelegramDestinationSaysWhy(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	f := &fakeChannels{ch: core.Webhook{ID: "c1", Kind: core.ChannelTelegram, URL: "telegram chat -1001234567890 (bot 123456…)", Active: true}}
	d := channelDashboard(t, f, 100, now)
	w := postAs(d, "a", "/app/channels/c1/destination", "token=&chat_id=")
	if w.Code != http.StatusBadRequest || !regexp.MustCompile(`<p class="error" id="telegram-e-token">Nothing was changed: fill in`).MatchString(w.Body.String()) {
		t.Fatalf("refused empty: %d\n%s", w.Code, w.Body)
	}
}

// A destination form sent empty is refused in the form's own words,
// never the API's field names (url, token, chat_id), for every kind.
func TestEmptyDestinationSaysTheFormsWords(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	for kind, want := range map[core.ChannelKind]string{
		core.ChannelSlack:    `<p class="error" id="slack-e-url">Nothing was changed: fill in the incoming webhook address to replace.</p>`,
		core.ChannelDiscord:  `<p class="error" id="discord-e-url">Nothing was changed: fill in the webhook address to replace.</p>`,
		core.ChannelTelegram: `<p class="error" id="telegram-e-token">Nothing was changed: fill in the bot token or the chat id to replace.</p>`,
		core.ChannelNtfy:     `<p class="error" id="ntfy-e-url">Nothing was changed: fill in the topic address or the access token to replace, or tick “no access token”.</p>`,
	} {
		f := &fakeChannels{ch: core.Webhook{ID: "c1", Kind: kind, URL: "redacted", Active: true}}
		d := channelDashboard(t, f, 100, now)
		w := postAs(d, "a", "/app/channels/c1/destination", "url=&token=&chat_id=")
		if body := w.Body.String(); w.Code != http.StatusBadRequest || !strings.Contains(body, want) || strings.Contains(body, "chat_id:") || len(f.changes) != 0 {
			t.Errorf("%s sent empty: %d, %d changes, want %s\n%s", kind, w.Code, len(f.changes), want, body)
		}
	}
}
