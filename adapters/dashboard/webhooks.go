package dashboard

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// webhookView is a webhook as its pages show it.
type webhookView struct {
	ID        string
	URL       string
	MinScore  int
	Platforms string
	Active    bool
	Reason    string // why the service switched it off; empty otherwise
	Failures  int
	Created   string
	// OldSecretUntil is when the secret the last rotation replaced stops
	// signing, while it still does; empty otherwise.
	OldSecretUntil string
}

// platformOption is one platform checkbox.
type platformOption struct {
	Value   string
	Checked bool
}

type webhooksView struct {
	layout
	Gated   bool   // the plan has no webhooks
	GateWhy string // the plan's own words
	// Rows are the owner's webhooks and channels; on a plan without
	// webhooks, those made before the limit went to 0, shown with their
	// switch and deletion only.
	Rows      []destinationView
	Form      webhookForm
	Platforms []platformOption
	Errors    map[string]string
	NewSecret string // the signing secret of the webhook just made, shown once
	NewURL    string
	// ChannelForms are the forms adding a channel of each kind; none
	// without a channel service.
	ChannelForms []channelFormView
}

type deliveryView struct {
	ID        string
	Event     string
	Trigger   string
	Status    string
	Tries     int
	Answer    string // the receiver's HTTP status, or "none"
	Reason    string
	Created   string
	Last      string
	Next      string
	CanRedo   bool
	CreatedAt string
}

type webhookPageView struct {
	layout
	rowLog
	Hook      webhookView
	Form      webhookForm
	Platforms []platformOption
	Errors    map[string]string
	NewSecret string // the secret a rotation just made, shown once
}

// rowLog is what a webhook's page and a channel's page share: a channel
// is a webhook row of another kind, with the same test, replay and
// delivery log (the templates' "replayform" and "deliverylog").
type rowLog struct {
	Base string // the page's path, which its forms post below
	// Gated is set on a plan without webhooks, which refuses the test,
	// the redelivery, the replay and the rotation: the page offers only
	// what the owner may still do with a row made before.
	Gated      bool
	Deliveries []deliveryView
	Test       *testView
	Replay     replayForm
	ReplayMax  int // core.MaxReplay
}

// fill sets the shared parts of the page of row h, whose newest
// deliveries are ds, shown at now.
func (l *rowLog) fill(base string, h core.Webhook, ds []core.Delivery, now time.Time) {
	l.Base, l.ReplayMax = base, core.MaxReplay
	if l.Replay.From == "" && l.Replay.To == "" {
		// The last day, to the minute: what an outage overnight left.
		l.Replay.From = now.UTC().Add(-24 * time.Hour).Format(replayLayouts[0])
	}
	for j, dl := range ds {
		if j == core.DeliveryLogSize {
			break
		}
		dv := deliveryView{ID: dl.ID, Event: dl.Event, Trigger: string(dl.Trigger), Status: string(dl.Status), Tries: dl.Tries,
			Answer: "none", Reason: dl.Error, Created: ago(now, dl.CreatedAt), Last: ago(now, dl.LastAttemptAt),
			CreatedAt: dl.CreatedAt.UTC().Format(time.RFC3339),
			CanRedo:   !l.Gated && h.Active && dl.Trigger != core.TriggerPing && dl.Status.Final()}
		if dl.ResponseStatus != 0 {
			dv.Answer = strconv.Itoa(dl.ResponseStatus)
		}
		if dl.Status == core.DeliveryQueued && !dl.NextAttemptAt.IsZero() {
			dv.Next = dl.NextAttemptAt.UTC().Format("15:04:05 UTC")
		}
		l.Deliveries = append(l.Deliveries, dv)
	}
}

// rowService is what the shared actions of a webhook's or a channel's
// page ask of its service. Test, Retry and Replay call take once they
// have decided to send (sendTake).
type rowService interface {
	Test(ctx context.Context, ownerID, id string, take func(context.Context) error) (ports.WebhookResult, error)
	Retry(ctx context.Context, ownerID, rowID, deliveryID string, take func(context.Context) error) (core.Delivery, error)
	Replay(ctx context.Context, ownerID, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error)
	Delete(ctx context.Context, ownerID, id string) error
}

