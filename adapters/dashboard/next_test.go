package dashboard

import (
	"context"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
)

// Pages that say what to do next: an empty inbox, a phrase no helper has
// read, the accounts page.

var clock0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// fixedAccounts answers the accounts page with the same statuses for
// every owner.
type fixedAccounts struct{ list []health.Status }

func (a fixedAccounts) Accounts(context.Context, string) ([]health.Status, error) { return a.list, nil }
func (a fixedAccounts) Resolve(context.Context, string, string) (health.Status, error) {
	return health.Status{}, health.ErrNotResolvable
}

// fixedReddit answers with the deployment's communities, every owner's.
type fixedReddit struct{ rows []CommunityHealth }

func (r fixedReddit) Communities(context.Context) ([]CommunityHealth, error) { return r.rows, nil }

func nextDashboard(t *testing.T, phrases []core.Phrase, acc []health.Status, reddit []CommunityHealth) *Dashboard {
	t.Helper()
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return clock0 }},
		Deps{Sessions: ownerSessions{owners: map[string]string{"own" + strings.Repeat("t", 40): "own"}}, Inbox: fakeInbox{},
			Phrases: ownerPhrases{by: map[string][]core.Phrase{"own": phrases}}, Accounts: fixedAccounts{acc}, Reddit: fixedReddit{reddit}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// page fetches path as the owner and returns its main element.
func page(t *testing.T, d *Dashboard, path string) string {
	t.Helper()
	w := getAs(d, "own", path)
	if w.Code != 200 {
		t.Fatalf("%s: status %d\n%s", path, w.Code, w.Body)
	}
	body := w.Body.String()
	i, j := strings.Index(body, `<main id="main">`), strings.Index(body, "</main>")
	if i < 0 || j < i {
		t.Fatalf("%s: no main in\n%s", path, body)
	}
	return body[i:j]
}

// unread is a phrase as the store creates it: checked "at creation",
// from the source its platform is read by (docs/decisions.md).
func unread(id, phrase string, p core.Platform) core.Phrase {
	src := core.SourceHelper
	if p == core.Reddit {
		src = core.SourceReddit
	}
	ph := core.Phrase{ID: id, OwnerID: "own", Phrase: phrase, Platform: p, Status: core.Listening,
		CreatedAt: clock0.Add(-10 * time.Second), LastCheckedAt: clock0.Add(-10 * time.Second), LastSource: src}
	if p == core.Reddit {
		ph.Community = "saas"
	}
	return ph
}

// An empty inbox says what to do: with no phrase, add one; with x or
// facebook phrases, run a helper with an ingest key. It once said only
// "no matches yet".
func TestEmptyInboxSaysWhatToDoNext(t *testing.T) {
	none := page(t, nextDashboard(t, nil, nil, nil), "/app/")
	if !strings.Contains(none, `href="/app/phrases"`) || !strings.Contains(none, "Add a phrase") {
		t.Fatalf("the empty inbox of an owner without phrases does not point to adding one:\n%s", none)
	}
	if strings.Contains(none, "earshot helper") {
		t.Fatalf("an owner without phrases is told to run a helper:\n%s", none)
	}

	helped := page(t, nextDashboard(t, []core.Phrase{unread("p1", "acme", core.X), unread("p2", "acme", core.Facebook)}, nil, nil), "/app/")
	for _, want := range []string{`href="/app/keys"`, "<code>earshot helper</code>", "x and facebook"} {
		if !strings.Contains(helped, want) {
			t.Fatalf("the empty inbox of an owner with x and facebook phrases lacks %q:\n%s", want, helped)
		}
	}

	redditOnly := page(t, nextDashboard(t, []core.Phrase{unread("p1", "acme", core.Reddit)}, nil, nil), "/app/")
	if strings.Contains(redditOnly, "earshot helper") || !strings.Contains(redditOnly, "reads reddit") {
		t.Fatalf("the empty inbox of a reddit-only owner:\n%s", redditOnly)
	}
	// A filter that hides everything is not a reason to run anything.
	filtered := page(t, nextDashboard(t, []core.Phrase{unread("p1", "acme", core.X)}, nil, nil), "/app/?platform=facebook")
	if strings.Contains(filtered, "earshot helper") || !strings.Contains(filtered, "No match fits these filters.") {
		t.Fatalf("the empty filtered inbox:\n%s", filtered)
	}
}

var phraseRowRe = regexp.MustCompile(`(?s)<tr>\s*<th scope="row" class="phrase">([^<]*)</th>(.*?)</tr>`)

// phraseRows returns each phrase row's text without tags, by phrase.
func phraseRows(t *testing.T, main string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range phraseRowRe.FindAllStringSubmatch(main, -1) {
		out[m[1]] = strings.Join(strings.Fields(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[2], " ")), " ")
	}
	return out
}

