package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

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
// a bulk action, names at most 100 match ids. A route that takes more
// says so in bodyLimits.
const maxForm = 64 << 10

// limitBody bounds the request body at n bytes.
func limitBody(next http.Handler, n int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, n)
		next.ServeHTTP(w, r)
	})
}

// cookieName is the session cookie on a plain http site. On an https
// site it is "__Host-" + cookieName: browsers then keep it only if it is
// Secure, for the whole host and no Domain, so a sibling subdomain or a
// plain http page cannot set or shadow it.
const cookieName = "earshot_session"

// sessionCookie returns the name and path of the session cookie.
func (d *Dashboard) sessionCookie() (name, path string) {
	if d.cfg.SecureCookies {
		return "__Host-" + cookieName, "/"
	}
	return cookieName, "/app/"
}

// readCookie returns the session cookie of the request.
func (d *Dashboard) readCookie(r *http.Request) (*http.Cookie, error) {
	name, _ := d.sessionCookie()
	return r.Cookie(name)
}

type sessionKey struct{}

// session returns the session of a request that passed requireSession.
func session(r *http.Request) core.Session {
	s, _ := r.Context().Value(sessionKey{}).(core.Session)
	return s
}

// requireSession lets requests with a live session through and sends
// others to sign in: a page to the sign-in form, a write or a live
// stream an error. A page read with a live session sets the cookie
// again for another idle time: a session ends after that long without
// use, so the cookie set at sign-in must not run out while the owner
// keeps using it. Writes leave the cookie alone (each leads to a page,
// and signing out clears it).
func (d *Dashboard) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := d.readCookie(r)
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
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			d.setCookie(w, c.Value)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
	})
}

func (d *Dashboard) setCookie(w http.ResponseWriter, token string) {
	name, path := d.sessionCookie()
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: token, Path: path, HttpOnly: true, Secure: d.cfg.SecureCookies,
		SameSite: http.SameSiteLaxMode, MaxAge: int(d.deps.Sessions.Idle().Seconds()),
	})
}

func (d *Dashboard) clearCookie(w http.ResponseWriter) {
	name, path := d.sessionCookie()
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: "", Path: path, HttpOnly: true, Secure: d.cfg.SecureCookies,
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

// limitWrites counts every write of a signed-in owner (a change, a key,
// whatever the dashboard can make happen; a test ping, a redelivery and
// a replay where their service sends, limitSends) against one bucket of the owner's on the same ports.RateLimiter as the
// API, at the API's per-minute limit (EARSHOT_RATE_LIMIT_PER_MINUTE).
// The API counts per key, so an owner has no single API bucket to share;
// a bucket of the owner's own keeps the dashboard to what one API key
// may do, whatever the number of sessions, and is counted across
// replicas wherever the API's is. Reading pages is not counted, and
// neither is signing out, which must always work. Past the limit nothing
// is done: the answer is 429 with Retry-After and a page saying when to
// try again. A limiter that fails lets the write through, as the API
// does: better a lost count than a dashboard that cannot save.
func (d *Dashboard) limitWrites(next http.Handler) http.Handler {
	if d.deps.Limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if secs := d.takeWrite(r.Context(), session(r).OwnerID); secs > 0 {
			d.tooManyWrites(w, r, secs)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// limitSends is limitWrites for the routes that send (sendRoutes): the
// service takes their write once it has decided to send (sendTake), so
// that one it refuses counts nothing. Here an owner already past the
// limit is refused before anything is done, as by limitWrites, without
// counting.
func (d *Dashboard) limitSends(next http.Handler) http.Handler {
	if d.deps.Limiter == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		q, err := d.deps.Limiter.Peek(ctx, writesKey(session(r).OwnerID), d.cfg.RateLimit)
		if err != nil {
			d.cfg.Logger.WarnContext(ctx, "rate limiter failed", "err", err)
		} else if !q.Allowed {
			d.tooManyWrites(w, r, q.RetryAfter())
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writesKey names the owner's one bucket of dashboard writes.
func writesKey(ownerID string) string { return "dashboard:owner:" + ownerID }

// takeWrite counts one write of the owner's: 0 when it may go ahead,
// else the seconds until the window ends. A limiter that fails lets the
// write through.
func (d *Dashboard) takeWrite(ctx context.Context, ownerID string) int {
	q, err := d.deps.Limiter.Take(ctx, writesKey(ownerID), d.cfg.RateLimit)
	if err != nil {
		d.cfg.Logger.WarnContext(ctx, "rate limiter failed", "err", err)
		return 0
	}
	if q.Allowed {
		return 0
	}
	return q.RetryAfter()
}

// tooManyWrites answers a write refused past the limit: 429 with
// Retry-After and a page saying when to try again; nothing was done.
func (d *Dashboard) tooManyWrites(w http.ResponseWriter, r *http.Request, secs int) {
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	d.render(w, r, http.StatusTooManyRequests, "error", &errorView{
		layout: layout{Title: "Too many changes", SignedIn: true, Problem: fmt.Sprintf(
			"This was not done: the dashboard takes at most %d changes and sends a minute, and that many were made. Please try again in %d seconds.",
			d.cfg.RateLimit, secs)},
		Message: "Pages can still be read meanwhile; only changes and sends count against the limit."})
}

// sendQuota is the take a route that sends hands its service: one write
// of the owner's (takeWrite), made once the service has decided to send.
type sendQuota struct {
	d     *Dashboard
	owner string
	wait  int // the seconds refused is to say, once the take was refused
}

// sendTake returns the take of the request's owner.
func (d *Dashboard) sendTake(r *http.Request) *sendQuota {
	return &sendQuota{d: d, owner: session(r).OwnerID}
}

func (q *sendQuota) take(ctx context.Context) error {
	if q.d.deps.Limiter == nil {
		return nil
	}
	if q.wait = q.d.takeWrite(ctx, q.owner); q.wait > 0 {
		return core.Errorf(core.KindRateLimited, "the dashboard's limit of %d changes and sends a minute is reached", q.d.cfg.RateLimit)
	}
	return nil
}

// refused answers the request past the limit, as limitWrites does, when
// the take was refused, and reports whether it did.
func (q *sendQuota) refused(w http.ResponseWriter, r *http.Request) bool {
	if q.wait == 0 {
		return false
	}
	q.d.tooManyWrites(w, r, q.wait)
	return true
}
