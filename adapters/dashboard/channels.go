package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// ChannelService manages channels (Slack, Discord, Telegram, ntfy) with
// the API's rules and the webhooks' plan gate. app.Channels is one.
type ChannelService interface {
	Create(ctx context.Context, ownerID string, in ports.NewChannel) (core.Webhook, error)
	All(ctx context.Context, ownerID string) ([]core.Webhook, error)
	Get(ctx context.Context, ownerID, id string) (core.Webhook, error)
	Update(ctx context.Context, ownerID, id string, ch ports.ChannelChange) (core.Webhook, error)
	Deliveries(ctx context.Context, ownerID, id string) ([]core.Delivery, error)
	Test(ctx context.Context, ownerID, id string, take func(context.Context) error) (ports.WebhookResult, error)
	Retry(ctx context.Context, ownerID, channelID, deliveryID string, take func(context.Context) error) (core.Delivery, error)
	Replay(ctx context.Context, ownerID, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error)
	// Delete removes the channel with its queued deliveries and its
	// delivery log. KindNotFound (another owner's, or a webhook's),
	// KindPlanLimit.
	Delete(ctx context.Context, ownerID, id string) error
}

// destinationView is a webhook or a channel as the list shows it.
type destinationView struct {
	ID        string
	Kind      string // Webhook, Slack, Discord, Telegram, ntfy
	Address   string // the webhook's address, or the channel's redacted destination
	Link      string // its page
	Active    bool
	Reason    string // why the service switched it off; empty otherwise
	Failures  int    // failed deliveries in a row
	MinScore  int
	Platforms string
	Frequency string
	Created   string
	Last      []lastDelivery
}

// lastDelivery is one of the newest deliveries in the list.
type lastDelivery struct {
	Status string
	When   string
	Reason string
}

// listedLogs bounds the delivery logs one list reads: the first rows
// show their last deliveries, the rest their page.
const listedLogs = 50

// listedDeliveries is how many of its newest deliveries a row shows.
const listedDeliveries = 3