// An x or facebook phrase no helper has read says so, instead of
// "listening, checked just now, from helper" as creation stamped it; a
// helper's read gives it the usual status. Reddit phrases are read by
// the server and keep theirs.
func TestPhraseNoHelperReadIsWaiting(t *testing.T) {
	x, fb, r := unread("p1", "acme x", core.X), unread("p2", "acme fb", core.Facebook), unread("p3", "acme reddit", core.Reddit)
	read := unread("p4", "acme read", core.X)
	read.LastCheckedAt = clock0.Add(-2 * time.Minute)
	read.CreatedAt = clock0.Add(-time.Hour)
	paused := unread("p5", "acme paused", core.X)
	paused.Status = core.Paused
	rows := phraseRows(t, page(t, nextDashboard(t, []core.Phrase{x, fb, r, read, paused}, nil, nil), "/app/phrases"))
	for _, p := range []string{"acme x", "acme fb"} {
		got := rows[p]
		if !strings.Contains(got, "waiting for a helper") || strings.Contains(got, "just now") || !strings.Contains(got, "never none yet") {
			t.Fatalf("%s, never read by a helper, shows %q", p, got)
		}
	}
	if got := rows["acme read"]; !strings.Contains(got, "listening") || !strings.Contains(got, "2 min ago") || strings.Contains(got, "waiting") {
		t.Fatalf("a phrase a helper read shows %q", got)
	}
	if got := rows["acme reddit"]; !strings.Contains(got, "listening") || strings.Contains(got, "waiting") {
		t.Fatalf("a reddit phrase shows %q", got)
	}
	if got := rows["acme paused"]; !strings.Contains(got, "paused") || strings.Contains(got, "just now") {
		t.Fatalf("a paused phrase no helper read shows %q", got)
	}
}

var sectionRe = regexp.MustCompile(`(?s)<section class="card account[^"]*" id="acct-(\w+)".*?</section>`)

func accountSections(t *testing.T, main string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range sectionRe.FindAllStringSubmatch(main, -1) {
		out[m[1]] = m[0]
	}
	return out
}

