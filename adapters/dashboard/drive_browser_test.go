package dashboard

// What the walk of cmd/earshot and the other browser tests do not
// reach, driven in Debian's Chromium: the Discord add form, "Mark all
// read", the add-a-channel forms with refusals and the filters page at
// 375 px, and the inbox and the phrase forms with the keyboard alone.
// Skipped without Chromium.

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// readingNotes lists three notifications, unread until MarkAllRead.
type readingNotes struct {
	mu   sync.Mutex
	read bool
}

func (n *readingNotes) List(context.Context, string, int) ([]core.Notification, int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var out []core.Notification
	for _, id := range []string{"n1", "n2", "n3"} {
		x := core.Notification{ID: id, Kind: core.NotificationKind("webhook_disabled"), Severity: "alert", Title: "Webhook " + id + " switched off",
			Message: "It failed 5 times in a row.", CreatedAt: at}
		if n.read {
			x.ReadAt = at
		}
		out = append(out, x)
	}
	unread := 3
	if n.read {
		unread = 0
	}
	return out, unread, nil
}
func (n *readingNotes) Unread(ctx context.Context, o string) (int, error) {
	_, u, err := n.List(ctx, o, 0)
	return u, err
}
func (n *readingNotes) MarkRead(context.Context, string, string) error { return nil }
func (n *readingNotes) MarkAllRead(context.Context, string) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	was := n.read
	n.read = true
	if was {
		return 0, nil
	}
	return 3, nil
}

// triageInbox keeps the triage of its items, as the store does.
type triageInbox struct {
	mu    sync.Mutex
	items []ports.InboxItem
}

func (f *triageInbox) List(context.Context, string, ports.InboxQuery) (ports.InboxPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return ports.InboxPage{Items: append([]ports.InboxItem(nil), f.items...)}, nil
}
func (f *triageInbox) Changes(context.Context, string, ports.InboxQuery, time.Time, time.Time, int) ([]ports.InboxItem, []ports.InboxItem, error) {
	return nil, nil, nil
}
func (f *triageInbox) Set(_ context.Context, _, id string, c core.TriageChange) (core.Triage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.items {
		if f.items[i].Match.ID == id {
			f.items[i].Triage = c.Apply(f.items[i].Triage)
			return f.items[i].Triage, nil
		}
	}
	return core.Triage{}, core.Errorf(core.KindNotFound, "match not found")
}
func (f *triageInbox) SetMany(ctx context.Context, o string, ids []string, c core.TriageChange) (int, error) {
	n := 0
	for _, id := range ids {
		if _, err := f.Set(ctx, o, id, c); err == nil {
			n++
		}
	}
	return n, nil
}
func (f *triageInbox) triage(id string) core.Triage {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, it := range f.items {
		if it.Match.ID == id {
			return it.Triage
		}
	}
	return core.Triage{}
}

