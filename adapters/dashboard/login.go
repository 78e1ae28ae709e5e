package dashboard

import (
	"net/http"

	"github.com/earshothq/earshot/clientip"
	"github.com/earshothq/earshot/core"
)

type loginView struct {
	layout
	Email string
	Sent  bool
	// Token is the sign-in link opened: the page then only asks to
	// press the button that signs in with it.
	Token string
}

func (d *Dashboard) rootRedirect(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/app/", http.StatusSeeOther)
}

func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request) {
	d.render(w, r, http.StatusNotFound, "error", errorView{layout: layout{Title: "Not found"}, Message: "There is no page here."})
}

func (d *Dashboard) showLogin(w http.ResponseWriter, r *http.Request) {
	d.render(w, r, http.StatusOK, "login", loginView{layout: layout{Title: "Sign in"}})
}

// requestLink asks for a sign-in link by email. The page says the same
// whether the address is known or not, and whether or not an email goes
// out: the service bounds the emails sent, not the requests answered.
func (d *Dashboard) requestLink(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	f := parseLogin(form)
	if err == nil {
		err = d.deps.Sessions.RequestLink(r.Context(), f.Email, clientIP(r))
	}
	if err != nil {
		if core.IsKind(err, core.KindRateLimited) {
			// The service counts an address's requests in one-minute
			// windows and does not say when this one ends: a minute is
			// the longest wait.
			w.Header().Set("Retry-After", "60")
		}
		d.render(w, r, d.statusLogged(r, err), "login", loginView{layout: layout{Title: "Sign in", Problem: core.Message(err)}, Email: f.Email})
		return
	}
	d.render(w, r, http.StatusOK, "login", loginView{layout: layout{Title: "Check your email"}, Email: f.Email, Sent: true})
}

// showLink answers a sign-in link from an email or the admin console
// with a button that signs in. Opening the link changes nothing, so
// another site sending a visitor to someone else's link signs no one in
// (login CSRF); the button's POST is a write the cross-origin protection
// covers.
func (d *Dashboard) showLink(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	d.render(w, r, http.StatusOK, "login", loginView{layout: layout{Title: "Sign in"}, Token: r.PathValue("token")})
}

// useLink signs in with the token of a link: the link is used up, the
// session cookie set, and the browser sent on to the inbox.
func (d *Dashboard) useLink(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	token, _, err := d.deps.Sessions.SignIn(r.Context(), form.Get("token"))
	if err != nil {
		if !core.IsKind(err, core.KindNotFound) {
			d.fail(w, r, err)
			return
		}
		d.render(w, r, http.StatusNotFound, "login", loginView{layout: layout{Title: "Sign in",
			Problem: "This sign-in link was used already or has expired. Ask for a new one below."}})
		return
	}
	d.setCookie(w, token)
	http.Redirect(w, r, "/app/", http.StatusSeeOther)
}

func (d *Dashboard) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := d.readCookie(r); err == nil {
		if err := d.deps.Sessions.SignOut(r.Context(), c.Value); err != nil {
			d.fail(w, r, err)
			return
		}
	}
	d.clearCookie(w)
	d.render(w, r, http.StatusOK, "login", loginView{layout: layout{Title: "Signed out", Notice: "You are signed out."}})
}

func (d *Dashboard) signOutEverywhere(w http.ResponseWriter, r *http.Request) {
	n, err := d.deps.Sessions.SignOutEverywhere(r.Context(), session(r).OwnerID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.clearCookie(w)
	msg := "You are signed out on every browser."
	if n == 1 {
		msg = "You are signed out. This was your only session."
	}
	d.render(w, r, http.StatusOK, "login", loginView{layout: layout{Title: "Signed out", Notice: msg}})
}

// clientIP is the name sign-in requests are counted under, the one
// every edge of the server uses (clientip.Key): an IPv4 address, or an
// IPv6 address's /64, which one client holds whole and may pick any
// address of; of the connection or, behind a trusted proxy, of the
// client the proxy names.
func clientIP(r *http.Request) string { return clientip.Key(r) }
