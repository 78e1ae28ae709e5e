package dashboard

import (
	"encoding/base64"
	"net/http"
	"unicode/utf8"
)

// flashCookieName carries, from a deletion to the list it redirects to,
// what was deleted: the row is gone, so the list cannot look it up, and
// the address bar may not name it (an address could then make the page
// say anything). On an https site it is "__Host-" + flashCookieName, as
// the session cookie is, so no other site or subdomain can set it.
const flashCookieName = "earshot_flash"

// maxFlash bounds what the cookie names, in bytes: a webhook's longest
// address (core.MaxWebhookURLLen) and its kind, well within a cookie.
const maxFlash = 2100

func (d *Dashboard) flashCookie() (name, path string) { return d.shortCookie(flashCookieName) }

// shortCookie is the name and path of a short-lived cookie of the
// dashboard's: on an https site "__Host-"+name for the whole site, so no
// other site or subdomain can set it (the prefix requires path /).
func (d *Dashboard) shortCookie(name string) (string, string) {
	if d.cfg.SecureCookies {
		return "__Host-" + name, "/"
	}
	return name, "/app/"
}

// setDeleted tells the next page of the list that subject ("webhook
// https://…", "Slack channel hooks.slack.com/…") was deleted. A subject
// too long for the cookie is left unnamed.
func (d *Dashboard) setDeleted(w http.ResponseWriter, subject string) {
	if len(subject) > maxFlash {
		return
	}
	name, path := d.flashCookie()
	http.SetCookie(w, &http.Cookie{Name: name, Value: base64.RawURLEncoding.EncodeToString([]byte(subject)), Path: path,
		MaxAge: 60, HttpOnly: true, Secure: d.cfg.SecureCookies, SameSite: http.SameSiteLaxMode})
}

// takeDeleted returns what setDeleted named, once: the cookie is cleared
// in the answer. A value it did not write names nothing.
func (d *Dashboard) takeDeleted(w http.ResponseWriter, r *http.Request) string {
	name, path := d.flashCookie()
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: path, MaxAge: -1, HttpOnly: true, Secure: d.cfg.SecureCookies,
		SameSite: http.SameSiteLaxMode})
	b, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(b) == 0 || len(b) > maxFlash || !utf8.Valid(b) {
		return ""
	}
	return string(b)
}