// browserAt starts Chromium at width px on a signed-in session of srv;
// the test is skipped without it.
func browserAt(t *testing.T, srv *httptest.Server, width int64) context.Context {
	t.Helper()
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no Chromium at %s: browser test skipped", chromium)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// A bound on a hung page, not a speed goal: CI runs this beside
	// every other package under the race detector.
	ctx, stop := context.WithTimeout(bctx, 5*time.Minute)
	t.Cleanup(stop)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 800), chromedp.Navigate(srv.URL+"/app/login")); err != nil {
		t.Skipf("Chromium does not start (%v): browser test skipped", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie = "`+cookieName+`=`+tok+`; path=/app/"`)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// overflowJS says how far the page reaches past the screen, and the first
// elements that do; "" when nothing does.
const overflowJS = `(function(){var d=document.documentElement;if(d.scrollWidth<=d.clientWidth)return "";
var out=[];document.querySelectorAll("main *").forEach(function(e){var r=e.getBoundingClientRect();if(r.right>d.clientWidth+1&&out.length<6)out.push(e.tagName.toLowerCase()+(e.id?"#"+e.id:"")+(e.className?"."+e.className:""))});
return "scroll width "+d.scrollWidth+" of "+d.clientWidth+": "+out.join(", ")})()`

func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// openDetails opens the <details> sel by clicking its summary in the
// page, and waits until its form shows.
func openDetails(sel string) chromedp.Action[chromedp.Void] {
	js := `(function(){var d=document.querySelector(` + strconv.Quote(sel) + `);if(!d.open)d.querySelector("summary").click();return d.open})()`
	return chromedp.Steps(
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](js)(ctx, t)
			return err
		}),
		chromedp.WaitVisible(chromedp.CSS(sel+"[open] form")),
	)
}

// pageClick clicks the first element matching sel inside the page once
// it is shown: chromedp's click goes to the place it measured, and a
// loaded machine still laying the page out can move the element away
// between the measure and the click.
func pageClick(sel string) chromedp.Action[chromedp.Void] {
	q := `document.querySelector(` + strconv.Quote(sel) + `)`
	return chromedp.Steps(
		chromedp.WaitVisible(chromedp.CSS(sel)),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[any](q+`.click()`)(ctx, t)
			return err
		}),
	)
}

func open(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("main h1"))); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// key presses one key on the focused element, as a person would.
func key(t *testing.T, ctx context.Context, k string, mods ...chromedp.Modifier) {
	t.Helper()
	var opts []chromedp.KeyOption
	for _, m := range mods {
		opts = append(opts, chromedp.KeyModifiers(m))
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(k, opts...)); err != nil {
		t.Fatalf("key %q: %v", k, err)
	}
}

// focused describes the focused element.
const focusedJS = `(function(e){return e.tagName.toLowerCase()+(e.id?"#"+e.id:"")+(e.name?"[name="+e.name+"]":"")+(e.value&&e.tagName!=="INPUT"?"="+e.value:"")+"|"+(e.closest("article")?e.closest("article").id:"")})(document.activeElement)`

// tabTo presses Tab until the focused element matches sel (a CSS
// selector), at most n times; it fails when the keyboard cannot get there.
func tabTo(t *testing.T, ctx context.Context, sel string, n int, mods ...chromedp.Modifier) {
	t.Helper()
	for range n {
		if evalJS[bool](t, ctx, `document.activeElement.matches(`+jsQuote(sel)+`)`) {
			return
		}
		key(t, ctx, "\t", mods...)
	}
	t.Fatalf("the keyboard does not reach %s in %d tabs (at %s)", sel, n, evalJS[string](t, ctx, focusedJS))
}

func jsQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func TestDriveWhatTheWalkMisses(t *testing.T) {
	var items []ports.InboxItem
	for i := 1; i <= 3; i++ {
		items = append(items, item(i, "looking for an acme alternative", "ada", "https://x.com/1"))
	}
	inbox := &triageInbox{items: items}
	notes := &readingNotes{}
	chans := &fakeChannels{}
	phrases := &filterPhrases{p: core.Phrase{ID: "p1", Phrase: "acme", Platform: core.Reddit, Community: "smallbusiness", Status: core.Listening}}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Inbox: inbox, Matches: fakeMatches{m: items[0].Match}, Phrases: phrases,
			Webhooks: &countingWebhooks{}, Channels: chans, Notifications: notes, Window: &fakeWindow{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)

	t.Run("phone", func(t *testing.T) {
		ctx := browserAt(t, srv, 375)
		fits := func(what string) {
			t.Helper()
			if over := evalJS[string](t, ctx, overflowJS); over != "" {
				t.Errorf("%s at 375 px reaches past the screen: %s", what, over)
			}
		}
		// The Discord form: opened, filled and refused, then added.
		open(t, ctx, srv.URL+"/app/webhooks")
		chans.err = core.Errorf(core.KindInvalid, "url must be a Discord webhook address: https://discord.com/api/webhooks/{id}/{token}")
		// The summary is opened by a DOM click: a click by coordinates can
		// land beside it while a loaded machine is still laying the page out.
		if err := chromedp.Do(ctx, openDetails("#add-discord"),
			chromedp.SendKeys(chromedp.CSS("#discord-url"), "https://discord.com/api/webhooks/123/"+strings.Repeat("x", 68)),
			chromedp.SetValue(chromedp.CSS("#discord-min"), "55"),
			pageClick(`#add-discord button[type="submit"]`), chromedp.WaitReady(chromedp.CSS("#discord-e-url"))); err != nil {
			t.Fatal(err)
		}
		if got := evalJS[string](t, ctx, `document.querySelector("#discord-url").value+"|"+document.querySelector("#discord-min").value+"|"+document.querySelector("#add-discord").open`); !strings.HasSuffix(got, "|55|true") {
			t.Errorf("the refused Discord form keeps what was typed, open: %q", got)
		}
		fits("the add-a-channel list with a refusal")
		chans.err = nil
		if err := chromedp.Do(ctx, pageClick(`#add-discord button[type="submit"]`), chromedp.WaitReady(chromedp.CSS(".notice"))); err != nil {
			t.Fatal(err)
		}
		if n := len(chans.created); n != 2 || chans.created[1].Kind != "discord" || chans.created[1].URL == "" {
			t.Errorf("the Discord form reached the service as %+v", chans.created)
		}
		fits("the list after adding")

		// The other forms refused, each with a service's long words.
		for kind, why := range map[string]string{
			"slack":    "url must be a Slack incoming webhook address: https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
			"telegram": "token must look like 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw, the token @BotFather gives",
			"ntfy":     "url must be https://host/topic, such as https://ntfy.sh/your-long-random-topic-with-no-spaces",
		} {
			chans.err = core.Errorf(core.KindInvalid, "%s", why)
			open(t, ctx, srv.URL+"/app/webhooks")
			if err := chromedp.Do(ctx, openDetails("#add-"+kind),
				pageClick("#add-"+kind+` button[type="submit"]`), chromedp.WaitReady(chromedp.CSS("#add-"+kind+"[open] p.error"))); err != nil {
				t.Fatalf("%s refused: %v", kind, err)
			}
			fits("the add-a-channel list with the " + kind + " form refused")
		}
		chans.err = nil

		// The channel's test, then a reload: the answer again, nothing sent.
		open(t, ctx, srv.URL+"/app/channels/c2")
		if err := chromedp.Do(ctx, pageClick("#test"), chromedp.WaitReady(chromedp.CSS("#test-result"))); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("#test-result"))); err != nil {
			t.Fatal(err)
		}
		if got := evalJS[string](t, ctx, `location.pathname+"|"+document.querySelector("#test-result").innerText`); !strings.HasPrefix(got, "/app/channels/c2|Test message") || !strings.Contains(got, "slack: the channel was deleted (channel_not_found), http 404.") || chans.tests != 1 {
			t.Errorf("the test, reloaded: %q, %d tests", got, chans.tests)
		}
		fits("the channel's page with a test's answer")

		// The filters page before a preview.
		open(t, ctx, srv.URL+"/app/phrases/p1/filters")
		fits("the filters page")
		open(t, ctx, srv.URL+"/app/phrases")
		fits("the phrases page")

		// Mark all read.
		open(t, ctx, srv.URL+"/app/notifications")
		fits("the notifications")
		if err := chromedp.Do(ctx, pageClick("#read-all"), chromedp.WaitReady(chromedp.CSS(".notice"))); err != nil {
			t.Fatal(err)
		}
		if got := evalJS[string](t, ctx, `document.querySelector(".notice").innerText+"|"+document.querySelectorAll("li.unread").length+"|"+!!document.querySelector("#unread-count")+"|"+!!document.querySelector("#read-all")`); got != "3 marked read.|0|false|false" {
			t.Errorf("after Mark all read: %q", got)
		}
		fits("the notifications, all read")
	})

	t.Run("keyboard", func(t *testing.T) {
		ctx := browserAt(t, srv, 1280)
		open(t, ctx, srv.URL+"/app/")
		// Shortcuts: j to the first, x selects it, j, x; then the bulk
		// "read" button, reached with Shift+Tab, acts on both.
		for _, k := range []string{"j", "x", "j", "x"} {
			key(t, ctx, k)
		}
		if got := evalJS[string](t, ctx, `Array.from(document.querySelectorAll('#matches input[form="bulk"]:checked')).map(function(b){return b.value}).join(",")+"|"+document.activeElement.id`); got != "m1,m2|m-m2" {
			t.Fatalf("j x j x: %q", got)
		}
		tabTo(t, ctx, `#bulk button[value="read"]`, 30, chromedp.ModifierShift)
		key(t, ctx, "\r")
		if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(".notice"))); err != nil {
			t.Fatal(err)
		}
		if !inbox.triage("m1").Read || !inbox.triage("m2").Read || inbox.triage("m3").Read {
			t.Errorf("bulk read by keyboard: %+v %+v %+v", inbox.triage("m1"), inbox.triage("m2"), inbox.triage("m3"))
		}
		// Without the shortcuts: Tab to a match's box, Space ticks it,
		// Shift+Tab to "Star", Enter.
		open(t, ctx, srv.URL+"/app/")
		tabTo(t, ctx, `#m-m3 input[type="checkbox"]`, 60)
		key(t, ctx, " ")
		tabTo(t, ctx, `#bulk button[value="star"]`, 30, chromedp.ModifierShift)
		key(t, ctx, "\r")
		if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(".notice"))); err != nil {
			t.Fatal(err)
		}
		if !inbox.triage("m3").Starred || inbox.triage("m1").Starred {
			t.Errorf("bulk star by keyboard: m3 %+v, m1 %+v", inbox.triage("m3"), inbox.triage("m1"))
		}
		// A match's own button by keyboard: focus stays on the match.
		open(t, ctx, srv.URL+"/app/")
		key(t, ctx, "j")
		key(t, ctx, "e")
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#m-m1 button[value="unarchive"]') !== null`)); err != nil {
			t.Fatal(err)
		}
		if got := evalJS[string](t, ctx, focusedJS); !strings.HasSuffix(got, "|m-m1") {
			t.Errorf("after e the focus is at %q, not on the match", got)
		}

		// The phrase form by keyboard: type, open Filters with Enter,
		// fill one, add with Enter.
		open(t, ctx, srv.URL+"/app/phrases")
		tabTo(t, ctx, `#p-platform`, 40)
		key(t, ctx, "x") // a select takes the first letter of its choice
		tabTo(t, ctx, `#p-phrase`, 5)
		if err := chromedp.Do(ctx, chromedp.KeyEvent("acme crm")); err != nil {
			t.Fatal(err)
		}
		tabTo(t, ctx, `details.phrase-filters summary`, 20)
		key(t, ctx, "\r")
		if !evalJS[bool](t, ctx, `document.querySelector("details.phrase-filters").open`) {
			t.Fatal("Enter on Filters does not open them")
		}
		tabTo(t, ctx, `details.phrase-filters textarea`, 10)
		if err := chromedp.Do(ctx, chromedp.KeyEvent("hiring")); err != nil {
			t.Fatal(err)
		}
		tabTo(t, ctx, `button[value="preview"]`, 30)
		key(t, ctx, "\r")
		if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("#preview"))); err != nil {
			t.Fatal(err)
		}
		if got := evalJS[string](t, ctx, `document.querySelector("#p-phrase").value+"|"+document.querySelector("details.phrase-filters textarea").value`); got != "acme crm|hiring" || phrases.added != 0 {
			t.Fatalf("after Preview by keyboard: %q, %d added", got, phrases.added)
		}
		// From wherever the preview leaves the focus, Shift+Tab reaches
		// "Add phrase" again.
		tabTo(t, ctx, `form.add button:not([value])`, 60, chromedp.ModifierShift)
		key(t, ctx, "\r")
		if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(".notice"))); err != nil {
			t.Fatal(err)
		}
		if phrases.added != 1 || phrases.p.Phrase != "acme crm" || len(phrases.p.Filters.Exclude) != 1 {
			t.Errorf("added by keyboard: %d, %+v", phrases.added, phrases.p)
		}

		// The filters page by keyboard: a word to skip, then Save.
		open(t, ctx, srv.URL+"/app/phrases/p1/filters")
		tabTo(t, ctx, `textarea`, 40)
		if err := chromedp.Do(ctx, chromedp.KeyEvent("jobs")); err != nil {
			t.Fatal(err)
		}
		tabTo(t, ctx, `form button[type="submit"]:not([value])`, 40)
		key(t, ctx, "\r")
		if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(".notice"))); err != nil {
			t.Fatal(err)
		}
		if phrases.updated != 1 {
			t.Errorf("filters saved by keyboard: %d updates, %+v", phrases.updated, phrases.p.Filters)
		}
	})
}

