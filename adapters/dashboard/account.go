package dashboard

import (
	"context"
	"net/http"
	"strconv"

	"github.com/earshothq/earshot/core"
)

// AlertScheduleService reads and sets an owner's alert schedule.
// app.AlertSchedules is one.
type AlertScheduleService interface {
	Schedule(ctx context.Context, ownerID string) (core.AlertSchedule, error)
	Set(ctx context.Context, ownerID, frequency string, hour int, zone string) (core.AlertSchedule, error)
}

// alertForm is the Account page's alert frequency form.
type alertForm struct {
	// Current is the owner's schedule, which the page says is in force;
	// Schedule is what the form shows: the owner's, or what was asked
	// for and refused.
	Current  core.AlertSchedule
	Schedule core.AlertSchedule
	Problem  string // why what was asked for was refused
	Saved    bool
}

// Frequencies are the choices of the form, in menu order.
func (alertForm) Frequencies() []core.AlertFrequency {
	return []core.AlertFrequency{core.AlertAtOnce, core.AlertHourly, core.AlertDaily, core.AlertOff}
}

// Hours are the hours a daily digest may go out at.
func (alertForm) Hours() []int {
	h := make([]int, 24)
	for i := range h {
		h[i] = i
	}
	return h
}

type addressView struct {
	layout
	Email    string // the owner's address now
	NewEmail string // the address asked for
	Sent     bool   // a confirmation link went to NewEmail
	// Token is the confirmation link opened: the page then only asks to
	// press the button that applies it.
	Token   string
	Changed bool
	Told    bool // on Changed: the notice to the old address was sent
	// Alerts is the alert frequency form; nil leaves it out.
	Alerts *alertForm
}

// showAccount shows the owner's address and a form for a new one.
func (d *Dashboard) showAccount(w http.ResponseWriter, r *http.Request) {
	d.renderAccount(w, r, http.StatusOK, addressView{})
}

// requestAddress sends a confirmation link to a new address; the address
// changes only when that link is opened.
func (d *Dashboard) requestAddress(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := addressView{NewEmail: form.Get("email")}
	if err := d.deps.Addresses.Request(r.Context(), session(r).OwnerID, v.NewEmail); err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		if core.IsKind(err, core.KindRateLimited) {
			// The service counts an owner's confirmation mails in
			// one-minute windows and does not say when this one ends.
			w.Header().Set("Retry-After", "60")
		}
		v.Problem = core.Message(err)
		d.renderAccount(w, r, statusOf(err), v)
		return
	}
	v.Sent = true
	d.renderAccount(w, r, http.StatusOK, v)
}

func (d *Dashboard) renderAccount(w http.ResponseWriter, r *http.Request, status int, v addressView) {
	o, err := d.deps.Addresses.Owner(r.Context(), session(r).OwnerID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Email = o.Email
	if d.deps.AlertSchedules != nil {
		// Read even after a change: a refused one left the owner's
		// schedule as it was, and the page must say that one.
		sched, err := d.deps.AlertSchedules.Schedule(r.Context(), session(r).OwnerID)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		if v.Alerts == nil {
			v.Alerts = &alertForm{Schedule: sched}
		}
		v.Alerts.Current = sched
	}
	v.layout.Title, v.layout.Nav, v.layout.SignedIn = "Account", "account", true
	d.render(w, r, status, "account", &v)
}

// setAlertSchedule changes how often the owner's alert emails go out.
func (d *Dashboard) setAlertSchedule(w http.ResponseWriter, r *http.Request) {
	if d.deps.AlertSchedules == nil {
		d.notFound(w, r)
		return
	}
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	asked := core.AlertSchedule{Frequency: core.AlertFrequency(form.Get("frequency")), Zone: form.Get("zone")}
	hour := 0
	if h := form.Get("hour"); h != "" && asked.Frequency == core.AlertDaily {
		if hour, err = strconv.Atoi(h); err != nil {
			hour = -1 // refused below with the hours allowed
		}
	}
	asked.Hour = hour
	sched, err := d.deps.AlertSchedules.Set(r.Context(), session(r).OwnerID, form.Get("frequency"), hour, form.Get("zone"))
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		d.renderAccount(w, r, statusOf(err), addressView{Alerts: &alertForm{Schedule: asked, Problem: core.Message(err)}})
		return
	}
	d.renderAccount(w, r, http.StatusOK, addressView{Alerts: &alertForm{Schedule: sched, Saved: true}})
}

// showAddressLink answers a confirmation link with a button that applies
// it. Opening the link changes nothing, so a mail scanner fetching it or
// another site sending a visitor to it changes no address; the button's
// POST is a write the cross-origin protection covers.
func (d *Dashboard) showAddressLink(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	d.render(w, r, http.StatusOK, "account", &addressView{layout: layout{Title: "Confirm your new address"}, Token: r.PathValue("token")})
}

// confirmAddress applies the change of a confirmation link. The link is
// the proof: whoever reads the new address's mail confirms it, signed in
// or not, on any browser.
func (d *Dashboard) confirmAddress(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	o, told, err := d.deps.Addresses.Confirm(r.Context(), form.Get("token"))
	switch {
	case core.IsKind(err, core.KindNotFound):
		d.render(w, r, http.StatusNotFound, "error", &errorView{layout: layout{Title: "Link not valid"},
			Message: "This link was used already or has expired. Ask for a new one on the Account page."})
		return
	case err != nil:
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "account", &addressView{layout: layout{Title: "Address changed"}, Email: o.Email, Changed: true, Told: told})
}
