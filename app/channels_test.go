package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/mailtest"
)

// Made-up secrets in each service's shape, as the sender's tests use.
const (
	fakeSlackPath  = "/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstwxyz"
	fakeDiscordID  = "112233445566778899"
	fakeDiscordTok = "AbCdEf_gh-IjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopqrstuvwxyzAB"
	fakeBotToken   = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	fakeChatID     = "-1001234567890"
	fakeNtfyTopic  = "earshot-alerts-9f3k2m"
	fakeNtfyToken  = "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2"
)

// serviceRequest is one request a fake service took.
type serviceRequest struct {
	Path, Query, Auth string
	Body              []byte
}

// serviceAnswer is what a fake service answers.
type serviceAnswer struct {
	status int
	body   string
	header map[string]string // beside Content-Type, such as Retry-After
}

// fakeServices is Slack, Discord, the Telegram Bot API and ntfy on one
// loopback server, told apart by path, each answering in its real shape
// unless a test sets another answer:
//   - Slack incoming webhooks, POST /services/T…/B…/…: 200 "ok", or a
//     status and an error code as plain text
//     (https://api.slack.com/messaging/webhooks#handling_errors);
//   - Discord execute webhook, POST /api/webhooks/{id}/{token}?wait=true:
//     200 and the message, or {"message","code"}
//     (https://discord.com/developers/docs/resources/webhook#execute-webhook);
//   - Telegram, POST /bot{token}/sendMessage: {"ok":true,"result":…} or
//     {"ok":false,"error_code","description"}
//     (https://core.telegram.org/bots/api#making-requests);
//   - ntfy, POST / with the topic in the JSON body: 200 and the message,
//     or {"code","http","error","link"}
//     (https://docs.ntfy.sh/publish/#publish-as-json).
type fakeServices struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     map[core.ChannelKind][]serviceRequest
	answers map[core.ChannelKind]serviceAnswer
	arrived signal
}

func newFakeServices(t *testing.T) *fakeServices {
	f := &fakeServices{got: map[core.ChannelKind][]serviceRequest{}, answers: map[core.ChannelKind]serviceAnswer{
		core.ChannelSlack:   {status: 200, body: "ok"},
		core.ChannelDiscord: {status: 200, body: `{"id":"1300000000000000000","type":0,"content":"","channel_id":"1200000000000000000","webhook_id":"` + fakeDiscordID + `"}`},
		core.ChannelTelegram: {status: 200, body: `{"ok":true,"result":{"message_id":42,"from":{"id":123456789,"is_bot":true,"first_name":"earshot"},` +
			`"chat":{"id":-1001234567890,"title":"Leads","type":"supergroup"},"date":1768035600,"text":"earshot"}}`},
		core.ChannelNtfy: {status: 200, body: `{"id":"sPs71M8A2T","time":1768035600,"expires":1768078800,"event":"message","topic":"` + fakeNtfyTopic + `","message":"earshot"}`},
	}, arrived: newSignal()}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var kind core.ChannelKind
		switch {
		case strings.HasPrefix(r.URL.Path, "/services/"):
			kind = core.ChannelSlack
		case strings.HasPrefix(r.URL.Path, "/api/webhooks/"):
			kind = core.ChannelDiscord
		case strings.HasPrefix(r.URL.Path, "/bot"):
			kind = core.ChannelTelegram
		default:
			kind = core.ChannelNtfy
		}
		f.mu.Lock()
		f.got[kind] = append(f.got[kind], serviceRequest{r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), body})
		a := f.answers[kind]
		f.mu.Unlock()
		if kind == core.ChannelSlack {
			w.Header().Set("Content-Type", "text/html")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
		f.arrived.notify()
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServices) answer(k core.ChannelKind, status int, body string) {
	f.answerWith(k, status, body, nil)
}

// answerWith sets what the service of kind k answers, with headers.
func (f *fakeServices) answerWith(k core.ChannelKind, status int, body string, header map[string]string) {
	f.mu.Lock()
	f.answers[k] = serviceAnswer{status, body, header}
	f.mu.Unlock()
}