// pagedInbox is a committedInbox whose page may say older matches follow.
type pagedInbox struct {
	*committedInbox
	older bool
}

func (p pagedInbox) List(ctx context.Context, o string, q ports.InboxQuery) (ports.InboxPage, error) {
	page, err := p.committedInbox.List(ctx, o, q)
	if p.older {
		next := core.Millis(page.Items[len(page.Items)-1].Match.CreatedAt)
		page.Next = &next
	}
	return page, err
}

// The live inbox puts a match in its place by time, one that committed
// after a later one included; a match it shows already is swapped, not
// shown twice; one older than the page, with older pages after it, is
// left to them.
func TestLiveInboxPlacesLateMatches(t *testing.T) {
	at := func(i int) ports.InboxItem {
		return item(i, "looking for an acme alternative", "ada", "https://x.com/"+strconv.Itoa(i))
	}
	for _, c := range []struct {
		name  string
		older bool
		want  string
	}{
		{"whole view", false, "m6 m5 m4 m2 m1|3 new matches arrived."},
		{"older pages follow", true, "m6 m5 m4 m2|2 new matches arrived."},
	} {
		t.Run(c.name, func(t *testing.T) {
			inbox := &committedInbox{fakeInbox: fakeInbox{items: []ports.InboxItem{at(5), at(2)}}, polled: make(chan struct{}, 1)}
			for _, i := range []int{1, 4, 5, 6} {
				inbox.commit(at(i))
			}
			d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LivePoll: 20 * time.Millisecond},
				Deps{Sessions: fakeSessions{}, Inbox: pagedInbox{inbox, c.older}, Matches: fakeMatches{}, Phrases: fakePhrases{}})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(d)
			t.Cleanup(srv.Close)
			t.Cleanup(func() { d.Close() })
			ctx := browserAt(t, srv, 1024)
			open(t, ctx, srv.URL+"/app/")
			if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS("#m-m6"))); err != nil {
				t.Fatal(err)
			}
			// Every event of the poll came before m6's, the newest.
			got := evalJS[string](t, ctx, `Array.from(document.querySelectorAll("#matches article")).map(function(a){return a.id.slice(2)}).join(" ")+"|"+document.getElementById("live-status").textContent`)
			if got != c.want {
				t.Fatalf("the live inbox shows %q, want %q", got, c.want)
			}
		})
	}
}