// rowShown is what a shared action leaves for its page to show.
type rowShown struct {
	layout
	rowLog
	Errors map[string]string
}

// rowPage is one family of pages, webhooks' or channels', for the
// actions both have: the switch, the test, the redelivery, the replay
// and the deletion.
type rowPage struct {
	d    *Dashboard
	path string // "/app/webhooks/" or "/app/channels/"
	svc  func() (rowService, error)
	show func(w http.ResponseWriter, r *http.Request, status int, v rowShown)
	// activate switches the row the path names on or off.
	activate func(r *http.Request, on bool) error
	// row reads the owner's row the path names, of the family's kind;
	// KindNotFound otherwise.
	row func(r *http.Request) (core.Webhook, error)
}

func (d *Dashboard) webhookPage() rowPage {
	return rowPage{d: d, path: "/app/webhooks/",
		svc: func() (rowService, error) { return d.deps.Webhooks, nil },
		show: func(w http.ResponseWriter, r *http.Request, status int, v rowShown) {
			d.renderWebhook(w, r, status, webhookPageView{layout: v.layout, rowLog: v.rowLog, Errors: v.Errors})
		},
		activate: func(r *http.Request, on bool) error {
			_, err := d.deps.Webhooks.Update(r.Context(), session(r).OwnerID, r.PathValue("id"), ports.WebhookChange{Active: &on})
			return err
		},
		row: d.hook}
}

// switchRow switches a webhook or a channel on (forgetting its failures)
// or off.
func (p rowPage) switchRow(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	var on bool
	if err == nil {
		on, err = parseActive(form)
	}
	if err == nil {
		err = p.activate(r, on)
	}
	done := "off"
	if on {
		done = "on"
	}
	p.settle(w, r, err, done, nil)
}

// test sends a test message now and goes back to the row's page, which
// shows what the receiver answered: a reload of that page sends nothing.
func (p rowPage) test(w http.ResponseWriter, r *http.Request) {
	svc, err := p.svc()
	var res ports.WebhookResult
	take := p.d.sendTake(r)
	if err == nil {
		res, err = svc.Test(r.Context(), session(r).OwnerID, r.PathValue("id"), take.take)
	}
	if take.refused(w, r) {
		return
	}
	if err != nil {
		p.d.fail(w, r, err)
		return
	}
	page := p.path + r.PathValue("id")
	p.d.setTestOutcome(w, r, page, res)
	http.Redirect(w, r, page, http.StatusSeeOther)
}

// redeliver queues a delivered or failed message to be sent again.
func (p rowPage) redeliver(w http.ResponseWriter, r *http.Request) {
	svc, err := p.svc()
	take := p.d.sendTake(r)
	if err == nil {
		_, err = svc.Retry(r.Context(), session(r).OwnerID, r.PathValue("id"), r.PathValue("did"), take.take)
	}
	if take.refused(w, r) {
		return
	}
	p.settle(w, r, err, "redeliver", func() bool {
		if !core.IsKind(err, core.KindConflict) && !core.IsKind(err, core.KindInvalidRequest) {
			return false
		}
		v := rowShown{}
		v.Problem = core.Message(err)
		p.show(w, r, statusOf(err), v)
		return true
	})
}

// settle ends an action of the page the path names: on success back to
// the page, saying what was done; a refusal the page shows itself when
// refused shows it (and says so); any other error on its own page.
func (p rowPage) settle(w http.ResponseWriter, r *http.Request, err error, done string, refused func() bool) {
	switch {
	case err == nil:
		http.Redirect(w, r, p.path+r.PathValue("id")+"?done="+done, http.StatusSeeOther)
	case refused == nil || !refused():
		p.d.fail(w, r, err)
	}
}