func (f *fakeServices) requests(k core.ChannelKind) []serviceRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]serviceRequest(nil), f.got[k]...)
}

// waitFor waits until each kind named has taken n requests.
func (f *fakeServices) waitFor(t *testing.T, n int, kinds ...core.ChannelKind) {
	t.Helper()
	waitUntil(t, 5*time.Second, f.arrived, func() bool {
		for _, k := range kinds {
			if len(f.requests(k)) < n {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("requests %v", f.got) })
}

// newTarget is the channel of kind k at the fake.
func (f *fakeServices) newTarget(k core.ChannelKind) ports.NewChannel {
	switch k {
	case core.ChannelSlack:
		return ports.NewChannel{Kind: "slack", URL: f.srv.URL + fakeSlackPath}
	case core.ChannelDiscord:
		return ports.NewChannel{Kind: "discord", URL: f.srv.URL + "/api/webhooks/" + fakeDiscordID + "/" + fakeDiscordTok}
	case core.ChannelTelegram:
		return ports.NewChannel{Kind: "telegram", Token: fakeBotToken, ChatID: fakeChatID}
	default:
		return ports.NewChannel{Kind: "ntfy", URL: f.srv.URL + "/" + fakeNtfyTopic, Token: fakeNtfyToken}
	}
}

// chans is the channel service beside a subscription service and a
// delivery worker, all on one world's database, sending to fake
// services, on a clock the test moves.
type chans struct {
	*hooks
	*Channels
	svc     *Webhooks
	cstore  *gormstore.ChannelStore
	digests *ChannelDigests
	clock   *handClock
	fake    *fakeServices
}

func newChans(t *testing.T, w world, switchedOff func(context.Context, core.Webhook)) *chans {
	t.Helper()
	clock := &handClock{now: time.Now().UTC()}
	c := newChansOn(t, w, switchedOff, clock)
	c.clock = clock
	return c
}

// newChansOn is newChans on clock, which the worker does not share: it
// keeps the system's. c.clock is nil.
func newChansOn(t *testing.T, w world, switchedOff func(context.Context, core.Webhook), clock ports.Clock) *chans {
	t.Helper()
	fake := newFakeServices(t)
	sender := webhooksender.New(webhooksender.Config{Timeout: 2 * time.Second, AllowPrivate: true, TelegramAPI: fake.srv.URL})
	h := newHooksVia(t, w, DeliveryConfig{Schedule: core.RetrySchedule{}}, sender, switchedOff) // one try each
	svc := NewWebhooks(WebhookDeps{Store: h.store, Sender: sender, Sealer: h.sealer, Clock: clock, Log: quiet, Wake: h.worker.Poke},
		WebhookConfig{Limits: core.Limits{WebhooksPerPerson: 10}, AllowPrivate: true})
	store := gormstore.NewChannelStore(w.db)
	digests := NewChannelDigests(ChannelDigestDeps{Store: store, Clock: clock, Log: quiet, Wake: h.worker.Poke, SiteURL: func() string { return "https://earshot.test" }})
	return &chans{hooks: h, svc: svc, Channels: NewChannels(ChannelDeps{Webhooks: svc, Store: store, Digests: digests}), cstore: store, fake: fake,
		digests: digests}
}

// add creates a channel of kind k at the fake, at once unless freq says.
func (c *chans) add(t *testing.T, ownerID string, k core.ChannelKind, minScore int, freq string) core.Webhook {
	t.Helper()
	in := c.fake.newTarget(k)
	in.MinScore, in.Frequency = &minScore, freq
	ch, err := c.Channels.Create(context.Background(), ownerID, in)
	if err != nil {
		t.Fatalf("Create(%s): %v", k, err)
	}
	return ch
}

// scorePost saves p as a match of the owner on x and scores it.
func (c *chans) scorePost(t *testing.T, ownerID string, p core.Post, sc core.Score) core.Match {
	t.Helper()
	ctx := context.Background()
	ph, err := core.NewPhrase(ownerID, "chan "+randomHexT(t), "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.hooks.w.phrases.CreatePhrase(ctx, &ph, core.Limits{PhrasesPerPlatform: 100}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	p.ExternalID = randomHexT(t)
	res, err := c.hooks.w.matches.SaveMatches(ctx, ownerID, core.X, []ports.PostMatches{{Post: p, PhraseIDs: []string{ph.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.hooks.w.matches.SetScores(ctx, []ports.ScoreUpdate{{Match: res.Matches[0], Score: sc}}, core.QueueMatchCreated)
	if err != nil || len(got) != 1 {
		t.Fatalf("SetScores: %+v, %v", got, err)
	}
	c.Poke()
	return got[0]
}

// hostile is a stranger's post full of each destination's markup: Slack's
// mentions and links, Discord's markdown and pings, Telegram's HTML.
var hostile = core.Post{
	Author: "@here <@U024BE7LH>",
	Title:  "<!channel> *urgent* <https://evil.example|your bank>",
	Text:   "<b>free</b> & </blockquote><a href=\"https://evil.example\">login</a>\n@everyone [click](https://evil.example) ~~x~~ `code` > quote",
	URL:    "https://x.com/ada/status/1",
}

// A match scored at or above each channel's score reaches Slack, Discord,
// Telegram and ntfy at once, once, written for each and escaped so that
// the stranger's text can neither break the message nor call anyone; the
// log says delivered, and no stored body holds a secret of a target.
func TestChannelsReachEachServiceEscaped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "chan@example.com")
	c := newChans(t, w, nil)
	c.start()
	chs := map[core.ChannelKind]core.Webhook{}
	for _, k := range core.ChannelKinds {
		chs[k] = c.add(t, o.ID, k, 70, "")
	}
	c.scorePost(t, o.ID, hostile, core.Score{Value: 40, Intent: core.IntentBuying, Reason: "weak"})
	m := c.scorePost(t, o.ID, hostile, core.Score{Value: 91, Intent: core.IntentBuying, Reason: "asks for <b>help</b> & @channel"})
	c.fake.waitFor(t, 1, core.ChannelKinds...)
	c.settle(t)

	for _, k := range core.ChannelKinds {
		got := c.fake.requests(k)
		if len(got) != 1 {
			t.Fatalf("%s took %d requests, want 1 (the match at 91, not the one at 40)", k, len(got))
		}
		ds := c.log(t, o.ID, chs[k].ID)
		if len(ds) != 1 || ds[0].Status != core.DeliveryDelivered || ds[0].MatchID != m.ID || ds[0].Tries != 1 {
			t.Fatalf("%s log %+v", k, ds)
		}
		for _, secret := range []string{fakeSlackPath, "abcdefghijklmnopqrstwxyz", fakeDiscordTok, fakeBotToken, "AAHdqTcvCH1v", fakeChatID, fakeNtfyTopic, fakeNtfyToken} {
			if strings.Contains(string(ds[0].Payload), secret) {
				t.Fatalf("%s's stored body holds %q: %s", k, secret, ds[0].Payload)
			}
		}
	}

	slack := c.fake.requests(core.ChannelSlack)[0]
	if slack.Path != fakeSlackPath {
		t.Errorf("slack path %s", slack.Path)
	}
	for _, raw := range []string{"<!channel>", "<@U024BE7LH>", "<https://evil.example|your bank>", "<b>"} {
		if strings.Contains(string(slack.Body), raw) {
			t.Errorf("slack body carries %q unescaped: %s", raw, slack.Body)
		}
	}
	if !strings.Contains(string(slack.Body), "&lt;!channel&gt;") {
		t.Errorf("slack body lacks the escaped mention: %s", slack.Body)
	}

	discord := c.fake.requests(core.ChannelDiscord)[0]
	var dbody struct {
		Embeds []struct {
			Title, Description string
		}
		AllowedMentions struct {
			Parse []string `json:"parse"`
		} `json:"allowed_mentions"`
	}
	if err := json.Unmarshal(discord.Body, &dbody); err != nil || len(dbody.Embeds) != 1 || dbody.AllowedMentions.Parse == nil || len(dbody.AllowedMentions.Parse) != 0 {
		t.Fatalf("discord body %s: %v", discord.Body, err)
	}
	if discord.Query != "wait=true" || discord.Path != "/api/webhooks/"+fakeDiscordID+"/"+fakeDiscordTok {
		t.Errorf("discord request %s?%s", discord.Path, discord.Query)
	}
	if d := dbody.Embeds[0].Description; strings.Contains(d, "[click](") || strings.Contains(d, " @everyone") && !strings.Contains(d, `\@everyone`) {
		t.Errorf("discord description carries live markdown: %q", d)
	}

	tg := c.fake.requests(core.ChannelTelegram)[0]
	var tbody struct {
		ChatID    int64  `json:"chat_id"`
		Text      string `json:"text"`
		ParseMode string `json:"parse_mode"`
	}
	if err := json.Unmarshal(tg.Body, &tbody); err != nil || tbody.ChatID != -1001234567890 || tbody.ParseMode != "HTML" {
		t.Fatalf("telegram body %s: %v", tg.Body, err)
	}
	if tg.Path != "/bot"+fakeBotToken+"/sendMessage" {
		t.Errorf("telegram path %s", tg.Path)
	}
	if strings.Contains(tbody.Text, "<b>free</b>") || strings.Contains(tbody.Text, `<a href="https://evil.example">`) || !strings.Contains(tbody.Text, "&lt;b&gt;free&lt;/b&gt; &amp;") {
		t.Errorf("telegram text carries the stranger's HTML: %q", tbody.Text)
	}

	nt := c.fake.requests(core.ChannelNtfy)[0]
	var nbody map[string]any
	if err := json.Unmarshal(nt.Body, &nbody); err != nil || nbody["topic"] != fakeNtfyTopic || nt.Path != "/" || nt.Auth != "Bearer "+fakeNtfyToken {
		t.Fatalf("ntfy request %s %q %s: %v", nt.Path, nt.Auth, nt.Body, err)
	}
	if md, ok := nbody["markdown"]; ok && md != false {
		t.Errorf("ntfy markdown %v", md)
	}
	if nbody["click"] != hostile.URL {
		t.Errorf("ntfy click %v", nbody["click"])
	}

	// The webhook routes see no channel, and the channel routes no webhook.
	list, err := c.svc.List(ctx, o.ID)
	if err != nil || len(list) != 0 {
		t.Fatalf("webhooks listed %+v, %v", list, err)
	}
	if all, err := c.All(ctx, o.ID); err != nil || len(all) != 4 {
		t.Fatalf("All = %d, %v", len(all), err)
	}
}

// A destination gone for good switches its channel off at its first
// answer, the service's own words and real status as the reason, and the
// owner gets the switch-off email naming the channel and the reason.
func TestChannelGoneSwitchesOffWithReasonAndEmail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	smtp := mailtest.NewServer(t)
	mailer, err := smtpmail.New(smtp.URL(), "earshot@example.com", quiet)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	notes := NewNotifications(NotificationDeps{Store: gormstore.NewNotificationStore(w.db), Owners: gormstore.NewOwnerStore(w.db), Mailer: mailer, Log: quiet}, func() string { return "http://earshot.test" })
	runCtx, stopNotes := context.WithCancel(ctx)
	notesDone := make(chan struct{})
	go func() { defer close(notesDone); notes.Run(runCtx, time.Hour) }() // only pokes wake it
	t.Cleanup(func() { stopNotes(); <-notesDone })
	c := newChans(t, w, notes.SwitchedOff)
	c.start()

	gone := map[core.ChannelKind]struct {
		status int
		body   string
		reason string
	}{
		core.ChannelSlack: {404, "no_service", "slack: the webhook was removed or turned off (no_service), http 404"},
		core.ChannelDiscord: {404, `{"message": "Unknown Webhook", "code": 10015}`,
			"discord: the webhook was deleted (code 10015), http 404"},
		core.ChannelTelegram: {403, `{"ok":false,"error_code":403,"description":"Forbidden: bot was blocked by the user"}`,
			"telegram: Forbidden: bot was blocked by the user, http 403"},
		core.ChannelNtfy: {401, `{"code":40101,"http":401,"error":"unauthorized","link":"https://ntfy.sh/docs/publish/#authentication"}`,
			"ntfy: the access token was refused (unauthorized (40101)), http 401"},
	}
	owners := map[string]core.ChannelKind{}
	chs := map[core.ChannelKind]core.Webhook{}
	for _, k := range core.ChannelKinds {
		c.fake.answer(k, gone[k].status, gone[k].body)
		o := w.owner(t, string(k)+"@example.com")
		owners[o.Email] = k
		chs[k] = c.add(t, o.ID, k, 0, "")
		c.scorePost(t, o.ID, hostile, core.Score{Value: 80, Intent: core.IntentBuying, Reason: "r"})
	}
	for _, k := range core.ChannelKinds {
		var got core.Webhook
		waitUntil(t, 5*time.Second, c.claims.wrote, func() bool {
			got, _, _ = c.hooks.store.Webhook(ctx, chs[k].OwnerID, chs[k].ID)
			return !got.Active
		}, func() string { return fmt.Sprintf("%s still on: %+v", k, got) })
		if want := "switched off at once: " + gone[k].reason; got.DisabledReason != want {
			t.Errorf("%s reason %q, want %q", k, got.DisabledReason, want)
		}
		ds := c.log(t, got.OwnerID, got.ID)
		if len(ds) != 1 || ds[0].Status != core.DeliveryFailed || ds[0].Tries != 1 || ds[0].Error != gone[k].reason {
			t.Errorf("%s log %+v", k, ds)
		}
	}
	c.settle(t)
	mail := smtp.WaitFor(len(core.ChannelKinds), 5*time.Second)
	for _, m := range mail {
		k := owners[m.To[0]]
		if !strings.Contains(m.Body, gone[k].reason) || !strings.Contains(m.Body, k.Label()+" channel") ||
			!strings.Contains(m.Body, "/api/v1/channels/"+chs[k].ID) || strings.Contains(m.Body, fakeBotToken) || strings.Contains(m.Body, fakeDiscordTok) {
			t.Errorf("switch-off email to %s: %s", m.To[0], m.Body)
		}
	}
	if len(mail) != len(core.ChannelKinds) {
		t.Fatalf("%d emails", len(mail))
	}
}

// A digest channel gets nothing per match: at its hour, on a clock the
// test moves, one message of the period's matches it wants, strongest
// first, with the rest counted; a period without matches sends nothing,
// and a sweep again in the same period sends nothing more.
func TestChannelDigestOnMovedClock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "digest@example.com")
	c := newChans(t, w, nil)
	c.start()
	start := c.clock.Now()
	slack := c.add(t, o.ID, core.ChannelSlack, 50, "hourly")
	// Daily at the hour two hours from now, in a zone five and a half
	// hours ahead of UTC.
	zone := time.FixedZone("UTC+05:30", 5*3600+30*60)
	in := c.fake.newTarget(core.ChannelTelegram)
	zero := 0
	in.MinScore, in.Frequency, in.Hour, in.Zone = &zero, "daily", start.Add(2*time.Hour).In(zone).Hour(), "+05:30"
	daily, err := c.Create(ctx, o.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if !slack.LastDigestAt.Equal(start.Truncate(time.Microsecond)) || !daily.Schedule.Digest() {
		t.Fatalf("created %+v and %+v", slack, daily)
	}

	scores := []int{55, 97, 60, 88, 72, 91, 65, 79, 83, 58, 94, 70, 30}
	for i, v := range scores {
		p := hostile
		p.Title = fmt.Sprintf("post %d scored %d", i, v)
		c.scorePost(t, o.ID, p, core.Score{Value: v, Intent: core.IntentBuying, Reason: "r"})
	}
	sweep := func(want int) {
		t.Helper()
		if n, err := c.digests.Sweep(ctx); err != nil || n != want {
			t.Fatalf("at %v a sweep queued %d, %v; want %d", c.clock.Now().Sub(start), n, err, want)
		}
	}
	sweep(0) // neither is due yet
	c.clock.add(30 * time.Minute)
	sweep(0)
	c.clock.add(30 * time.Minute)
	sweep(1) // the hourly one
	sweep(0) // once a period
	c.fake.waitFor(t, 1, core.ChannelSlack)

	ds := c.log(t, o.ID, slack.ID)
	if len(ds) != 1 || ds[0].Event != core.EventDigest || ds[0].MatchID != "" {
		t.Fatalf("slack log %+v", ds)
	}
	text := string(c.fake.requests(core.ChannelSlack)[0].Body)
	// Twelve at or above 50: the strongest ten, strongest first, then
	// "and 2 more"; the one at 30 not counted.
	last := -1
	for _, v := range []int{97, 94, 91, 88, 83, 79, 72, 70, 65, 60} {
		i := strings.Index(text, fmt.Sprintf("scored %d", v))
		if i < 0 || i < last {
			t.Fatalf("the digest lists %d out of order or not at all: %s", v, text)
		}
		last = i
	}
	for _, v := range []int{58, 55, 30} {
		if strings.Contains(text, fmt.Sprintf("scored %d", v)) {
			t.Fatalf("the digest lists %d: %s", v, text)
		}
	}
	if !strings.Contains(text, "2 more") || strings.Contains(text, "<!channel>") {
		t.Fatalf("the digest: %s", text)
	}
	if len(c.fake.requests(core.ChannelTelegram)) != 0 {
		t.Fatal("the daily channel sent before its hour")
	}

	// The next hour had no match: nothing goes out, though the period ends.
	c.clock.add(time.Hour)
	sweep(1) // the daily one, at its hour, with the thirteen of its period
	sweep(0)
	c.fake.waitFor(t, 1, core.ChannelTelegram)
	if got, _, _ := c.hooks.store.Webhook(ctx, o.ID, slack.ID); !got.LastDigestAt.Equal(c.clock.Now().Truncate(time.Microsecond)) {
		t.Fatalf("the empty hourly period did not end: %+v", got)
	}
	var tg struct{ Text string }
	if err := json.Unmarshal(c.fake.requests(core.ChannelTelegram)[0].Body, &tg); err != nil ||
		!strings.Contains(tg.Text, "scored 97") || !strings.Contains(tg.Text, "3 more") {
		t.Fatalf("the daily digest: %s, %v", tg.Text, err)
	}
	c.clock.add(time.Hour)
	sweep(0)
	c.settle(t)
	if n := len(c.fake.requests(core.ChannelSlack)); n != 1 {
		t.Fatalf("slack took %d messages, want the one digest", n)
	}
}

// A channel moved from one digest to another keeps its period: what was
// scored since its last digest goes out in the next one, as it would
// have without the change, rather than in none.
func TestChannelDigestChangeKeepsItsPeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "moved@example.com")
	c := newChans(t, w, nil)
	c.start()
	start := c.clock.Now()
	slack := c.add(t, o.ID, core.ChannelSlack, 50, "hourly")
	for _, v := range []int{80, 90} {
		p := hostile
		p.Title = fmt.Sprintf("post scored %d", v)
		c.scorePost(t, o.ID, p, core.Score{Value: v, Intent: core.IntentBuying, Reason: "r"})
	}
	c.clock.add(30 * time.Minute)
	daily, hour := "daily", start.Add(2*time.Hour).Hour()
	up, err := c.Update(ctx, o.ID, slack.ID, ports.ChannelChange{Frequency: &daily, Hour: &hour})
	if err != nil || up.Schedule.Frequency != core.AlertDaily || !up.LastDigestAt.Equal(slack.LastDigestAt) {
		t.Fatalf("moved to daily: %+v, %v; want the period begun at %v kept", up, err, slack.LastDigestAt)
	}
	c.clock.add(90 * time.Minute)
	if n, err := c.digests.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("at the daily hour a sweep queued %d, %v; want the digest of the two matches", n, err)
	}
	c.fake.waitFor(t, 1, core.ChannelSlack)
	if text := string(c.fake.requests(core.ChannelSlack)[0].Body); !strings.Contains(text, "scored 80") || !strings.Contains(text, "scored 90") {
		t.Fatalf("the digest: %s", text)
	}
}

