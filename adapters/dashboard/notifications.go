package dashboard

import (
	"net/http"
	"strconv"
	"time"

	"github.com/earshothq/earshot/core"
)

// notificationsPage is how many notifications the page lists.
const notificationsPage = 50

type notificationView struct {
	ID       string
	Title    string
	Message  string
	Severity string
	Kind     string
	Read     bool
	When     string
	WhenISO  string
	Link     string // the page about its subject
}

type notificationsView struct {
	layout
	Items []notificationView
	// Older: the owner keeps more than the page lists.
	Older bool
}

// unread counts the owner's unread notifications for the navigation; a
// failure shows none rather than failing the page.
func (d *Dashboard) unread(r *http.Request) int {
	if d.deps.Notifications == nil {
		return 0
	}
	n, err := d.deps.Notifications.Unread(r.Context(), session(r).OwnerID)
	if err != nil {
		d.cfg.Logger.WarnContext(r.Context(), "counting unread notifications failed", "err", err)
		return 0
	}
	return n
}

func (d *Dashboard) showNotifications(w http.ResponseWriter, r *http.Request) {
	// One more than the page lists tells whether older ones are kept.
	items, _, err := d.deps.Notifications.List(r.Context(), session(r).OwnerID, notificationsPage+1)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := notificationsView{layout: layout{Title: "Notifications", Nav: "notifications", SignedIn: true}}
	if len(items) > notificationsPage {
		items, v.Older = items[:notificationsPage], true
	}
	v.Notice = doneNotice(r, "notifications")
	if r.URL.Query().Get("done") == "all" { // says how many, from the address's n
		// Only a count is said: an address with anything else there
		// would make the page say what it never did.
		if n, err := strconv.Atoi(r.URL.Query().Get("n")); err == nil && n >= 0 {
			v.Notice = strconv.Itoa(n) + " marked read."
		}
	}
	now := d.cfg.Now()
	for _, n := range items {
		nv := notificationView{ID: n.ID, Title: n.Title, Message: n.Message, Severity: n.Severity, Kind: string(n.Kind),
			Read: n.Read(), When: ago(now, n.CreatedAt), WhenISO: n.CreatedAt.UTC().Format(time.RFC3339)}
		switch n.Kind {
		case core.NotifyAccountHealth:
			nv.Link = "/app/accounts"
		case core.NotifyWebhookOff:
			nv.Link = "/app/webhooks/" + n.SubjectID
		}
		v.Items = append(v.Items, nv)
	}
	d.render(w, r, http.StatusOK, "notifications", &v)
}

func (d *Dashboard) markNotificationRead(w http.ResponseWriter, r *http.Request) {
	if err := d.deps.Notifications.MarkRead(r.Context(), session(r).OwnerID, r.PathValue("id")); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/app/notifications?done=read", http.StatusSeeOther)
}

func (d *Dashboard) markAllNotificationsRead(w http.ResponseWriter, r *http.Request) {
	n, err := d.deps.Notifications.MarkAllRead(r.Context(), session(r).OwnerID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/app/notifications?done=all&n="+strconv.Itoa(n), http.StatusSeeOther)
}