// replay queues the failed deliveries of a range again and says how
// many; a range that is not one is named beside its field.
func (p rowPage) replay(w http.ResponseWriter, r *http.Request) {
	svc, err := p.svc()
	if err != nil {
		p.d.fail(w, r, err)
		return
	}
	form, err := readForm(r)
	if err != nil {
		p.d.fail(w, r, err)
		return
	}
	f := parseReplay(form)
	from, to, err := f.times()
	var res ports.ReplayResult
	take := p.d.sendTake(r)
	if err == nil {
		res, err = svc.Replay(r.Context(), session(r).OwnerID, r.PathValue("id"), from, to, take.take)
	}
	if take.refused(w, r) {
		return
	}
	if err != nil {
		switch {
		case f.field(err) != "":
			v := rowShown{rowLog: rowLog{Replay: f}, Errors: map[string]string{f.field(err): core.Message(err)}}
			v.Problem = "Nothing was replayed: see below."
			p.show(w, r, statusOf(err), v)
		case core.IsKind(err, core.KindConflict):
			v := rowShown{rowLog: rowLog{Replay: f}}
			v.Problem = core.Message(err)
			p.show(w, r, statusOf(err), v)
		default:
			p.d.fail(w, r, err)
		}
		return
	}
	p.show(w, r, http.StatusOK, rowShown{layout: layout{Notice: replayNotice(res)}, rowLog: rowLog{Replay: f}})
}

// rotateView is the confirmation of a secret rotation.
type rotateView struct {
	layout
	Hook     webhookView
	Overlaps []overlapOption
	Error    string
}

// overlapOption is one choice of how long the replaced secret keeps
// signing.
type overlapOption struct {
	Seconds  int64
	Label    string
	Selected bool
}

// overlapChoices are the rotation's choices, within core's bound, the
// default (core.DefaultSecretOverlap) among them.
var overlapChoices = []struct {
	d     time.Duration
	label string
}{
	{0, "none: the old secret stops now (it leaked)"},
	{time.Hour, "1 hour"},
	{core.DefaultSecretOverlap, "24 hours"},
	{3 * 24 * time.Hour, "3 days"},
	{core.MaxSecretOverlap, "7 days"},
}

func overlapOptions(chosen time.Duration) []overlapOption {
	out := make([]overlapOption, len(overlapChoices))
	for i, c := range overlapChoices {
		out[i] = overlapOption{Seconds: int64(c.d / time.Second), Label: c.label, Selected: c.d == chosen}
	}
	return out
}

// utcMinute is how the pages write an instant to the minute.
const utcMinute = "2006-01-02 15:04 UTC"

// testView is what the receiver answered a test ping.
type testView struct {
	OK     bool
	Status int
	Error  string
	Took   string
}

func (d *Dashboard) webhookView(h core.Webhook) webhookView {
	now := d.cfg.Now()
	v := webhookView{ID: h.ID, URL: h.URL, MinScore: h.MinScore, Active: h.Active, Reason: h.DisabledReason,
		Failures: h.ConsecutiveFailures, Created: ago(now, h.CreatedAt)}
	if h.PreviousSecretSigns(now) {
		v.OldSecretUntil = h.PreviousSecretUntil.UTC().Format(utcMinute)
	}
	ps := platformNames(h.Platforms)
	if len(ps) == 0 || len(ps) == len(core.Platforms) {
		v.Platforms = "all"
	} else {
		v.Platforms = strings.Join(ps, ", ")
	}
	return v
}

func platformNames(ps []core.Platform) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, string(p))
	}
	return out
}

// platformOptions are the platform checkboxes, those named ticked (all
// when checked is nil).
func platformOptions(checked []string) []platformOption {
	var out []platformOption
	for _, p := range core.Platforms {
		out = append(out, platformOption{Value: string(p), Checked: checked == nil || slices.Contains(checked, string(p))})
	}
	return out
}

