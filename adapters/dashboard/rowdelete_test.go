package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// The counting fake of limit_test.go deletes too, counting it among its
// writes; the channels' fake deletes nothing.
func (c *countingWebhooks) Delete(context.Context, string, string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.redos++
	return nil
}

func (f *fakeChannels) Delete(context.Context, string, string) error { return nil }

// A made-up Slack incoming webhook in Slack's shape
// (https://api.slack.com/messaging/webhooks): its last part is the
// secret no page may show.
const (
	rowSlackURL    = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstwxyz"
	rowSlackSecret = "abcdefghijklmnopqrstwxyz"
	rowHookURL     = "https://hooks.example.com/in?tag=<b>"
)

// realOwners makes an owner for each of emails through the real owner
// and key services over db, and returns the key service and the owners'
// ids, in the order of emails.
func realOwners(t *testing.T, db *gormstore.DB, emails ...string) (*app.Keys, []string) {
	t.Helper()
	ownerStore := gormstore.NewOwnerStore(db)
	keys := app.NewKeys(gormstore.NewKeyStore(db), ownerStore, ports.SystemClock{})
	owners := app.NewOwners(ownerStore, keys)
	var ids []string
	for _, email := range emails {
		o, err := owners.Create(context.Background(), email, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, o.ID)
	}
	return keys, ids
}

// rowWorld is the dashboard over the real webhook and channel services
// on SQLite in memory, with two owners: a and b sign in with the tokens
// getAs and postAs send for "a" and "b".
type rowWorld struct {
	d        *Dashboard
	hooks    *app.Webhooks
	channels *app.Channels
	a, b     string // the owners' ids
	// services are another webhook and channel service over the same
	// database, with limits of their own.
	services func(limits core.Limits) (*app.Webhooks, *app.Channels)
}

func newRowWorld(t *testing.T) *rowWorld {
	t.Helper()
	return newRowWorldWith(t, core.Limits{WebhooksPerPerson: 5})
}

// newRowWorldWith is newRowWorld whose services have limits.
func newRowWorldWith(t *testing.T, limits core.Limits) *rowWorld {
	t.Helper()
	db := dbtest.Memory(t)
	_, ids := realOwners(t, db, "a@example.com", "b@example.com")
	sealer, err := core.NewSealer("a test secret key of at least 32 characters")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	services := func(limits core.Limits) (*app.Webhooks, *app.Channels) {
		h := app.NewWebhooks(app.WebhookDeps{Store: gormstore.NewWebhookStore(db), Sealer: sealer, Log: quiet,
			Sender: webhooksender.New(webhooksender.Config{Timeout: 2 * time.Second})}, app.WebhookConfig{Limits: limits})
		return h, app.NewChannels(app.ChannelDeps{Webhooks: h, Store: gormstore.NewChannelStore(db)})
	}
	hooks, chans := services(limits)
	d, err := New(Config{Logger: quiet, RateLimit: 100},
		Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): ids[0], "b" + strings.Repeat("t", 42): ids[1]}},
			Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{}, Webhooks: hooks, Channels: chans,
			Limiter: ratelimit.NewMemory(time.Now)})
	if err != nil {
		t.Fatal(err)
	}
	return &rowWorld{d: d, hooks: hooks, channels: chans, a: ids[0], b: ids[1], services: services}
}

