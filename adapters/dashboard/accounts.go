package dashboard

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
)

// accountView is one platform's account with the view model exactly as
// core/health gives it, and what the page offers for its action.
type accountView struct {
	AccountID      string
	Platform       string
	State          string
	Issue          string // empty when healthy or not connected
	Title          string
	Remedy         string
	Action         string
	ActionLabel    string
	RequiresAction bool
	Challenge      bool // the action opens a challenge page and resolve clears it
	Checked        string
	CheckedISO     string
	RetryAfter     string
	// StateLabel is the state as the page words it: the view's own state
	// in words ("action required"), except that an account no helper has
	// reported on yet is never called healthy (Unreported) and a reddit
	// the server reads without an account is not "not connected".
	StateLabel string
	Unreported bool
	// ServerReads: the server reads this platform itself (reddit), so a
	// missing account asks nothing of the owner.
	ServerReads bool
	// Upload offers the cookie-jar form, labelled UploadLabel, open when
	// the state asks for cookies (UploadOpen); JarError is the refusal of
	// the last upload.
	Upload      bool
	UploadLabel string
	UploadOpen  bool
	JarError    string
	// LastMatch is when the newest match on the platform was made: on x
	// and facebook, the last time a helper sent posts that matched.
	LastMatch    string
	LastMatchISO string
}

// communityView is one of the owner's watched communities as the
// server last read it.
type communityView struct {
	Community   string
	Phrases     int // the owner's listening phrases that watch it
	Via         string
	LastRead    string
	LastReadISO string
	Behind      string
	ArchiveLag  string
	LastError   string
	ErrorWhen   string
	ErrorISO    string
}

// actionLabels name each action of core/health on its button or link.
var actionLabels = map[health.Action]string{
	health.Connect:        "Connect",
	health.Reconnect:      "Reconnect",
	health.Wait:           "Wait",
	health.UseProxy:       "Use a proxy",
	health.OpenChallenge:  "Open the challenge",
	health.LoginInBrowser: "Log in in a browser",
	health.Appeal:         "Appeal",
	health.Rejoin:         "Rejoin",
	health.NoAction:       "None",
}

// platformHome is where a person completes a challenge or logs in.
var platformHome = map[core.Platform]string{
	core.Reddit:   "https://www.reddit.com/",
	core.X:        "https://x.com/",
	core.Facebook: "https://www.facebook.com/",
}

type accountsView struct {
	layout
	Accounts    []accountView
	Homes       map[string]string
	Communities []communityView
	// JarErrors are upload refusals by platform, shown on its card.
	JarErrors map[string]string
	Helper    helperView
}

type challengeView struct {
	layout
	Account accountView
	Home    string
}

func (d *Dashboard) accountView(s health.Status) accountView {
	v := accountView{AccountID: s.AccountID, Platform: string(s.Platform), State: string(s.State), Issue: string(s.Issue),
		Action: string(s.Action), ActionLabel: actionLabels[s.Action], RequiresAction: s.RequiresAction,
		Checked: ago(d.cfg.Now(), s.LastCheckedAt)}
	if s.Info != nil {
		v.Title, v.Remedy, v.Challenge = s.Info.Title, s.Info.Remedy, s.Info.Resolvable && s.Action == health.OpenChallenge
	}
	if !s.LastCheckedAt.IsZero() {
		v.CheckedISO = s.LastCheckedAt.UTC().Format(time.RFC3339)
	}
	if !s.RetryAfter.IsZero() && s.RetryAfter.After(d.cfg.Now()) {
		v.RetryAfter = s.RetryAfter.UTC().Format("15:04 UTC")
	}
	v.StateLabel = strings.ReplaceAll(v.State, "_", " ")
	if s.State == health.Healthy && s.LastCheckedAt.IsZero() {
		v.StateLabel, v.Unreported = "no report yet", true
	}
	v.ServerReads = s.Platform == core.Reddit
	if v.ServerReads && s.State == health.NotConnected {
		// Reddit phrases need no account: connecting one is optional.
		v.RequiresAction = false
		v.StateLabel = "read by the server"
	}
	if d.deps.Jars != nil {
		v.Upload, v.UploadLabel = true, "Replace the cookies"
		if s.State == health.NotConnected {
			v.UploadLabel = "Connect"
		}
		// The form is always there; it opens by itself where the state
		// asks for a (new) session, except for reddit's optional account.
		v.UploadOpen = !(v.ServerReads && s.State == health.NotConnected) &&
			(s.Action == health.Connect || s.Action == health.Reconnect || s.Action == health.LoginInBrowser)
	}
	return v
}

// lastMatch returns when the owner's newest match on p was made.
func (d *Dashboard) lastMatch(ctx context.Context, ownerID string, p core.Platform) (time.Time, error) {
	page, err := d.deps.Inbox.List(ctx, ownerID, ports.InboxQuery{Limit: 1, Platform: p})
	if err != nil || len(page.Items) == 0 {
		return time.Time{}, err
	}
	return page.Items[0].Match.CreatedAt, nil
}