// renderWebhooks shows the one list of webhooks and channels and their
// create forms, or, on a plan without webhooks, what Pro would allow
// instead.
func (d *Dashboard) renderWebhooks(w http.ResponseWriter, r *http.Request, status int, v webhooksView) {
	v.layout.Title, v.layout.Nav, v.layout.SignedIn = "Webhooks and channels", "webhooks", true
	gate, err := d.gated(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if gate != nil {
		v.Gated, v.GateWhy = true, core.Message(gate)
		v.Problem, v.NewSecret = "", ""
		status = http.StatusOK
		if r.Method == http.MethodPost {
			status = http.StatusForbidden
		}
	}
	rows, err := d.destinations(r)
	switch {
	case v.Gated && core.IsKind(err, core.KindPlanLimit):
		// An owner with none: what Pro would allow, alone.
	case err != nil:
		d.fail(w, r, err)
		return
	}
	v.Rows = rows
	if d.deps.Channels != nil && v.ChannelForms == nil {
		v.ChannelForms = channelForms("", channelForm{}, nil)
	}
	if v.Platforms == nil {
		v.Platforms = platformOptions(v.Form.Platforms)
	}
	d.render(w, r, status, "webhooks", &v)
}

// gated is the plan's refusal of new webhooks and channels
// (KindPlanLimit), nil when it has room for them, or the error asking
// failed with.
func (d *Dashboard) gated(r *http.Request) (refusal, err error) {
	err = d.deps.Webhooks.Gate(r.Context())
	if core.IsKind(err, core.KindPlanLimit) {
		return err, nil
	}
	return nil, err
}

// showWebhooks shows the list; after a deletion it names what was
// deleted.
func (d *Dashboard) showWebhooks(w http.ResponseWriter, r *http.Request) {
	var v webhooksView
	if deleted := d.takeDeleted(w, r); deleted != "" {
		v.Notice = "Deleted the " + deleted + ", with its queued deliveries and delivery log."
	} else {
		v.Notice = d.addedNotice(r)
	}
	d.renderWebhooks(w, r, http.StatusOK, v)
}

// createWebhook shows the signing secret in its answer, once; a refusal
// is shown beside its field with the service's words.
func (d *Dashboard) createWebhook(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	f := parseWebhook(form)
	var secret string
	var hook core.Webhook
	min, err := f.minScore()
	if err == nil {
		hook, secret, err = d.deps.Webhooks.Create(r.Context(), session(r).OwnerID, f.URL, min, f.platforms())
	}
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		v := webhooksView{Form: f, Platforms: platformOptions(f.platforms())}
		if field := f.field(err, true); field != "" {
			v.Errors = map[string]string{field: core.Message(err)}
			v.Problem = "The webhook was not added: see below."
		} else {
			v.Problem = core.Message(err)
		}
		d.renderWebhooks(w, r, statusOf(err), v)
		return
	}
	d.renderWebhooks(w, r, http.StatusOK, webhooksView{NewSecret: secret, NewURL: hook.URL,
		layout: layout{Notice: "Webhook added. Copy its signing secret now: it is shown this once."}})
}