// destinations lists the owner's webhooks and channels together, oldest
// first, each with its health and last deliveries. Without a channel
// service it lists the webhooks.
func (d *Dashboard) destinations(r *http.Request) ([]destinationView, error) {
	ctx, owner := r.Context(), session(r).OwnerID
	var all []core.Webhook
	var err error
	if d.deps.Channels != nil {
		all, err = d.deps.Channels.All(ctx, owner)
	} else {
		all, err = d.deps.Webhooks.List(ctx, owner)
	}
	if err != nil {
		return nil, err
	}
	now := d.cfg.Now()
	out := make([]destinationView, 0, len(all))
	for i, h := range all {
		v := destinationView{ID: h.ID, Kind: "Webhook", Address: h.URL, Link: "/app/webhooks/" + h.ID, Active: h.Active,
			Reason: h.DisabledReason, Failures: h.ConsecutiveFailures, MinScore: h.MinScore, Platforms: platformsShown(h.Platforms),
			Frequency: "at once", Created: ago(now, h.CreatedAt)}
		logOf := d.deps.Webhooks.Deliveries
		if h.Kind.IsChannel() {
			v.Kind, v.Link, v.Frequency = h.Kind.Label(), "/app/channels/"+h.ID, h.Schedule.String()
			logOf = d.deps.Channels.Deliveries
		}
		if i < listedLogs {
			ds, err := logOf(ctx, owner, h.ID)
			if err != nil {
				return nil, err
			}
			for _, dl := range ds[:min(len(ds), listedDeliveries)] {
				ld := lastDelivery{Status: string(dl.Status), When: ago(now, dl.CreatedAt), Reason: dl.Error}
				if dl.Trigger == core.TriggerPing {
					ld.Status = "test " + ld.Status
				}
				v.Last = append(v.Last, ld)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

func platformsShown(ps []core.Platform) string {
	names := platformNames(ps)
	if len(names) == 0 || len(names) == len(core.Platforms) {
		return "all platforms"
	}
	return strings.Join(names, ", ")
}

// channelForm is a channel's fields as a form sends them.
type channelForm struct {
	Kind      string
	URL       string
	Token     string
	ChatID    string
	NoToken   bool // the destination form's "no access token" (ntfy)
	MinScore  string
	Platforms []string
	Frequency string
	Hour      string
	Zone      string
}

func parseChannel(form url.Values) channelForm {
	return channelForm{
		Kind: strings.TrimSpace(form.Get("kind")), URL: strings.TrimSpace(form.Get("url")), Token: strings.TrimSpace(form.Get("token")),
		ChatID: strings.TrimSpace(form.Get("chat_id")), NoToken: form.Get("no_token") == "on",
		MinScore: strings.TrimSpace(form.Get("min_score")), Platforms: form["platform"],
		Frequency: strings.TrimSpace(form.Get("frequency")), Hour: strings.TrimSpace(form.Get("hour")), Zone: strings.TrimSpace(form.Get("zone")),
	}
}

// channelInput is a channel's add form or settings form as read: the
// fields as typed, to be shown back, and the minimum score, the hour and
// the platforms as the service takes them.
type channelInput struct {
	form      channelForm
	minScore  *int // nil when the field is empty
	hour      int
	platforms []string // none ticked is an empty list, never "unchanged"
}

// readChannel reads the fields the add forms and the settings form
// share. scoreRequired is the settings form's: it always sends a score,
// so an empty one is refused, where an add form leaves it to the
// service's default. A score or an hour that is no number is
// KindInvalid naming its field; in.form is filled either way.
func readChannel(form url.Values, scoreRequired bool) (channelInput, error) {
	in := channelInput{form: parseChannel(form), platforms: form["platform"]}
	if in.platforms == nil {
		in.platforms = []string{}
	}
	var err error
	in.minScore, err = parseMinScore(in.form.MinScore)
	if err == nil && scoreRequired && in.minScore == nil {
		err = core.Errorf(core.KindInvalid, "min_score must be a whole number from 0 to 100")
	}
	if err == nil {
		in.hour, err = in.form.hour()
	}
	return in, err
}

// hour reads the digest's hour: 0 when empty, KindInvalid unless a
// whole number. Its range is the service's to check.
func (f channelForm) hour() (int, error) {
	if f.Hour == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(f.Hour)
	if err != nil {
		return 0, core.Errorf(core.KindInvalid, "hour must be a whole number from 0 to 23")
	}
	return n, nil
}

// field names the form field a refusal is about: the service's messages
// start with the field's name ("url must…", "chat_id is required…",
// "time zone must…").
func channelField(err error) string {
	if !core.IsKind(err, core.KindInvalid) {
		return ""
	}
	first, _, _ := strings.Cut(core.Message(err), " ")
	first = strings.TrimSuffix(first, ":")
	switch first {
	case "url", "token", "chat_id", "min_score", "platforms", "frequency", "hour":
		return first
	case "time":
		return "zone"
	}
	return ""
}

// frequencyOption is one choice of how often a channel sends.
type frequencyOption struct {
	Value, Label string
	Selected     bool
}

func frequencyOptions(chosen string) []frequencyOption {
	if chosen == "" {
		chosen = string(core.AlertAtOnce)
	}
	out := []frequencyOption{
		{Value: string(core.AlertAtOnce), Label: "at once: a message per match"},
		{Value: string(core.AlertHourly), Label: "hourly digest"},
		{Value: string(core.AlertDaily), Label: "daily digest, at the hour below"},
	}
	for i := range out {
		out[i].Selected = out[i].Value == chosen
	}
	return out
}

// channelFormView is the form of one kind: its fields, and a line each
// on where the owner finds what it asks for.
type channelFormView struct {
	Kind        string // slack, discord, telegram, ntfy: the fields' id prefix
	Label       string
	Where       string // where to find the address or the token
	WhereChat   string // Telegram: how to get the chat id
	NeedsURL    bool
	URLLabel    string
	URLHint     string
	NeedsToken  bool
	TokenLabel  string
	TokenHint   string
	NeedsChat   bool
	Form        channelForm
	Errors      map[string]string
	Platforms   []platformOption
	Frequencies []frequencyOption
	Open        bool // shown unfolded: the form just refused
}

// channelKinds are the forms, in the order pages show them, with what
// each destination needs.
func channelFormOf(k core.ChannelKind, f channelForm, errs map[string]string) channelFormView {
	v := channelFormView{Kind: string(k), Label: k.Label(), Form: f, Errors: errs, Platforms: platformOptions(f.Platforms),
		Frequencies: frequencyOptions(f.Frequency), Open: len(errs) > 0}
	switch k {
	case core.ChannelSlack:
		v.NeedsURL, v.URLLabel, v.URLHint = true, "Incoming webhook address", "https://hooks.slack.com/services/T…/B…/…"
		v.Where = "In Slack: open your app at api.slack.com/apps, turn on Incoming Webhooks, Add New Webhook to Workspace, pick the channel and copy the address."
	case core.ChannelDiscord:
		v.NeedsURL, v.URLLabel, v.URLHint = true, "Webhook address", "https://discord.com/api/webhooks/{id}/{token}"
		v.Where = "In Discord: the channel's settings (or Server Settings), Integrations, Webhooks, New Webhook, then Copy Webhook URL."
	case core.ChannelTelegram:
		v.NeedsToken, v.TokenLabel, v.TokenHint, v.NeedsChat = true, "Bot token", "123456789:AA…", true
		v.Where = "Create a bot with @BotFather (/newbot) and paste the token it gives you."
		v.WhereChat = "Write to the bot (or add it to your group), open api.telegram.org/bot<token>/getUpdates and copy chat.id; a public channel can be @channelname."
	case core.ChannelNtfy:
		v.NeedsURL, v.URLLabel, v.URLHint = true, "Topic address", "https://ntfy.sh/your-long-random-topic"
		v.NeedsToken, v.TokenLabel, v.TokenHint = true, "Access token (only for a protected topic)", "tk_…"
		v.Where = "The topic's address on ntfy.sh or your own server; on a public server pick a long random topic. An access token (tk_…) only if the topic is protected."
	}
	return v
}

// nothingGiven says, in the words of the destination form of v's kind,
// that a change of destination sent with every field empty changes
// nothing and what to fill in.
func (v channelFormView) nothingGiven() string {
	var parts []string
	if v.NeedsURL {
		parts = append(parts, "the "+strings.ToLower(v.URLLabel[:1])+v.URLLabel[1:])
	}
	if v.NeedsToken {
		label, _, _ := strings.Cut(v.TokenLabel, " (")
		parts = append(parts, "the "+strings.ToLower(label[:1])+label[1:])
	}
	if v.NeedsChat {
		parts = append(parts, "the chat id")
	}
	msg := "Nothing was changed: fill in " + strings.Join(parts, " or ") + " to replace"
	if v.Kind == string(core.ChannelNtfy) {
		msg += ", or tick “no access token”"
	}
	return msg + "."
}

// channelForms are the four add forms; the one of kind refused shows f
// and its errors.
func channelForms(refused string, f channelForm, errs map[string]string) []channelFormView {
	var out []channelFormView
	for _, k := range core.ChannelKinds {
		if string(k) == refused {
			out = append(out, channelFormOf(k, f, errs))
		} else {
			out = append(out, channelFormOf(k, channelForm{}, nil))
		}
	}
	return out
}

// createChannel adds a channel from one of the four forms; a refusal is
// shown beside its field in that form, with the service's words.
func (d *Dashboard) createChannel(w http.ResponseWriter, r *http.Request) {
	if d.deps.Channels == nil {
		d.fail(w, r, core.Errorf(core.KindNotFound, "channels are not offered here"))
		return
	}
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	in, err := readChannel(form, false)
	f := in.form
	// Shown back as sent: no box ticked is none, where a blank form
	// (nil) ticks every platform.
	f.Platforms = in.platforms
	var ch core.Webhook
	if err == nil {
		ch, err = d.deps.Channels.Create(r.Context(), session(r).OwnerID, ports.NewChannel{Kind: f.Kind, URL: f.URL, Token: f.Token,
			ChatID: f.ChatID, MinScore: in.minScore, Platforms: in.platforms, Frequency: f.Frequency, Hour: in.hour, Zone: f.Zone})
	}
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		v := webhooksView{}
		// The token is not put back in the form: the page would show it.
		f.Token = ""
		if field := channelField(err); field != "" {
			v.ChannelForms = channelForms(f.Kind, f, map[string]string{field: core.Message(err)})
			v.Problem = "The channel was not added: see below."
		} else {
			v.ChannelForms = channelForms(f.Kind, f, nil)
			v.Problem = core.Message(err)
		}
		d.renderWebhooks(w, r, statusOf(err), v)
		return
	}
	// Sent back to the list, which names the channel from the store: a
	// reload of the answer then asks nothing again, where the list shown
	// in place would add the channel twice.
	http.Redirect(w, r, "/app/webhooks?added="+url.QueryEscape(ch.ID), http.StatusSeeOther)
}

// addedNotice is the list's notice after a channel was added: the
// channel the address names, read as the owner's, so an address can name
// only one of the owner's channels; empty for none.
func (d *Dashboard) addedNotice(r *http.Request) string {
	id := r.URL.Query().Get("added")
	if id == "" || d.deps.Channels == nil {
		return ""
	}
	ch, err := d.deps.Channels.Get(r.Context(), session(r).OwnerID, id)
	if err != nil {
		return ""
	}
	return ch.Kind.Label() + " channel added: " + ch.URL + ". Send it a test message from its row to check it."
}

// channelPageView is one channel's page.
type channelPageView struct {
	layout
	rowLog
	Ch          destinationView
	Kind        string // slack, discord, telegram, ntfy
	Dest        channelFormView
	Form        channelForm
	Errors      map[string]string
	Platforms   []platformOption
	Frequencies []frequencyOption
	Digest      bool   // it sends digests
	LastDigest  string // when its last period ended
	// Settings is the settings form as the partials take it.
	Settings channelFormView
}

// renderChannel shows one channel: its health, settings, destination,
// test, replay and delivery log.
func (d *Dashboard) renderChannel(w http.ResponseWriter, r *http.Request, status int, v channelPageView) {
	if d.deps.Channels == nil {
		d.fail(w, r, core.Errorf(core.KindNotFound, "channels are not offered here"))
		return
	}
	owner, id := session(r).OwnerID, r.PathValue("id")
	ch, err := d.deps.Channels.Get(r.Context(), owner, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	ds, err := d.deps.Channels.Deliveries(r.Context(), owner, id)
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
	now := d.cfg.Now()
	v.Ch = destinationView{ID: ch.ID, Kind: ch.Kind.Label(), Address: ch.URL, Active: ch.Active, Reason: ch.DisabledReason,
		Failures: ch.ConsecutiveFailures, MinScore: ch.MinScore, Platforms: platformsShown(ch.Platforms), Frequency: ch.Schedule.String(),
		Created: ago(now, ch.CreatedAt)}
	v.Kind = string(ch.Kind)
	v.layout.Title, v.layout.Nav, v.layout.SignedIn = ch.Kind.Label()+" channel "+ch.URL, "webhooks", true
	v.Digest = ch.Schedule.Digest()
	if v.Digest {
		v.LastDigest = ago(now, ch.LastDigestAt)
	}
	v.fill("/app/channels/"+id, ch, ds, now)
	if v.Platforms == nil {
		v.Platforms = platformOptions(platformNames(ch.Platforms))
		v.Form.MinScore = strconv.Itoa(ch.MinScore)
		v.Form.Frequency = string(ch.Schedule.Frequency)
		v.Form.Hour, v.Form.Zone = strconv.Itoa(ch.Schedule.Hour), ch.Schedule.Zone
		if v.Form.Zone == "" {
			v.Form.Zone = "UTC"
		}
	}
	if v.Frequencies == nil {
		v.Frequencies = frequencyOptions(v.Form.Frequency)
	}
	if v.Dest.Kind == "" {
		v.Dest = channelFormOf(ch.Kind, channelForm{}, nil)
	}
	v.Settings = channelFormView{Kind: "set", Form: v.Form, Errors: v.Errors, Platforms: v.Platforms, Frequencies: v.Frequencies}
	d.render(w, r, status, "channel", &v)
}

func (d *Dashboard) showChannel(w http.ResponseWriter, r *http.Request) {
	v := channelPageView{layout: layout{Notice: doneNotice(r, "channel")}}
	v.Test = d.testOutcome(r, "/app/channels/"+r.PathValue("id"))
	d.renderChannel(w, r, http.StatusOK, v)
}

// editChannel changes the minimum score, the platforms and the frequency.
func (d *Dashboard) editChannel(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	in, err := readChannel(form, true)
	f := in.form
	if err == nil {
		_, err = d.update(r, ports.ChannelChange{MinScore: in.minScore, Platforms: in.platforms, Frequency: &f.Frequency, Hour: &in.hour, Zone: &f.Zone})
	}
	d.channelPage().settle(w, r, err, "saved", func() bool {
		field := channelField(err)
		if field == "" {
			return false
		}
		v := channelPageView{Form: f, Platforms: platformOptions(in.platforms), Errors: map[string]string{field: core.Message(err)}}
		v.Problem = "The settings were not saved: see below."
		d.renderChannel(w, r, statusOf(err), v)
		return true
	})
}

// update asks the service for a change of the channel the path names.
func (d *Dashboard) update(r *http.Request, ch ports.ChannelChange) (core.Webhook, error) {
	if d.deps.Channels == nil {
		return core.Webhook{}, core.Errorf(core.KindNotFound, "channels are not offered here")
	}
	return d.deps.Channels.Update(r.Context(), session(r).OwnerID, r.PathValue("id"), ch)
}

// setDestination replaces the parts of the destination the form gives;
// an empty field keeps its part.
func (d *Dashboard) setDestination(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	f := parseChannel(form)
	var ch ports.ChannelChange
	if f.URL != "" {
		ch.URL = &f.URL
	}
	if f.Token != "" {
		ch.Token = &f.Token
	} else if f.NoToken {
		none := ""
		ch.Token = &none
	}
	if f.ChatID != "" {
		ch.ChatID = &f.ChatID
	}
	empty := ch.URL == nil && ch.Token == nil && ch.ChatID == nil
	if empty {
		// Said in the form's words below, once the kind is known.
		err = core.Errorf(core.KindInvalid, "give the part of the destination to replace")
	}
	if err == nil {
		_, err = d.update(r, ch)
	}
	d.channelPage().settle(w, r, err, "destination", func() bool {
		if !core.IsKind(err, core.KindInvalid) {
			return false
		}
		kind := f.Kind
		if c, gerr := d.deps.Channels.Get(r.Context(), session(r).OwnerID, r.PathValue("id")); gerr == nil {
			kind = string(c.Kind)
		}
		field := channelField(err)
		if field == "" {
			// Beside the form's first field: a Telegram form has no
			// address, and a reason beside no field is not shown.
			field = "url"
			if !channelFormOf(core.ChannelKind(kind), f, nil).NeedsURL {
				field = "token"
			}
		}
		f.Token = ""
		msg := core.Message(err)
		if empty {
			msg = channelFormOf(core.ChannelKind(kind), f, nil).nothingGiven()
		}
		v := channelPageView{Dest: channelFormOf(core.ChannelKind(kind), f, map[string]string{field: msg})}
		v.Problem = "The destination was not changed: see below."
		d.renderChannel(w, r, statusOf(err), v)
		return true
	})
}

// channelPage is the channels' family of pages; without a channel
// service its actions answer not found.
func (d *Dashboard) channelPage() rowPage {
	return rowPage{d: d, path: "/app/channels/",
		svc: func() (rowService, error) {
			if d.deps.Channels == nil {
				return nil, core.Errorf(core.KindNotFound, "channels are not offered here")
			}
			return d.deps.Channels, nil
		},
		show: func(w http.ResponseWriter, r *http.Request, status int, v rowShown) {
			d.renderChannel(w, r, status, channelPageView{layout: v.layout, rowLog: v.rowLog, Errors: v.Errors})
		},
		activate: func(r *http.Request, on bool) error {
			_, err := d.update(r, ports.ChannelChange{Active: &on})
			return err
		},
		row: func(r *http.Request) (core.Webhook, error) {
			if d.deps.Channels == nil {
				return core.Webhook{}, core.Errorf(core.KindNotFound, "channels are not offered here")
			}
			return d.deps.Channels.Get(r.Context(), session(r).OwnerID, r.PathValue("id"))
		}}
}

// replayNotice says what a replay queued.
func replayNotice(res ports.ReplayResult) string {
	var notice string
	switch n := len(res.Queued); {
	case n == 0:
		notice = "No failed deliveries in that range to replay."
	case n == 1:
		notice = "1 failed delivery queued to be sent again, as a new delivery."
	default:
		notice = strconv.Itoa(n) + " failed deliveries queued to be sent again, each as a new delivery."
	}
	if res.More {
		notice += " More remain in that range: replay it again for the next " + strconv.Itoa(core.MaxReplay) + "."
	}
	return notice
}
