package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/earshothq/earshot/core"
)

// AlertsOffService checks and uses the links in alert emails that turn
// the owner's alert emails off. app.Alerts is one.
type AlertsOffService interface {
	// CheckOffLink reports whether token is one of those links';
	// KindNotFound if not. It changes nothing.
	CheckOffLink(token string) error
	// TurnOffByLink turns alert emails off for the owner token names, as
	// choosing "off" on the Account page does, and nothing else; again
	// is harmless. KindNotFound for a token that is not a link's.
	TurnOffByLink(ctx context.Context, token string) error
}

// alertsOffPerMinute bounds the stop-link POSTs one client (clientip.Key)
// may make a minute, as sign-in requests are bounded per client. It is
// higher than sign-in's ten: the one-click POSTs of a mailbox provider
// (RFC 8058) come from its servers, for every owner with an address
// there, through few addresses.
const alertsOffPerMinute = 30

type alertsOffView struct {
	layout
	Token string // the link opened: the page offers its button
	Off   bool   // alerts were turned off
}

// showAlertsOff answers a stop link from an alert email with a button
// that turns alert emails off. Opening the link changes nothing (RFC
// 8058 3.1): mail scanners and previews open links, and must not stop
// an owner's alerts. A link that is not one is a 404, as any page that
// is not there.
func (d *Dashboard) showAlertsOff(w http.ResponseWriter, r *http.Request) {
	token := r.PathValue("token")
	if d.deps.AlertsOff == nil || d.deps.AlertsOff.CheckOffLink(token) != nil {
		d.badAlertsOffLink(w, r)
		return
	}
	d.render(w, r, http.StatusOK, "alertsoff", &alertsOffView{layout: layout{Title: "Stop alert emails"}, Token: token})
}

// alertsOff turns alert emails off, for the page's button and for a
// mailbox provider's one-click POST (RFC 8058: a body of
// List-Unsubscribe=One-Click, which says nothing the path does not, so
// it is not read). Both get 200 and the page saying so.
//
// This is the one dashboard write the cross-origin protection lets
// through (see routes): the one-click POST comes from the provider's
// servers, not from a page of ours, and it carries no cookie. Its
// credential is the token in the path, which only the owner's mailbox
// holds; a request from another site can do with it no more than its
// holder could, and without it nothing. Every other write stays refused
// from another origin.
func (d *Dashboard) alertsOff(w http.ResponseWriter, r *http.Request) {
	if d.deps.AlertsOff == nil {
		d.badAlertsOffLink(w, r)
		return
	}
	if !d.takeAlertsOff(w, r) {
		return
	}
	token := r.PathValue("token")
	if d.deps.AlertsOff.CheckOffLink(token) != nil {
		d.badAlertsOffLink(w, r)
		return
	}
	err := d.deps.AlertsOff.TurnOffByLink(r.Context(), token)
	switch {
	case core.IsKind(err, core.KindNotFound):
		// The link is one of ours and its owner is gone (an operator
		// removed them): nobody is left to mail, so the emails are off,
		// as the page says, and a provider's one-click POST gets the
		// 2xx RFC 8058 expects, not "copy the whole link".
	case err != nil:
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "alertsoff", &alertsOffView{layout: layout{Title: "Alert emails are off"}, Off: true})
}

// takeAlertsOff counts the request against its client's bound and
// answers 429 past it. A limiter that fails lets the request through,
// as limitWrites does.
func (d *Dashboard) takeAlertsOff(w http.ResponseWriter, r *http.Request) bool {
	if d.deps.Limiter == nil {
		return true
	}
	q, err := d.deps.Limiter.Take(r.Context(), "alerts-off:"+clientIP(r), alertsOffPerMinute)
	if err != nil {
		d.cfg.Logger.WarnContext(r.Context(), "rate limiter failed", "err", err)
		return true
	}
	if q.Allowed {
		return true
	}
	secs := q.RetryAfter()
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	d.render(w, r, http.StatusTooManyRequests, "error", &errorView{layout: layout{Title: "Too many requests"},
		Message: fmt.Sprintf("Nothing was changed: too many requests came from your address. Please try again in %d seconds.", secs)})
	return false
}

func (d *Dashboard) badAlertsOffLink(w http.ResponseWriter, r *http.Request) {
	d.render(w, r, http.StatusNotFound, "error", &errorView{layout: layout{Title: "Link not valid"},
		Message: "This link does not turn alert emails off: copy the whole link from the email, or choose how often alerts come on the Account page."})
}
