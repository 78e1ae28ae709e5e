package dashboard

import (
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// getWith reads path as the owner with the cookies an earlier answer set.
func getWith(d *Dashboard, owner, path string, cookies []*http.Cookie) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	r.AddCookie(&http.Cookie{Name: cookieName, Value: owner + strings.Repeat("t", 43-len(owner))})
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	return w
}

// A test of a channel or a webhook is post/redirect/get: the POST sends
// once and goes back to the row's page, which shows the answer, again on
// a reload, without sending; the test's address opened again leads to
// the page, not to "Not found". The outcome is shown only to the session
// that asked, on the row tested, and only for a while; a cookie altered
// shows nothing.
func TestTestOutcomeAfterRedirect(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	f := &fakeChannels{ch: core.Webhook{ID: "c1", Kind: core.ChannelSlack, URL: "hooks.slack.com/…abcd", Active: true}}
	hooks := &countingWebhooks{}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clock},
		Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): "a", "b" + strings.Repeat("t", 42): "b"}},
			Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{}, Webhooks: hooks, Channels: f})
	if err != nil {
		t.Fatal(err)
	}
	const said = "slack: the channel was deleted (channel_not_found), http 404"

	w := postAs(d, "a", "/app/channels/c1/test", "")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/app/channels/c1" || f.tests != 1 {
		t.Fatalf("test: %d %q, %d tests", w.Code, w.Header().Get("Location"), f.tests)
	}
	jar := w.Result().Cookies()
	for range 2 { // the page, then a reload of it
		page := getWith(d, "a", "/app/channels/c1", jar)
		wantIn(t, "the page after the test", page.Body.String(), `id="test-result"`, said)
	}
	if f.tests != 1 {
		t.Fatalf("showing the answer sent %d tests", f.tests)
	}
	if g := getWith(d, "a", "/app/channels/c1/test", jar); g.Code != http.StatusSeeOther || g.Header().Get("Location") != "/app/channels/c1" || f.tests != 1 {
		t.Fatalf("the test's address opened again: %d %q, %d tests", g.Code, g.Header().Get("Location"), f.tests)
	}

	notShown := func(what, owner, path string, cookies []*http.Cookie) {
		t.Helper()
		page := getWith(d, owner, path, cookies)
		if page.Code != 200 || strings.Contains(page.Body.String(), `id="test-result"`) {
			t.Errorf("%s: %d, the test's answer shown", what, page.Code)
		}
	}
	notShown("another session", "b", "/app/channels/c1", jar)
	notShown("another row", "a", "/app/webhooks/h1", jar)
	enc, sig, _ := strings.Cut(jar[0].Value, ".")
	b, _ := base64.RawURLEncoding.DecodeString(enc)
	forged := strings.Replace(string(b), "\x00410\x00", "\x00200\x00", 1)
	notShown("an altered outcome", "a", "/app/channels/c1",
		[]*http.Cookie{{Name: jar[0].Name, Value: base64.RawURLEncoding.EncodeToString([]byte(forged)) + "." + sig}})
	now = now.Add(testShownFor + time.Second)
	notShown("a later visit", "a", "/app/channels/c1", jar)

	w = postAs(d, "a", "/app/webhooks/h1/test", "")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/app/webhooks/h1" || hooks.tests != 1 {
		t.Fatalf("webhook test: %d %q, %d pings", w.Code, w.Header().Get("Location"), hooks.tests)
	}
	wantIn(t, "the webhook's page after its ping", getWith(d, "a", "/app/webhooks/h1", w.Result().Cookies()).Body.String(),
		`id="test-result"`, "Your receiver answered 200: it works.")
	if g := getWith(d, "a", "/app/webhooks/h1/test", nil); g.Code != http.StatusSeeOther || g.Header().Get("Location") != "/app/webhooks/h1" || hooks.tests != 1 {
		t.Fatalf("the ping's address opened again: %d %q, %d pings", g.Code, g.Header().Get("Location"), hooks.tests)
	}
}
