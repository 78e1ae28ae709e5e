package dashboard

import (
	"net/http"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// A channel's test that the service refused says so and what to do next,
// not only the service's words; and "all" platforms is said in full.
func TestChannelTestRefusedSaysWhatNext(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	f := &fakeChannels{ch: core.Webhook{ID: "c1", Kind: core.ChannelSlack, URL: "hooks.slack.com/…abcd", Active: true}}
	d := channelDashboard(t, f, 100, now)
	w := postAs(d, "a", "/app/channels/c1/test", "")
	if w.Code != http.StatusSeeOther {
		t.Fatalf("test: %d", w.Code)
	}
	wantIn(t, "the refused test", getWith(d, "a", "/app/channels/c1", w.Result().Cookies()).Body.String(),
		"The test message did not go through: slack: the channel was deleted (channel_not_found), http 404.",
		"Check the destination below, then send another test.")
}

// A webhook or channel on every platform says "all platforms", in the
// list and on its page, not a bare "all".
func TestEveryPlatformSaidInFull(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	f := &fakeChannels{ch: core.Webhook{ID: "c1", Kind: core.ChannelSlack, URL: "hooks.slack.com/…abcd", Active: true, MinScore: 60}}
	d := channelDashboard(t, f, 100, now)
	wantIn(t, "the list", getAs(d, "a", "/app/webhooks").Body.String(), "score 60+, all platforms</td>")
	wantIn(t, "the page", getAs(d, "a", "/app/channels/c1").Body.String(), "matches scored 60 or more on all platforms")
}
