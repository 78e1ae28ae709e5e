package dashboard

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

func ptr[T any](v T) *T { return &v }

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// wantInvalid fails unless err is KindInvalid and says want.
func wantInvalid(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !core.IsKind(err, core.KindInvalid) || core.Message(err) != want {
		t.Fatalf("%s: error %v, want invalid_parameter %q", what, err, want)
	}
}

func TestParseFilter(t *testing.T) {
	no, yes := ptr(false), ptr(true)
	for _, c := range []struct {
		raw  string
		form filterForm
		q    ports.InboxQuery
		err  string
	}{
		{"", filterForm{Show: "inbox"}, ports.InboxQuery{Archived: no}, ""},
		{"show=unread", filterForm{Show: "unread"}, ports.InboxQuery{Archived: no, Read: no}, ""},
		{"show=read", filterForm{Show: "read"}, ports.InboxQuery{Read: yes}, ""},
		{"show=starred", filterForm{Show: "starred"}, ports.InboxQuery{Starred: yes}, ""},
		{"show=archived", filterForm{Show: "archived"}, ports.InboxQuery{Archived: yes}, ""},
		{"show=all", filterForm{Show: "all"}, ports.InboxQuery{}, ""},
		{"show=+all+", filterForm{Show: "all"}, ports.InboxQuery{}, ""},
		{"platform=x&intent=buying&phrase=p1&min_score=+50", filterForm{Platform: "x", Intent: "buying", Phrase: "p1", MinScore: "50", Show: "inbox"},
			ports.InboxQuery{Platform: core.X, Intent: core.IntentBuying, PhraseID: "p1", MinScore: ptr(50), Archived: no}, ""},
		{"min_score=101", filterForm{MinScore: "101", Show: "inbox"}, ports.InboxQuery{MinScore: ptr(101), Archived: no}, ""}, // the range is app's
		{"before=1700000000000.5", filterForm{Before: "1700000000000.5", Show: "inbox"}, ports.InboxQuery{Before: 1700000000000.5, Archived: no}, ""},
		{"show=nope", filterForm{Show: "nope"}, ports.InboxQuery{}, "show must be one of inbox, unread, read, starred, archived, all"},
		{"min_score=abc", filterForm{MinScore: "abc", Show: "inbox"}, ports.InboxQuery{}, "min_score must be a whole number from 0 to 100"},
		{"min_score=5.5", filterForm{MinScore: "5.5", Show: "inbox"}, ports.InboxQuery{}, "min_score must be a whole number from 0 to 100"},
		{"before=yesterday", filterForm{Before: "yesterday", Show: "inbox"}, ports.InboxQuery{}, "before must be the cursor of an older page"},
	} {
		f := parseFilter(mustQuery(t, c.raw))
		if f != c.form {
			t.Fatalf("%q: form %+v, want %+v", c.raw, f, c.form)
		}
		q, err := f.query()
		if c.err != "" {
			wantInvalid(t, c.raw, err, c.err)
			continue
		}
		if err != nil || !reflect.DeepEqual(q, c.q) {
			t.Fatalf("%q: query %+v, %v; want %+v", c.raw, q, err, c.q)
		}
	}
}

// A filter's address leaves out the defaults and the cursor.
func TestFilterValues(t *testing.T) {
	for raw, want := range map[string]string{
		"":                                       "",
		"show=inbox&before=5":                    "",
		"show=all&platform=x&min_score=7":        "min_score=7&platform=x&show=all",
		"intent=question&phrase=p2&show=starred": "intent=question&phrase=p2&show=starred",
		"platform=&min_score=&intent=&phrase=&x=": "",
	} {
		if got := parseFilter(mustQuery(t, raw)).values().Encode(); got != want {
			t.Errorf("%q: values %q, want %q", raw, got, want)
		}
	}
}