// Each field's rule answers with its own words, no token repeated; the
// plan's limit counts webhooks and channels together; a channel id is
// unknown to the webhook routes and a webhook id to the channel routes;
// a change of destination is checked and shown redacted; a test message
// is logged as a ping.
func TestChannelRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newWorld(t)
	o := w.owner(t, "rules@example.com")
	c := newChans(t, w, nil)
	for _, tc := range []struct {
		in   ports.NewChannel
		want string
	}{
		{ports.NewChannel{Kind: "email"}, "kind must be one of slack, discord, telegram, ntfy"},
		{ports.NewChannel{Kind: "slack", URL: "https://example.com/x"}, "url must be a Slack incoming webhook address"},
		{ports.NewChannel{Kind: "slack", URL: c.fake.srv.URL + fakeSlackPath, Token: "x"}, "token is not used for Slack"},
		{ports.NewChannel{Kind: "telegram", Token: "123456789:short", ChatID: "1"}, "token must be a Telegram bot token"},
		{ports.NewChannel{Kind: "telegram", Token: fakeBotToken, ChatID: "me"}, "chat_id must be"},
		{ports.NewChannel{Kind: "ntfy", URL: c.fake.srv.URL + "/" + fakeNtfyTopic, Frequency: "off"}, "frequency off is not for a channel"},
		{ports.NewChannel{Kind: "ntfy", URL: c.fake.srv.URL + "/" + fakeNtfyTopic, Frequency: "weekly"}, "frequency must be one of at once, hourly, daily"},
		{ports.NewChannel{Kind: "ntfy", URL: c.fake.srv.URL + "/" + fakeNtfyTopic, Frequency: "daily", Hour: 24}, "hour must be 0 to 23"},
		{ports.NewChannel{Kind: "ntfy", URL: c.fake.srv.URL + "/" + fakeNtfyTopic, Platforms: []string{"myspace"}}, "platforms"},
	} {
		_, err := c.Create(ctx, o.ID, tc.in)
		if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), tc.want) || strings.Contains(core.Message(err), "AAHdq") {
			t.Errorf("Create(%+v) = %v, want invalid: %s", tc.in, err, tc.want)
		}
	}
	if all, _ := c.All(ctx, o.ID); len(all) != 0 {
		t.Fatalf("refused creates stored %+v", all)
	}

	tg := c.add(t, o.ID, core.ChannelTelegram, 70, "")
	if tg.URL != "telegram chat "+fakeChatID+" (bot 123456…)" || strings.Contains(tg.URL, "AAHdq") {
		t.Fatalf("shown as %q", tg.URL)
	}
	hook, _, err := c.svc.Create(ctx, o.ID, "http://127.0.0.1:1/hook", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	on := true
	for name, err := range map[string]error{
		"webhook update": func() error { _, err := c.svc.Update(ctx, o.ID, tg.ID, ports.WebhookChange{Active: &on}); return err }(),
		"webhook delete": c.svc.Delete(ctx, o.ID, tg.ID),
		"webhook log":    func() error { _, err := c.svc.Deliveries(ctx, o.ID, tg.ID); return err }(),
		"webhook test":   func() error { _, err := c.svc.Test(ctx, o.ID, tg.ID, nil); return err }(),
		"webhook rotate": func() error { _, _, err := c.svc.RotateSecret(ctx, o.ID, tg.ID, nil); return err }(),
		"webhook replay": func() error { _, err := c.svc.Replay(ctx, o.ID, tg.ID, time.Unix(1, 0), time.Time{}, nil); return err }(),
		"webhook retry":  func() error { _, err := c.svc.Retry(ctx, o.ID, tg.ID, "x", nil); return err }(),
		"channel get":    func() error { _, err := c.Get(ctx, o.ID, hook.ID); return err }(),
		"channel update": func() error { _, err := c.Update(ctx, o.ID, hook.ID, ports.ChannelChange{Active: &on}); return err }(),
		"channel delete": c.Delete(ctx, o.ID, hook.ID),
		"channel log":    func() error { _, err := c.Deliveries(ctx, o.ID, hook.ID); return err }(),
		"channel test":   func() error { _, err := c.Channels.Test(ctx, o.ID, hook.ID, nil); return err }(),
		"channel replay": func() error {
			_, err := c.Channels.Replay(ctx, o.ID, hook.ID, time.Unix(1, 0), time.Time{}, nil)
			return err
		}(),
		"channel retry":   func() error { _, err := c.Channels.Retry(ctx, o.ID, hook.ID, "x", nil); return err }(),
		"channel unknown": func() error { _, err := c.Get(ctx, o.ID, "no-such-id"); return err }(),
		"channel update ?": func() error {
			_, err := c.Update(ctx, o.ID, "no-such-id", ports.ChannelChange{Active: &on})
			return err
		}(),
	} {
		if !core.IsKind(err, core.KindNotFound) {
			t.Errorf("%s across kinds: %v", name, err)
		}
	}

	// Three of three: a webhook and a channel, and one more of either is refused.
	c3 := NewChannels(ChannelDeps{Webhooks: NewWebhooks(WebhookDeps{Store: c.hooks.store, Sealer: c.sealer, Log: quiet},
		WebhookConfig{Limits: core.Limits{WebhooksPerPerson: 3}, AllowPrivate: true}), Store: c.cstore})
	if _, err := c3.Create(ctx, o.ID, c.fake.newTarget(core.ChannelNtfy)); err != nil {
		t.Fatal(err)
	}
	if _, err := c3.Create(ctx, o.ID, c.fake.newTarget(core.ChannelSlack)); !core.IsKind(err, core.KindPlanLimit) {
		t.Fatalf("a fourth destination on a plan of 3: %v", err)
	}

	// A new chat id: checked, sealed, shown redacted; the token kept.
	chat := "@earshot_leads"
	up, err := c.Update(ctx, o.ID, tg.ID, ports.ChannelChange{ChatID: &chat})
	if err != nil || up.URL != "telegram chat @earshot_leads (bot 123456…)" {
		t.Fatalf("new chat: %+v, %v", up, err)
	}
	bad := "not a token"
	if _, err := c.Update(ctx, o.ID, tg.ID, ports.ChannelChange{Token: &bad}); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("a bad token: %v", err)
	}
	if _, err := c.Update(ctx, o.ID, tg.ID, ports.ChannelChange{}); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("an empty change: %v", err)
	}
	hourly := "hourly"
	c.clock.add(time.Minute)
	up, err = c.Update(ctx, o.ID, tg.ID, ports.ChannelChange{Frequency: &hourly})
	if err != nil || up.Schedule.Frequency != core.AlertHourly || !up.LastDigestAt.Equal(c.clock.Now().Truncate(time.Microsecond)) {
		t.Fatalf("put on a digest: %+v, %v", up, err)
	}

	res, err := c.Channels.Test(ctx, o.ID, tg.ID, nil)
	if err != nil || !res.Delivered() {
		t.Fatalf("test message: %+v, %v", res, err)
	}
	sent := c.fake.requests(core.ChannelTelegram)
	var body struct {
		ChatID string `json:"chat_id"`
		Text   string `json:"text"`
	}
	if len(sent) != 1 || json.Unmarshal(sent[0].Body, &body) != nil || body.ChatID != chat || !strings.Contains(body.Text, "test message") {
		t.Fatalf("the test message went as %+v", sent)
	}
	ds, err := c.Deliveries(ctx, o.ID, tg.ID)
	if err != nil || len(ds) != 1 || ds[0].Trigger != core.TriggerPing || ds[0].Status != core.DeliveryDelivered {
		t.Fatalf("log after the test: %+v, %v", ds, err)
	}
	if _, err := c.Channels.Retry(ctx, o.ID, tg.ID, ds[0].ID, nil); !core.IsKind(err, core.KindInvalidRequest) || !strings.Contains(core.Message(err), "/channels/") {
		t.Fatalf("retrying the test: %v", err)
	}
	if err := c.Delete(ctx, o.ID, tg.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, o.ID, tg.ID); !core.IsKind(err, core.KindNotFound) || core.Message(err) != "channel not found" {
		t.Fatalf("after delete: %v", err)
	}
}

// log is the channel's delivery log.
func (c *chans) log(t *testing.T, ownerID, id string) []core.Delivery {
	t.Helper()
	ds, err := c.Channels.Deliveries(context.Background(), ownerID, id)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}
