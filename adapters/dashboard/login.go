package dashboard

import (
	"net"
	"net/http"

	"github.com/earshothq/earshot/core"
)

type loginView struct {
	layout
	Email string
	Sent  bool
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

// requestLink emails a sign-in link. The page says the same whether the
// address is known or not.
func (d *Dashboard) requestLink(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	f := parseLogin(form)
	if err == nil {
		err = d.deps.Sessions.RequestLink(r.Context(), f.Email, clientIP(r))
	}
	if err != nil {
		d.render(w, r, statusOf(err), "login", loginView{layout: layout{Title: "Sign in", Problem: core.Message(err)}, Email: f.Email})
		return
	}
	d.render(w, r, http.StatusOK, "login", loginView{layout: layout{Title: "Check your email"}, Email: f.Email, Sent: true})
}

// useLink signs in with a link from an email or the admin console: the
// link is used up, the session cookie set, and the browser sent on to
// the inbox.
func (d *Dashboard) useLink(w http.ResponseWriter, r *http.Request) {
	token, _, err := d.deps.Sessions.SignIn(r.Context(), r.PathValue("token"))
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
	if c, err := r.Cookie(cookieName); err == nil {
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

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