// communities returns the health of the communities the owner's
// listening reddit phrases watch, by name; the rows of other owners'
// communities are left out.
func (d *Dashboard) communities(ctx context.Context, ownerID string) ([]communityView, error) {
	if d.deps.Reddit == nil {
		return nil, nil
	}
	ps, err := d.deps.Phrases.List(ctx, ownerID, ports.PhraseFilter{Platform: core.Reddit, Status: core.Listening})
	if err != nil {
		return nil, err
	}
	mine := map[string]int{}
	for _, p := range ps {
		if p.Platform == core.Reddit && p.Status == core.Listening {
			mine[p.Community]++
		}
	}
	if len(mine) == 0 {
		return nil, nil
	}
	rows, err := d.deps.Reddit.Communities(ctx)
	if err != nil {
		return nil, err
	}
	now := d.cfg.Now()
	var out []communityView
	for _, r := range rows {
		n, ok := mine[r.Community]
		if !ok {
			continue
		}
		c := communityView{Community: r.Community, Phrases: n, Via: r.Via, LastRead: ago(now, r.LastSuccessAt),
			Behind: span(r.Behind), ArchiveLag: span(r.ArchiveLag), LastError: r.LastError}
		if c.Via == "" {
			c.Via = "not read yet"
		}
		if !r.LastSuccessAt.IsZero() {
			c.LastReadISO = r.LastSuccessAt.UTC().Format(time.RFC3339)
		}
		if r.LastError != "" {
			c.ErrorWhen, c.ErrorISO = ago(now, r.LastErrorAt), r.LastErrorAt.UTC().Format(time.RFC3339)
		}
		out = append(out, c)
	}
	return out, nil
}

// span words a lag as the admin status prints it, "-" for none.
func span(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return d.Round(time.Second).String()
}

func (d *Dashboard) renderAccounts(w http.ResponseWriter, r *http.Request, status int, v accountsView) {
	list, err := d.deps.Accounts.Accounts(r.Context(), session(r).OwnerID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.layout.Title, v.layout.Nav, v.layout.SignedIn = "Accounts", "accounts", true
	v.Homes = map[string]string{}
	for p, u := range platformHome {
		v.Homes[string(p)] = u
	}
	for _, s := range list {
		a := d.accountView(s)
		a.JarError = v.JarErrors[a.Platform]
		a.UploadOpen = a.UploadOpen || a.JarError != ""
		if a.AccountID != "" {
			at, err := d.lastMatch(r.Context(), session(r).OwnerID, s.Platform)
			if err != nil {
				d.fail(w, r, err)
				return
			}
			a.LastMatch = ago(d.cfg.Now(), at)
			if !at.IsZero() {
				a.LastMatchISO = at.UTC().Format(time.RFC3339)
			}
		}
		v.Accounts = append(v.Accounts, a)
	}
	if v.Communities, err = d.communities(r.Context(), session(r).OwnerID); err != nil {
		d.fail(w, r, err)
		return
	}
	if err := d.helperPanel(r, &v.Helper); err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, status, "accounts", &v)
}

func (d *Dashboard) showAccounts(w http.ResponseWriter, r *http.Request) {
	d.renderAccounts(w, r, http.StatusOK, accountsView{layout: layout{Notice: doneNotice(r, "accounts")}})
}

// showChallenge is the page the open_challenge action opens: it sends
// the person to the platform and, once they say they are done, tells the
// accounts page that opened it (static/app.js).
func (d *Dashboard) showChallenge(w http.ResponseWriter, r *http.Request) {
	list, err := d.deps.Accounts.Accounts(r.Context(), session(r).OwnerID)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	i := slices.IndexFunc(list, func(s health.Status) bool { return s.AccountID != "" && s.AccountID == r.PathValue("id") })
	if i < 0 {
		d.fail(w, r, core.Errorf(core.KindNotFound, "no such account"))
		return
	}
	a := d.accountView(list[i])
	title := "Complete the " + a.Platform + " challenge"
	if !a.Challenge {
		title = "No " + a.Platform + " challenge"
	}
	d.render(w, r, http.StatusOK, "challenge", &challengeView{layout: layout{Title: title, Nav: "accounts", SignedIn: true},
		Account: a, Home: platformHome[list[i].Platform]})
}

// resolveAccount clears a completed challenge; the server decides, the
// page's lock on the button is only a help. Nothing to clear is a 409
// shown on the accounts page.
func (d *Dashboard) resolveAccount(w http.ResponseWriter, r *http.Request) {
	if _, err := d.deps.Accounts.Resolve(r.Context(), session(r).OwnerID, r.PathValue("id")); err != nil {
		if core.IsKind(err, core.KindConflict) {
			v := accountsView{}
			v.Problem = core.Message(err)
			d.renderAccounts(w, r, http.StatusConflict, v)
			return
		}
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/app/accounts?done=resolved", http.StatusSeeOther)
}