func TestParseMinScore(t *testing.T) {
	for in, want := range map[string]*int{"": nil, "0": ptr(0), "70": ptr(70), "-3": ptr(-3), "100": ptr(100)} {
		if got, err := parseMinScore(in); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("parseMinScore(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"x", "1e2", "0x10", "9999999999999999999999", " 5"} {
		_, err := parseMinScore(in)
		wantInvalid(t, in, err, "min_score must be a whole number from 0 to 100")
	}
}

func TestParseBulk(t *testing.T) {
	f, err := parseBulk(mustQuery(t, "id=m1&id=m2&action=archive&return=/app/%3Fshow%3Dunread"))
	if err != nil || !reflect.DeepEqual(f.IDs, []string{"m1", "m2"}) || f.Action != "archive" || f.Return != "/app/?show=unread" ||
		f.Change.Archived == nil || !*f.Change.Archived || f.Change.Read != nil || f.Change.Starred != nil {
		t.Fatalf("%+v, %v", f, err)
	}
	if f, err := parseBulk(mustQuery(t, "id=m1&action=read&return=https://evil.example/app/")); err != nil || f.Return != "/app/" {
		t.Fatalf("a foreign return address: %+v, %v", f, err)
	}
	_, err = parseBulk(mustQuery(t, "id=m1&action=delete"))
	wantInvalid(t, "unknown action", err, "choose an action: read, unread, star, unstar, archive or unarchive")
	_, err = parseBulk(mustQuery(t, "action=read"))
	wantInvalid(t, "no ids", err, "select at least one match first")
}

func TestTriageChange(t *testing.T) {
	empty := core.Triage{}
	full := core.Triage{Read: true, Starred: true, Archived: true}
	for action, want := range map[string][2]core.Triage{
		"read":      {{Read: true}, full},
		"unread":    {empty, {Starred: true, Archived: true}},
		"star":      {{Starred: true}, full},
		"unstar":    {empty, {Read: true, Archived: true}},
		"archive":   {{Archived: true}, full},
		"unarchive": {empty, {Read: true, Starred: true}},
	} {
		c, ok := triageChange(action)
		if !ok || c.Apply(empty) != want[0] || c.Apply(full) != want[1] {
			t.Errorf("%s: %v applied gives %+v and %+v", action, ok, c.Apply(empty), c.Apply(full))
		}
	}
	for _, action := range []string{"", "READ", "delete", "read "} {
		if _, ok := triageChange(action); ok {
			t.Errorf("%q is an action", action)
		}
	}
}

// A refusal of a new phrase is shown beside the field it is about, for
// each rule of core.NewPhrase and the plan limit.
func TestPhraseFormField(t *testing.T) {
	for _, c := range []struct{ raw, field string }{
		{"platform=myspace&phrase=acme", "platform"},
		{"platform=&phrase=acme", "platform"},
		{"platform=x&phrase=", "phrase"},
		{"platform=x&phrase=" + strings.Repeat("a", 101), "phrase"},
		{"platform=x&phrase=a%01b", "phrase"},
		{"platform=reddit&phrase=acme", "community"},
		{"platform=reddit&phrase=acme&community=" + url.QueryEscape("r/no spaces allowed"), "community"},
		{"platform=x&phrase=acme&community=SaaS", "community"},
	} {
		f := parsePhrase(mustQuery(t, c.raw))
		_, err := core.NewPhrase("o", f.Phrase, f.Platform, f.Community)
		if err == nil {
			t.Fatalf("%q: core accepts it", c.raw)
		}
		if got := f.field(err); got != c.field {
			t.Errorf("%q (%v): beside %q, want %q", c.raw, err, got, c.field)
		}
	}
	f := parsePhrase(mustQuery(t, "platform=x&phrase=acme&community="))
	if f != (phraseForm{Platform: "x", Phrase: "acme"}) {
		t.Fatalf("%+v", f)
	}
	if got := f.field(core.Errorf(core.KindPlanLimit, "the plan allows 1 x phrase(s)")); got != "platform" {
		t.Fatalf("plan limit beside %q", got)
	}
	if got := f.field(core.Errorf(core.KindConflict, "already there")); got != "phrase" {
		t.Fatalf("conflict beside %q", got)
	}
}

func TestParseLogin(t *testing.T) {
	if f := parseLogin(mustQuery(t, "email=+ada%40example.com%0A")); f.Email != "ada@example.com" {
		t.Fatalf("%+v", f)
	}
	if f := parseLogin(url.Values{}); f.Email != "" {
		t.Fatalf("%+v", f)
	}
}

func TestParseKey(t *testing.T) {
	f, err := parseKey(mustQuery(t, "name=+ci+&scope=webhooks&scope=read&scope=webhooks"), core.APIKey)
	if err != nil || f.Name != "ci" || !reflect.DeepEqual(f.Scopes, []core.Scope{core.ScopeWebhooks, core.ScopeRead}) {
		t.Fatalf("%+v, %v", f, err)
	}
	f, err = parseKey(mustQuery(t, "name=ci&scope=admin"), core.APIKey)
	wantInvalid(t, "unknown scope", err, `unknown scope "admin": scopes are read, write:phrases, webhooks`)
	if f.Name != "ci" {
		t.Fatalf("the name typed is lost: %+v", f)
	}
	// An ingest key has no scopes: whatever the form sends is not read.
	f, err = parseKey(mustQuery(t, "name=helper&scope=admin&scope=read"), core.IngestKey)
	if err != nil || f.Name != "helper" || f.Scopes != nil {
		t.Fatalf("ingest: %+v, %v", f, err)
	}
}

func TestParseWebhook(t *testing.T) {
	f := parseWebhook(mustQuery(t, "url=+https://hooks.example.com/in+&min_score=+40+&platform=x&platform=reddit"))
	if f.URL != "https://hooks.example.com/in" || f.MinScore != "40" || !reflect.DeepEqual(f.Platforms, []string{"x", "reddit"}) {
		t.Fatalf("%+v", f)
	}
	if n, err := f.minScore(); err != nil || *n != 40 {
		t.Fatalf("minScore %v, %v", n, err)
	}
	if n, err := parseWebhook(url.Values{}).minScore(); n != nil || err != nil {
		t.Fatalf("no min_score: %v, %v", n, err)
	}
	// No box ticked is an empty list the service refuses, never "leave
	// the platforms as they are".
	if ps := parseWebhook(url.Values{}).platforms(); ps == nil || len(ps) != 0 {
		t.Fatalf("platforms of an empty form: %#v", ps)
	}
}

// A refusal of a webhook is shown beside the field it is about, with
// errors of the real rules in the order the service checks them.
func TestWebhookFormField(t *testing.T) {
	invalid := core.Errorf(core.KindInvalid, "refused")
	for _, c := range []struct {
		raw     string
		err     error
		withURL bool
		field   string
	}{
		{"url=ftp://h.example/x&platform=x", invalid, true, "url"},
		{"url=&platform=x", invalid, true, "url"},
		{"url=https://h.example/x&min_score=abc&platform=x", invalid, true, "min_score"},
		{"url=https://h.example/x&min_score=101&platform=x", invalid, true, "min_score"},
		{"url=https://h.example/x&min_score=-1&platform=x", invalid, true, "min_score"},
		{"url=https://h.example/x&min_score=5", invalid, true, "platforms"},
		{"url=https://h.example/x&min_score=5&platform=myspace", invalid, true, "platforms"},
		// Only where it points is wrong (a private address): the address.
		{"url=https://10.0.0.1/x&min_score=5&platform=x", invalid, true, "url"},
		{"url=https://h.example/x&platform=x", core.Errorf(core.KindConflict, "already there"), true, "url"},
		{"url=https://h.example/x&platform=x", core.Errorf(core.KindPlanLimit, "no webhooks"), true, ""},
		{"url=https://h.example/x&platform=x", core.Errorf(core.KindNotFound, "no such webhook"), false, ""},
		// Editing has no address field.
		{"url=ftp://h.example/x&min_score=5&platform=x", invalid, false, "min_score"},
		{"min_score=500&platform=x", invalid, false, "min_score"},
		{"min_score=50", invalid, false, "platforms"},
	} {
		if got := parseWebhook(mustQuery(t, c.raw)).field(c.err, c.withURL); got != c.field {
			t.Errorf("%q (%v, url %v): beside %q, want %q", c.raw, c.err, c.withURL, got, c.field)
		}
	}
}

func TestParseActive(t *testing.T) {
	for raw, want := range map[string]bool{"active=true": true, "active=false": false} {
		if got, err := parseActive(mustQuery(t, raw)); err != nil || got != want {
			t.Errorf("%q: %v, %v", raw, got, err)
		}
	}
	for _, raw := range []string{"", "active=", "active=on", "active=TRUE", "active=1", "on=true"} {
		_, err := parseActive(mustQuery(t, raw))
		wantInvalid(t, raw, err, "active must be true or false")
	}
}

// An unreadable form is one invalid_parameter, whatever the handler.
func TestReadForm(t *testing.T) {
	r := httptest.NewRequest("POST", "/app/keys", strings.NewReader("name=%zz"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err := readForm(r)
	wantInvalid(t, "bad escape", err, "the form could not be read")
	r = httptest.NewRequest("POST", "/app/keys?name=from-the-address", strings.NewReader("name=ci"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if form, err := readForm(r); err != nil || form.Get("name") != "ci" || len(form["name"]) != 1 {
		t.Fatalf("the posted form only: %v, %v", form, err)
	}
}

func TestRefererReturn(t *testing.T) {
	for ref, want := range map[string]string{
		"":                                 "/app/",
		"http://example.com/app/?show=all": "/app/?show=all",
		"http://example.com/app/?done=read&n=2&show=unread": "/app/?show=unread",
		"http://example.com/app/phrases":                    "/app/phrases",
		"http://evil.example/app/?show=all":                 "/app/",
		"http://example.com/elsewhere":                      "/app/",
		"http://example.com//evil.example/":                 "/app/",
		"%zz":                                               "/app/",
	} {
		r := httptest.NewRequest("POST", "http://example.com/app/matches/m1", nil)
		r.Header.Set("Referer", ref)
		if got := refererReturn(r); got != want {
			t.Errorf("Referer %q: back to %q, want %q", ref, got, want)
		}
	}
}

// A page's notice is one of its own sentences, whatever the address says.
func TestDoneNotice(t *testing.T) {
	for _, c := range []struct {
		raw, page, want string
	}{
		{"done=revoked", "keys", "Key revoked: requests with it are refused from now on."},
		{"done=saved", "webhook", "Settings saved."},
		{"done=resolved", "accounts", "Marked resolved: the account is healthy again."},
		{"done=paused", "phrases", "Phrase paused."},
		{"done=saved", "keys", ""},
		{"done=%3Cb%3Ehi%3C%2Fb%3E", "webhook", ""},
		{"done=webhook%2Fsaved", "keys", ""},
		{"", "phrases", ""},
	} {
		r := httptest.NewRequest("GET", "/app/x?"+c.raw, nil)
		if got := doneNotice(r, c.page); got != c.want {
			t.Errorf("%q: %q, want %q", c.raw, got, c.want)
		}
	}
}

// Every handler that reads a form refuses an unreadable one with 400
// before it asks a service for anything (the test dashboard has no key,
// webhook or account service to ask).
func TestUnreadableFormsRefused(t *testing.T) {
	d := newTestDashboard(t, item(1, "t", "a", "https://x.com/1"))
	for _, path := range []string{"/app/login", "/app/matches/bulk", "/app/matches/m1", "/app/phrases", "/app/keys", "/app/ingest-keys",
		"/app/webhooks", "/app/webhooks/w1", "/app/webhooks/w1/active"} {
		r := httptest.NewRequest("POST", path, strings.NewReader("name=%zz&action=read"))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
		w := httptest.NewRecorder()
		d.ServeHTTP(w, r)
		if w.Code != 400 || !strings.Contains(w.Body.String(), "the form could not be read") {
			t.Errorf("POST %s: %d\n%s", path, w.Code, w.Body)
		}
	}
}