// The accounts page says the server reads reddit, shows the health of
// the communities the owner's phrases watch (and no one else's), never
// says "healthy" of an account no helper has reported on, and writes
// "wait" as words, not as something that looks like a button.
func TestAccountsPageSaysWhatToDo(t *testing.T) {
	acc := []health.Status{
		health.StatusOf("", core.Reddit, false, health.Record{}),
		// An account the first ingest created: no report yet.
		health.StatusOf("a-x", core.X, true, health.Record{}),
		health.StatusOf("a-fb", core.Facebook, true, health.Record{LastIssue: health.RateLimited, LastCheckedAt: clock0.Add(-time.Minute),
			RetryAfter: clock0.Add(30 * time.Minute)}),
	}
	reddit := []CommunityHealth{
		{Community: "saas", Phrases: 3, Via: "json", LastSuccessAt: clock0.Add(-3 * time.Minute), Behind: 4 * time.Minute},
		{Community: "golang", Phrases: 1, Via: "feed", LastError: "feed: answer nests deeper than 32 elements", LastErrorAt: clock0.Add(-time.Minute)},
		{Community: "someone_elses", Phrases: 1, Via: "oauth", LastSuccessAt: clock0},
	}
	golang := unread("p2", "gopher", core.Reddit)
	golang.Community = "golang"
	main := page(t, nextDashboard(t, []core.Phrase{unread("p1", "acme", core.Reddit), golang, unread("p3", "acme", core.X)}, acc, reddit), "/app/accounts")
	s := accountSections(t, main)

	if !strings.Contains(s["reddit"], "The server reads reddit") || strings.Contains(s["reddit"], `href="/app/keys"`) || strings.Contains(s["reddit"], "needs you") {
		t.Fatalf("the reddit card does not say the server reads reddit, or asks for a helper:\n%s", s["reddit"])
	}
	for _, want := range []string{"r/saas", "json", "3 min ago", "4m0s", "r/golang", "never", "feed: answer nests deeper than 32 elements"} {
		if !strings.Contains(s["reddit"], want) {
			t.Fatalf("the community health lacks %q:\n%s", want, s["reddit"])
		}
	}
	if strings.Contains(main, "someone_elses") {
		t.Fatal("the page shows a community none of the owner's phrases watch")
	}

	if strings.Contains(s["x"], ">healthy<") || !strings.Contains(s["x"], "never") {
		t.Fatalf("an account never reported on reads healthy:\n%s", s["x"])
	}
	if !strings.Contains(s["facebook"], "degraded") {
		t.Fatalf("facebook card:\n%s", s["facebook"])
	}
	if strings.Contains(s["facebook"], `class="button`) || !strings.Contains(s["facebook"], "retry after 12:30 UTC") {
		t.Fatalf("waiting is drawn as a button, or without its time:\n%s", s["facebook"])
	}
}

// Every page names an icon, and /favicon.ico answers it: a browser's
// request for it once failed with 404 on every page.
func TestFavicon(t *testing.T) {
	d := nextDashboard(t, nil, nil, nil)
	if !strings.Contains(getAs(d, "own", "/app/").Body.String(), `<link rel="icon" href="/app/static/icon.svg" type="image/svg+xml">`) {
		t.Fatal("the layout names no icon")
	}
	for _, path := range []string{"/favicon.ico", "/app/static/icon.svg"} {
		w := get(d, path, false)
		if w.Code != 200 || w.Header().Get("Content-Type") != "image/svg+xml" || !strings.Contains(w.Body.String(), "<svg") {
			t.Fatalf("%s: %d %q", path, w.Code, w.Header().Get("Content-Type"))
		}
	}
	found := false
	for _, p := range d.Paths() {
		found = found || p == "GET /favicon.ico"
	}
	if !found {
		t.Fatalf("the server is not told to send /favicon.ico here: %v", d.Paths())
	}
}

// A match shows its post's title and the time the post was made, when
// the platform gave them.
func TestMatchShowsTitleAndPostedAt(t *testing.T) {
	it := item(1, "body", "ada", "https://reddit.com/r/saas/1")
	it.Match.Post.Title = "Which CRM for five people?"
	it.Match.Post.PostedAt = clock0.Add(-3 * time.Hour)
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return clock0 }},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{items: []ports.InboxItem{it}}, Phrases: fakePhrases{}})
	if err != nil {
		t.Fatal(err)
	}
	body := get(d, "/app/", true).Body.String()
	for _, want := range []string{"<h2>Which CRM for five people?</h2>", `<time class="posted" datetime="2025-03-01T09:00:00Z">posted 3 h ago</time>`} {
		if !strings.Contains(body, want) {
			t.Fatalf("the match lacks %q:\n%s", want, body)
		}
	}
}
