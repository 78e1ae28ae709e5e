package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/earshothq/earshot/core"
)

// fullPhrases is an owner at every limit of the Free plan, alone on the
// deployment.
type fullPhrases struct{ fakePhrases }

func (fullPhrases) Plan(context.Context, string) (core.Plan, error) {
	return core.FreePlan(core.FreeLimits, core.Usage{Phrases: map[core.Platform]int{core.Reddit: 1},
		Accounts: map[core.Platform]int{}, Owners: 1}), nil
}

// The Plan page's meters at their limit say what the refusal says: the
// limit, and on a deployment of one owner the setting that raises it.
func TestPlanMetersSayHowToRaiseALimit(t *testing.T) {
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Sessions: fakeSessions{}, Phrases: fullPhrases{}})
	if err != nil {
		t.Fatal(err)
	}
	w := get(d, "/app/plan", true)
	body := w.Body.String()
	for _, want := range []string{
		"the plan allows 1 phrase per platform (reddit has 1); the operator raises it with EARSHOT_PLAN_PHRASES_PER_PLATFORM",
		"the plan allows no webhooks; the operator raises it with EARSHOT_PLAN_WEBHOOKS_PER_PERSON",
	} {
		if w.Code != 200 || !strings.Contains(body, want) {
			t.Fatalf("plan page (%d) lacks %q:\n%s", w.Code, want, body)
		}
	}
	if strings.Count(body, "EARSHOT_PLAN_PHRASES_PER_PLATFORM") != 1 {
		t.Fatalf("only reddit's phrases are at their limit:\n%s", body)
	}
}

// addresses is one owner, "own", and the changes asked of it.
type addresses struct {
	mu        sync.Mutex
	email     string
	requested []string
	confirmed int
	untold    bool // the notice to the old address fails
}

func (a *addresses) Owner(_ context.Context, id string) (core.Owner, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return core.Owner{ID: id, Email: a.email}, nil
}

func (a *addresses) Request(_ context.Context, ownerID, email string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !strings.Contains(email, "@") {
		return core.Errorf(core.KindInvalid, "email must be a plain address such as ada@example.com")
	}
	a.requested = append(a.requested, ownerID+" "+email)
	return nil
}

func (a *addresses) Confirm(_ context.Context, token string) (core.Owner, bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if token != tok || a.confirmed > 0 {
		return core.Owner{}, false, core.Errorf(core.KindNotFound, "this link is not valid")
	}
	a.confirmed++
	a.email = "ada@example.com"
	return core.Owner{ID: "own", Email: a.email}, !a.untold, nil
}

func formPost(path string, form url.Values, site string, signedIn bool) *http.Request {
	r := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", site)
	if signedIn {
		r.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
	}
	return r
}

// An owner asks for a new address on the Account page; the link sent to
// it shows a button, and only the button's POST changes the address.
func TestAccountAddressChange(t *testing.T) {
	a := &addresses{email: "owner@localhost"}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Sessions: fakeSessions{}, Phrases: fakePhrases{}, Addresses: a})
	if err != nil {
		t.Fatal(err)
	}
	w := get(d, "/app/account", true)
	if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, "owner@localhost") ||
		!strings.Contains(body, `<form method="post" action="/app/account">`) || !strings.Contains(body, `href="/app/account" aria-current="page"`) {
		t.Fatalf("account page %d:\n%s", w.Code, body)
	}
	if w := get(d, "/app/account", false); w.Code != http.StatusSeeOther {
		t.Fatalf("account page without a session: %d", w.Code)
	}

	w = serve(d, formPost("/app/account", url.Values{"email": {"nope"}}, "same-origin", true))
	if w.Code != 400 || !strings.Contains(w.Body.String(), "plain address") || !strings.Contains(w.Body.String(), `value="nope"`) {
		t.Fatalf("bad address: %d\n%s", w.Code, w.Body)
	}
	w = serve(d, formPost("/app/account", url.Values{"email": {"ada@example.com"}}, "same-origin", true))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "ada@example.com") || len(a.requested) != 1 || a.requested[0] != "own ada@example.com" {
		t.Fatalf("request: %d %v\n%s", w.Code, a.requested, w.Body)
	}

	for range 2 {
		w := get(d, "/app/account/confirm/"+tok, false)
		if body := w.Body.String(); w.Code != 200 || w.Header().Get("Cache-Control") != "no-store" ||
			!strings.Contains(body, `<form method="post" action="/app/account/confirm">`) || !strings.Contains(body, `name="token" value="`+tok+`"`) {
			t.Fatalf("GET of a confirmation link: %d\n%s", w.Code, body)
		}
	}
	if w := serve(d, formPost("/app/account/confirm", url.Values{"token": {tok}}, "cross-site", false)); w.Code != 403 || a.confirmed != 0 {
		t.Fatalf("cross-site confirmation: %d, %d uses", w.Code, a.confirmed)
	}
	w = serve(d, formPost("/app/account/confirm", url.Values{"token": {tok}}, "same-origin", false))
	if w.Code != 200 || a.confirmed != 1 || !strings.Contains(w.Body.String(), "ada@example.com") {
		t.Fatalf("confirming: %d, %d uses\n%s", w.Code, a.confirmed, w.Body)
	}
	w = serve(d, formPost("/app/account/confirm", url.Values{"token": {tok}}, "same-origin", false))
	if w.Code != 404 || !strings.Contains(w.Body.String(), "used already or has expired") {
		t.Fatalf("a used link: %d\n%s", w.Code, w.Body)
	}
}