// add gives owner a webhook at rowHookURL and a Slack channel at
// rowSlackURL.
func (w *rowWorld) add(t *testing.T, owner string) (hook, channel core.Webhook) {
	t.Helper()
	ctx := context.Background()
	hook, _, err := w.hooks.Create(ctx, owner, rowHookURL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	channel, err = w.channels.Create(ctx, owner, ports.NewChannel{Kind: "slack", URL: rowSlackURL})
	if err != nil {
		t.Fatal(err)
	}
	return hook, channel
}

// kept reports whether owner still has the webhook or channel id.
func (w *rowWorld) kept(t *testing.T, owner, id string) bool {
	t.Helper()
	all, err := w.channels.All(context.Background(), owner)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range all {
		if h.ID == id {
			return true
		}
	}
	return false
}

// listAfter opens the list with the cookies a deletion's answer set, as
// the browser does following its redirect, and returns the list's
// answer.
func (w *rowWorld) listAfter(deleted *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", "/app/webhooks", nil)
	r.AddCookie(&http.Cookie{Name: cookieName, Value: "a" + strings.Repeat("t", 42)})
	for _, c := range deleted.Result().Cookies() {
		r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	rec := httptest.NewRecorder()
	w.d.ServeHTTP(rec, r)
	return rec
}

// Each webhook's and channel's page offers "Delete…", which opens a
// confirmation naming it as its page does (a channel's destination
// redacted) and saying its queued deliveries and log go with it;
// opening it deletes nothing. Confirming deletes it and goes back to
// the list, which names what was deleted once and no longer lists it.
func TestDeleteWebhookAndChannel(t *testing.T) {
	w := newRowWorld(t)
	hook, channel := w.add(t, w.a)
	for _, c := range []struct {
		what, base, address string
		id                  string
	}{
		{"webhook", "/app/webhooks/" + hook.ID, "https://hooks.example.com/in?tag=&lt;b&gt;", hook.ID},
		{"Slack channel", "/app/channels/" + channel.ID, channel.URL, channel.ID},
	} {
		page := getAs(w.d, "a", c.base)
		if page.Code != 200 {
			t.Fatalf("%s's page: %d", c.what, page.Code)
		}
		wantIn(t, c.what+"'s page", page.Body.String(), `action="`+c.base+`/delete" method="get"`, `id="delete"`)

		confirm := getAs(w.d, "a", c.base+"/delete")
		if confirm.Code != 200 {
			t.Fatalf("%s's confirmation: %d\n%s", c.what, confirm.Code, confirm.Body.String())
		}
		body := confirm.Body.String()
		wantIn(t, c.what+"'s confirmation", body, "Delete this "+c.what+"?", c.address, "queued deliveries", "delivery log",
			"cannot be undone", `method="post" action="`+c.base+`/delete"`, `href="`+c.base+`"`, `id="delete-confirm"`)
		if strings.Contains(body, rowSlackSecret) || strings.Contains(body, "<b>") {
			t.Fatalf("%s's confirmation shows a secret or markup:\n%s", c.what, body)
		}
		if !w.kept(t, w.a, c.id) {
			t.Fatalf("opening the confirmation deleted the %s", c.what)
		}

		done := postAs(w.d, "a", c.base+"/delete", "")
		if done.Code != http.StatusSeeOther || done.Header().Get("Location") != "/app/webhooks" {
			t.Fatalf("deleting the %s: %d %q\n%s", c.what, done.Code, done.Header().Get("Location"), done.Body.String())
		}
		if w.kept(t, w.a, c.id) {
			t.Fatalf("the %s is still there", c.what)
		}
		list := w.listAfter(done)
		body = list.Body.String()
		wantIn(t, "the list after deleting the "+c.what, body, "Deleted the "+c.what+" "+c.address+", with its queued deliveries and delivery log.")
		if strings.Contains(body, `href="`+c.base+`"`) {
			t.Fatalf("the list still links the deleted %s:\n%s", c.what, body)
		}
		cleared := false
		for _, ck := range list.Result().Cookies() {
			cleared = cleared || (ck.MaxAge < 0 && strings.Contains(ck.Name, "flash"))
		}
		if !cleared {
			t.Fatalf("the list does not clear the notice of the deleted %s: %v", c.what, list.Result().Cookies())
		}
		if again := getAs(w.d, "a", "/app/webhooks").Body.String(); strings.Contains(again, "Deleted the") {
			t.Fatal("a list opened without the notice's cookie names a deletion")
		}
		if gone := getAs(w.d, "a", c.base); gone.Code != 404 {
			t.Fatalf("the deleted %s's page: %d", c.what, gone.Code)
		}
	}
}

// Another owner's webhook or channel, an id that is none, a channel's id
// under the webhooks' path and a webhook's under the channels' are not
// found, both the confirmation and the deletion; a deletion posted from
// another site is refused. Nothing is deleted.
func TestDeleteRefused(t *testing.T) {
	w := newRowWorld(t)
	mine, myChannel := w.add(t, w.a)
	theirs, theirChannel := w.add(t, w.b)
	for _, path := range []string{
		"/app/webhooks/" + theirs.ID, "/app/channels/" + theirChannel.ID, "/app/webhooks/nosuch", "/app/channels/nosuch",
		"/app/webhooks/" + myChannel.ID, "/app/channels/" + mine.ID,
	} {
		if got := getAs(w.d, "a", path+"/delete"); got.Code != 404 {
			t.Fatalf("GET %s/delete: %d", path, got.Code)
		}
		if got := postAs(w.d, "a", path+"/delete", ""); got.Code != 404 || got.Header().Get("Set-Cookie") != "" {
			t.Fatalf("POST %s/delete: %d, cookies %q", path, got.Code, got.Header().Get("Set-Cookie"))
		}
	}
	for _, path := range []string{"/app/webhooks/" + mine.ID, "/app/channels/" + myChannel.ID} {
		r := httptest.NewRequest("POST", path+"/delete", nil)
		r.Header.Set("Sec-Fetch-Site", "cross-site")
		r.AddCookie(&http.Cookie{Name: cookieName, Value: "a" + strings.Repeat("t", 42)})
		cross := httptest.NewRecorder()
		w.d.ServeHTTP(cross, r)
		if cross.Code != http.StatusForbidden {
			t.Fatalf("a cross-origin POST %s/delete: %d", path, cross.Code)
		}
	}
	for owner, ids := range map[string][]string{w.a: {mine.ID, myChannel.ID}, w.b: {theirs.ID, theirChannel.ID}} {
		for _, id := range ids {
			if !w.kept(t, owner, id) {
				t.Fatalf("%s of %s was deleted", id, owner)
			}
		}
	}
}

// A notice's cookie that is not one the dashboard wrote (not base64,
// not text) names nothing.
func TestDeletedNoticeIgnoresForgeries(t *testing.T) {
	w := newRowWorld(t)
	for _, v := range []string{"not base64!", "_w", strings.Repeat("QUFB", 1000)} {
		r := httptest.NewRequest("GET", "/app/webhooks", nil)
		r.AddCookie(&http.Cookie{Name: cookieName, Value: "a" + strings.Repeat("t", 42)})
		r.AddCookie(&http.Cookie{Name: flashCookieName, Value: v})
		rec := httptest.NewRecorder()
		w.d.ServeHTTP(rec, r)
		if rec.Code != 200 || strings.Contains(rec.Body.String(), "Deleted the") {
			t.Fatalf("cookie %.20q: %d\n%s", v, rec.Code, rec.Body.String())
		}
	}
}

// A deletion counts against the owner's dashboard write limit like
// every other change.
func TestDeleteIsLimited(t *testing.T) {
	hooks := &countingWebhooks{}
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	d := recoveryDashboard(t, hooks, 1, &now)
	first, second := postAs(d, "a", "/app/webhooks/h1/delete", ""), postAs(d, "a", "/app/webhooks/h1/delete", "")
	if first.Code != http.StatusSeeOther || second.Code != http.StatusTooManyRequests || hooks.redos != 1 {
		t.Fatalf("answers %d, %d with %d carried out under a limit of 1", first.Code, second.Code, hooks.redos)
	}
}