// renderWebhook shows one webhook: its settings, the test ping and the
// delivery log.
func (d *Dashboard) renderWebhook(w http.ResponseWriter, r *http.Request, status int, v webhookPageView) {
	owner, id := session(r).OwnerID, r.PathValue("id")
	hooks, err := d.deps.Webhooks.List(r.Context(), owner)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	i := slices.IndexFunc(hooks, func(h core.Webhook) bool { return h.ID == id })
	if i < 0 {
		d.fail(w, r, core.Errorf(core.KindNotFound, "no such webhook"))
		return
	}
	ds, err := d.deps.Webhooks.Deliveries(r.Context(), owner, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	gate, err := d.gated(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Gated = gate != nil
	v.Hook = d.webhookView(hooks[i])
	v.layout.Title, v.layout.Nav, v.layout.SignedIn = "Webhook "+v.Hook.URL, "webhooks", true
	v.fill("/app/webhooks/"+id, hooks[i], ds, d.cfg.Now())
	if v.Platforms == nil {
		v.Platforms = platformOptions(platformNames(hooks[i].Platforms))
		v.Form.MinScore = strconv.Itoa(hooks[i].MinScore)
	}
	d.render(w, r, status, "webhook", &v)
}

func (d *Dashboard) showWebhook(w http.ResponseWriter, r *http.Request) {
	// A channel's switch-off notification links here, as a webhook's
	// does: its page is the channel's.
	if d.deps.Channels != nil {
		if _, err := d.deps.Channels.Get(r.Context(), session(r).OwnerID, r.PathValue("id")); err == nil {
			http.Redirect(w, r, "/app/channels/"+r.PathValue("id"), http.StatusSeeOther)
			return
		}
	}
	v := webhookPageView{layout: layout{Notice: doneNotice(r, "webhook")}}
	v.Test = d.testOutcome(r, "/app/webhooks/"+r.PathValue("id"))
	d.renderWebhook(w, r, http.StatusOK, v)
}

// editWebhook changes the minimum score and the platforms.
func (d *Dashboard) editWebhook(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	f := parseWebhook(form)
	min, err := f.minScore()
	if err == nil && min == nil {
		err = core.Errorf(core.KindInvalid, "min_score must be a whole number from 0 to 100")
	}
	if err == nil {
		_, err = d.deps.Webhooks.Update(r.Context(), session(r).OwnerID, r.PathValue("id"),
			ports.WebhookChange{MinScore: min, Platforms: f.platforms()})
	}
	d.webhookPage().settle(w, r, err, "saved", func() bool {
		field := f.field(err, false)
		if field == "" || statusOf(err) == http.StatusNotFound {
			return false
		}
		v := webhookPageView{Form: f, Platforms: platformOptions(f.platforms()), Errors: map[string]string{field: core.Message(err)}}
		v.Problem = "The settings were not saved: see below."
		d.renderWebhook(w, r, statusOf(err), v)
		return true
	})
}

// hook returns the owner's webhook id for the pages that act on one.
func (d *Dashboard) hook(r *http.Request) (core.Webhook, error) {
	hooks, err := d.deps.Webhooks.List(r.Context(), session(r).OwnerID)
	if err != nil {
		return core.Webhook{}, err
	}
	i := slices.IndexFunc(hooks, func(h core.Webhook) bool { return h.ID == r.PathValue("id") })
	if i < 0 {
		return core.Webhook{}, core.Errorf(core.KindNotFound, "no such webhook")
	}
	return hooks[i], nil
}

// renderRotate shows the rotation's confirmation: what happens, and the
// choice of overlap.
func (d *Dashboard) renderRotate(w http.ResponseWriter, r *http.Request, status int, chosen time.Duration, problem string) {
	h, err := d.hook(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := rotateView{layout: layout{Title: "Rotate the secret of " + h.URL, Nav: "webhooks", SignedIn: true},
		Hook: d.webhookView(h), Overlaps: overlapOptions(chosen), Error: problem}
	if problem != "" {
		v.Problem = "The secret was not rotated: see below."
	}
	d.render(w, r, status, "rotate", &v)
}

func (d *Dashboard) confirmRotate(w http.ResponseWriter, r *http.Request) {
	d.renderRotate(w, r, http.StatusOK, core.DefaultSecretOverlap, "")
}

// rotateSecret gives the webhook a new signing secret and shows it on
// the webhook's page, once; a refused overlap goes back to the
// confirmation with the service's words.
func (d *Dashboard) rotateSecret(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	var overlap *time.Duration
	if err == nil {
		overlap, err = parseOverlap(form)
	}
	var hook core.Webhook
	var secret string
	if err == nil {
		hook, secret, err = d.deps.Webhooks.RotateSecret(r.Context(), session(r).OwnerID, r.PathValue("id"), overlap)
	}
	if err != nil {
		if core.IsKind(err, core.KindInvalid) {
			d.renderRotate(w, r, statusOf(err), core.DefaultSecretOverlap, core.Message(err))
			return
		}
		d.fail(w, r, err)
		return
	}
	notice := "Signing secret rotated. Copy the new one now: it is shown this once."
	if v := d.webhookView(hook); v.OldSecretUntil != "" {
		notice += " The old one also signs every message until " + v.OldSecretUntil + ", so your receiver can switch meanwhile."
	} else {
		notice += " The old one no longer signs."
	}
	d.renderWebhook(w, r, http.StatusOK, webhookPageView{layout: layout{Notice: notice}, NewSecret: secret})
}
