package dashboard

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// A bulk button pressed with nothing ticked goes back to the view the
// owner was on (its filters and page), which says why nothing changed,
// rather than to an error page of its own that loses the view.
func TestBulkWithNothingSelectedKeepsTheView(t *testing.T) {
	d := newTestDashboard(t, item(1, "t", "a", "https://x.com/1"))
	view := "/app/?before=1700000001000&platform=x&show=unread"
	form := url.Values{"action": {"archive"}, "return": {view}}
	r := httptest.NewRequest("POST", "/app/matches/bulk", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	loc, err := url.Parse(w.Header().Get("Location"))
	if w.Code != http.StatusSeeOther || err != nil || loc.Path != "/app/" {
		t.Fatalf("nothing selected: %d to %q\n%s", w.Code, w.Header().Get("Location"), w.Body)
	}
	q := loc.Query()
	for _, k := range []string{"before", "platform", "show"} {
		if want, _ := url.ParseQuery(strings.TrimPrefix(view, "/app/?")); q.Get(k) != want.Get(k) {
			t.Fatalf("the way back %q lost %s", loc, k)
		}
	}
	page := get(d, loc.String(), true)
	body := page.Body.String()
	if page.Code != 200 || !strings.Contains(body, `<p class="problem" role="alert">Nothing was changed: select at least one match first.</p>`) {
		t.Fatalf("the view after it: %d\n%s", page.Code, body)
	}
	// The page's own way back, for its forms, does not carry the refusal.
	if !strings.Contains(body, `name="return" value="/app/?before=1700000001000&amp;platform=x&amp;show=unread"`) {
		t.Fatalf("the bulk form returns elsewhere:\n%s", body)
	}
	// An address cannot make the page say anything else.
	if body := get(d, "/app/?done=%3Cb%3E", true).Body.String(); strings.Contains(body, `class="problem"`) || strings.Contains(body, `class="notice"`) {
		t.Fatalf("an unknown done= says something:\n%s", body)
	}
}
