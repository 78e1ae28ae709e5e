package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// linkSessions signs in with one link token and notes every use of it.
type linkSessions struct {
	fakeSessions
	mu      sync.Mutex
	signIns int
}

func (s *linkSessions) SignIn(_ context.Context, link string) (string, core.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if link != tok || s.signIns > 0 {
		return "", core.Session{}, core.Errorf(core.KindNotFound, "this sign-in link is not valid")
	}
	s.signIns++
	return tok, core.Session{OwnerID: "own"}, nil
}

func serve(d *Dashboard, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	return w
}

func confirmPost(token, site string) *http.Request {
	r := httptest.NewRequest("POST", "/app/login/link", strings.NewReader(url.Values{"token": {token}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", site)
	return r
}

// Opening a sign-in link only shows a button; its POST signs in, and a
// POST from another site (login CSRF) is refused without using the link.
func TestSignInLinkNeedsItsButton(t *testing.T) {
	s := &linkSessions{}
	d, err := New(Config{}, Deps{Sessions: s})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		w := serve(d, httptest.NewRequest("GET", "/app/login/"+tok, nil))
		body := w.Body.String()
		if w.Code != 200 || w.Header().Get("Set-Cookie") != "" || w.Header().Get("Cache-Control") != "no-store" ||
			!strings.Contains(body, `<form class="signin" method="post" action="/app/login/link">`) ||
			!strings.Contains(body, `name="token" value="`+tok+`"`) {
			t.Fatalf("GET of a link: %d %v\n%s", w.Code, w.Header(), body)
		}
	}
	if w := serve(d, confirmPost(tok, "cross-site")); w.Code != 403 || w.Header().Get("Set-Cookie") != "" {
		t.Fatalf("cross-site POST: %d %v", w.Code, w.Header())
	}
	if s.signIns != 0 {
		t.Fatalf("the link was used %d times before its button was pressed", s.signIns)
	}
	w := serve(d, confirmPost(tok, "same-origin"))
	if w.Code != 303 || w.Header().Get("Location") != "/app/" || !strings.HasPrefix(w.Header().Get("Set-Cookie"), cookieName+"="+tok) {
		t.Fatalf("pressing the button: %d %v", w.Code, w.Header())
	}
	if w := serve(d, confirmPost(tok, "same-origin")); w.Code != 404 || !strings.Contains(w.Body.String(), "used already or has expired") {
		t.Fatalf("a used link: %d\n%s", w.Code, w.Body)
	}
}

// On an https site the session cookie is __Host- prefixed, so it is
// Secure, for the whole host and no other; it is read back under that
// name. On plain http it keeps its name and is scoped to /app/.
func TestSessionCookieName(t *testing.T) {
	for _, tc := range []struct {
		secure bool
		name   string
		attrs  []string
	}{
		{true, "__Host-earshot_session", []string{"Path=/;", "HttpOnly", "Secure", "SameSite=Lax"}},
		{false, "earshot_session", []string{"Path=/app/;", "HttpOnly", "SameSite=Lax"}},
	} {
		d, err := New(Config{SecureCookies: tc.secure}, Deps{Sessions: &linkSessions{}})
		if err != nil {
			t.Fatal(err)
		}
		sc := serve(d, confirmPost(tok, "same-origin")).Header().Get("Set-Cookie")
		if !strings.HasPrefix(sc, tc.name+"=") || strings.Contains(sc, "Domain") || strings.Contains(sc, "Secure") != tc.secure {
			t.Errorf("secure %v: Set-Cookie %s", tc.secure, sc)
		}
		for _, a := range tc.attrs {
			if !strings.Contains(sc+";", a) {
				t.Errorf("secure %v: Set-Cookie %s lacks %s", tc.secure, sc, a)
			}
		}
		// Signing out finds the session under that name and clears it.
		r := httptest.NewRequest("POST", "/app/logout", nil)
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.AddCookie(&http.Cookie{Name: tc.name, Value: tok})
		w := serve(d, r)
		if sc := w.Header().Get("Set-Cookie"); w.Code != 200 || !strings.HasPrefix(sc, tc.name+"=;") || !strings.Contains(sc, "Max-Age=0") {
			t.Errorf("secure %v: signing out: %d, Set-Cookie %s", tc.secure, w.Code, sc)
		}
	}
}

// A session lasts EARSHOT_SESSION_IDLE without use, not from sign-in:
// every page read with it renews the cookie's lifetime, so an owner who
// keeps using the dashboard is not signed out by the browser when the
// cookie set at sign-in runs out. Signing out still clears it.
func TestSessionCookieRenewedOnUse(t *testing.T) {
	for _, secure := range []bool{false, true} {
		d, err := New(Config{SecureCookies: secure}, Deps{Sessions: &linkSessions{}, Inbox: fakeInbox{}, Phrases: fakePhrases{}})
		if err != nil {
			t.Fatal(err)
		}
		name, _ := d.sessionCookie()
		r := httptest.NewRequest("GET", "/app/", nil)
		r.AddCookie(&http.Cookie{Name: name, Value: tok})
		w := serve(d, r)
		var renewed *http.Cookie
		for _, c := range w.Result().Cookies() {
			if c.Name == name {
				renewed = c
			}
		}
		if w.Code != 200 || renewed == nil || renewed.Value != tok || renewed.MaxAge != int(time.Hour.Seconds()) ||
			!renewed.HttpOnly || renewed.Secure != secure || renewed.SameSite != http.SameSiteLaxMode {
			t.Fatalf("secure %v: a signed-in page: %d, cookie %+v", secure, w.Code, renewed)
		}
		for _, path := range []string{"/app/logout", "/app/logout/everywhere"} {
			r := httptest.NewRequest("POST", path, nil)
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			r.AddCookie(&http.Cookie{Name: name, Value: tok})
			cs := serve(d, r).Result().Cookies()
			if len(cs) != 1 || cs[0].Name != name || cs[0].MaxAge != -1 {
				t.Fatalf("secure %v: %s sets %+v, want the session cookie cleared only", secure, path, cs)
			}
		}
	}
}
