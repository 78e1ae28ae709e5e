package dashboard

import (
	"net/http"

	"github.com/earshothq/earshot/core"
)

// rowDeleteView is the confirmation of a webhook's or a channel's
// deletion.
type rowDeleteView struct {
	layout
	Base    string // the row's page, below which the form posts
	What    string // "webhook", or the channel's kind: "Slack channel"
	Address string // the webhook's address, or the channel's redacted destination
}

// rowWhat names a row's kind as a page does: "webhook", "Slack channel".
func rowWhat(h core.Webhook) string {
	if h.Kind.IsChannel() {
		return h.Kind.Label() + " channel"
	}
	return "webhook"
}

// confirmDelete asks before deleting, saying what goes with the row.
func (p rowPage) confirmDelete(w http.ResponseWriter, r *http.Request) {
	h, err := p.row(r)
	if err != nil {
		p.d.fail(w, r, err)
		return
	}
	v := rowDeleteView{Base: p.path + h.ID, What: rowWhat(h), Address: h.URL}
	v.layout = layout{Title: "Delete the " + v.What + " " + h.URL, Nav: "webhooks", SignedIn: true}
	p.d.render(w, r, http.StatusOK, "rowdelete", &v)
}

// delete removes the row with its queued deliveries and its log, and
// goes back to the list, which names what was deleted.
func (p rowPage) delete(w http.ResponseWriter, r *http.Request) {
	svc, err := p.svc()
	var h core.Webhook
	if err == nil {
		// Read first, to name it in the list's notice; row refuses
		// another owner's row and one of the other family, as Delete does.
		h, err = p.row(r)
	}
	if err == nil {
		err = svc.Delete(r.Context(), session(r).OwnerID, h.ID)
	}
	if err != nil {
		p.d.fail(w, r, err)
		return
	}
	p.d.setDeleted(w, rowWhat(h)+" "+h.URL)
	http.Redirect(w, r, "/app/webhooks", http.StatusSeeOther)
}
