package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/earshothq/earshot/core"
)

// contentSecurityPolicy allows our own scripts, styles and images only:
// no inline script or style, no framing, forms posting home only.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// maxForm is the largest form body the dashboard reads; its biggest form,
// a bulk action, names at most 100 match ids.
const maxForm = 64 << 10

func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		next.ServeHTTP(w, r)
	})
}

// cookieName is the session cookie.
const cookieName = "earshot_session"

type sessionKey struct{}

// session returns the session of a request that passed requireSession.
func session(r *http.Request) core.Session {
	s, _ := r.Context().Value(sessionKey{}).(core.Session)
	return s
}

// requireSession lets requests with a live session through and sends
// others to sign in: a page to the sign-in form, a write or a live
// stream an error.
func (d *Dashboard) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(cookieName)
		var s core.Session
		if err == nil {
			s, err = d.deps.Sessions.Authenticate(r.Context(), c.Value)
		}
		if err != nil {
			if !core.IsKind(err, core.KindUnauthorized) && !errors.Is(err, http.ErrNoCookie) {
				d.fail(w, r, err)
				return
			}
			if c != nil {
				d.clearCookie(w)
			}
			if r.Method == http.MethodGet && r.URL.Path != "/app/events" {
				http.Redirect(w, r, "/app/login", http.StatusSeeOther)
				return
			}
			d.render(w, r, http.StatusUnauthorized, "login", loginView{layout: layout{Title: "Sign in", Problem: "Your session has ended. Sign in again."}})
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
	})
}

func (d *Dashboard) setCookie(w http.ResponseWriter, token string) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: token, Path: "/app/", HttpOnly: true, Secure: d.cfg.SecureCookies,
		SameSite: http.SameSiteLaxMode, MaxAge: int(d.deps.Sessions.Idle().Seconds()),
	})
}

func (d *Dashboard) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName, Value: "", Path: "/app/", HttpOnly: true, Secure: d.cfg.SecureCookies,
		SameSite: http.SameSiteLaxMode, MaxAge: -1,
	})
}

// crossOrigin answers a write from another origin; nothing was changed.
func (d *Dashboard) crossOrigin(w http.ResponseWriter, r *http.Request) {
	d.render(w, r, http.StatusForbidden, "error", errorView{layout: layout{Title: "Refused"},
		Message: "This request came from another site, so it was refused and nothing was changed."})
}

// returnTo reads where a form asks to go back to, keeping it on the
// dashboard so a form cannot send the browser elsewhere.
func returnTo(v string, fallback string) string {
	u, err := url.Parse(v)
	if v == "" || err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || len(v) < 5 || v[:5] != "/app/" || (len(v) > 1 && v[1] == '/') {
		return fallback
	}
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' || v[i] < ' ' {
			return fallback
		}
	}
	return v
}
