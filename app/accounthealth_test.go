package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/mailtest"
)

// healthWorld is the account health and notification services over a
// world's database, with the helper endpoints in front of them.
type healthWorld struct {
	world
	keys   *Keys
	health *AccountHealth
	notes  *Notifications
	srv    *httptest.Server
}

func newHealthWorld(t *testing.T, limits core.Limits, mailer ports.Mailer) healthWorld {
	t.Helper()
	w := newWorld(t)
	keys := NewKeys(gormstore.NewKeyStore(w.db), gormstore.NewOwnerStore(w.db), ports.SystemClock{})
	if mailer == nil {
		mailer = smtpmail.NewLogMailer(quiet)
	}
	n := newNotes(w, mailer)
	h := NewAccountHealth(AccountHealthDeps{Accounts: gormstore.NewAccountStore(w.db), Store: gormstore.NewAccountHealthStore(w.db),
		Notified: n.Poke}, limits)
	helper := httpapi.NewHelper(httpapi.HelperConfig{Logger: quiet}, keys, nil, nil)
	helper.HandleAccountStatus(h)
	srv := httptest.NewServer(helper)
	t.Cleanup(srv.Close)
	return healthWorld{world: w, keys: keys, health: h, notes: n, srv: srv}
}

// newNotes is the notification service over w's database, its emails
// linking to http://earshot.test.
func newNotes(w world, mailer ports.Mailer) *Notifications {
	return NewNotifications(NotificationDeps{Store: gormstore.NewNotificationStore(w.db), Owners: gormstore.NewOwnerStore(w.db),
		Mailer: mailer, Log: quiet}, func() string { return "http://earshot.test" })
}

// ownerWithKeys makes an owner with an ingest key and an API key.
func (hw healthWorld) ownerWithKeys(t *testing.T, email string) (core.Owner, string, string) {
	t.Helper()
	o := hw.owner(t, email)
	ingest, _, err := hw.keys.CreateIngestKey(context.Background(), o.ID, "helper")
	if err != nil {
		t.Fatal(err)
	}
	api, _, err := hw.keys.CreateAPIKey(context.Background(), o.ID, "api", core.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	return o, ingest, api
}

type viewJSON struct {
	AccountID      *string `json:"accountId"`
	Platform       string  `json:"platform"`
	State          string  `json:"state"`
	Issue          *string `json:"issue"`
	Action         string  `json:"action"`
	RequiresAction bool    `json:"requiresAction"`
	RetryAfter     *int    `json:"retryAfter"` // seconds; absent when the account has no retry time
}

// report posts body to /account-status with key and returns the status
// and the decoded answer (the view, or the error body's code).
func (hw healthWorld) report(t *testing.T, key, body string) (int, viewJSON, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", hw.srv.URL+"/account-status", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var v viewJSON
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if res.StatusCode == 200 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
	} else if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("error answer %s: %v", raw, err)
	}
	return res.StatusCode, v, e.Error.Code
}

func (hw healthWorld) statusOf(t *testing.T, ownerID string, p core.Platform) health.Status {
	t.Helper()
	list, err := hw.health.Accounts(context.Background(), ownerID)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range list {
		if st.Platform == p {
			return st
		}
	}
	t.Fatalf("no status for %s", p)
	return health.Status{}
}

func (hw healthWorld) notifications(t *testing.T, ownerID string) NotificationList {
	t.Helper()
	l, err := hw.notes.List(context.Background(), ownerID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

const (
	fbCheckpoint = `{"platform":"facebook","status":400,"code":190,"subcode":459}`
	fbHealthy    = `{"platform":"facebook","status":200,"body":"{\"data\":[]}"}`
)

func TestAccountStatusAnswersTheView(t *testing.T) {
	t.Parallel()
	hw := newHealthWorld(t, core.Limits{AccountsPerPlatform: 1}, nil)
	o, ingest, _ := hw.ownerWithKeys(t, "a@example.com")
	code, v, _ := hw.report(t, ingest, fbCheckpoint)
	if code != 200 {
		t.Fatalf("status %d", code)
	}
	st := hw.statusOf(t, o.ID, core.Facebook)
	if v.AccountID == nil || *v.AccountID != st.AccountID || v.Platform != "facebook" || v.State != "action_required" ||
		v.Issue == nil || *v.Issue != "checkpointed" || v.Action != "open_challenge" || !v.RequiresAction {
		t.Fatalf("view %+v", v)
	}
	if st.LastIssue != health.Checkpointed || st.RawSignal == nil || st.RawSignal.Code != 190 || st.RawSignal.Subcode != 459 ||
		st.LastCheckedAt.IsZero() || !st.RetryAfter.IsZero() {
		t.Fatalf("stored %+v", st.Record)
	}
	// Rate limited on x, through the proxy: degraded, wait, a retry time.
	code, v, _ = hw.report(t, ingest, `{"platform":"x","status":429,"code":88,"viaProxy":true}`)
	if code != 200 || v.State != "degraded" || v.Issue == nil || *v.Issue != "rate_limited" || v.Action != "wait" || v.RequiresAction ||
		v.RetryAfter == nil || *v.RetryAfter != int(health.RateLimitedRetry/time.Second) {
		t.Fatalf("x view %d %+v", code, v)
	}
	if st := hw.statusOf(t, o.ID, core.X); st.RetryAfter.Sub(st.LastCheckedAt) != health.RateLimitedRetry || !st.RawSignal.ViaProxy {
		t.Fatalf("x stored %+v", st.Record)
	}
	// A healthy answer clears the rate limit but not the checkpoint.
	if code, v, _ = hw.report(t, ingest, `{"platform":"x","status":200}`); code != 200 || v.State != "healthy" || v.Issue != nil || v.Action != "none" {
		t.Fatalf("x after a healthy answer %d %+v", code, v)
	}
	if code, v, _ = hw.report(t, ingest, fbHealthy); code != 200 || v.State != "action_required" || v.Issue == nil || *v.Issue != "checkpointed" {
		t.Fatalf("a healthy answer cleared a challenge: %d %+v", code, v)
	}
	// Only resolve clears it.
	res, err := hw.health.Resolve(context.Background(), o.ID, st.AccountID)
	if err != nil || res.State != health.Healthy || res.LastIssue != health.None || res.RawSignal != nil {
		t.Fatalf("Resolve = %+v, %v", res, err)
	}
	_, err = hw.health.Resolve(context.Background(), o.ID, st.AccountID)
	if !core.IsKind(err, core.KindConflict) || httpapi.Status(err) != 409 {
		t.Fatalf("second Resolve = %v, want 409", err)
	}
	// Reddit was never reported: not connected.
	if st := hw.statusOf(t, o.ID, core.Reddit); st.State != health.NotConnected || st.Action != health.Connect || st.AccountID != "" {
		t.Fatalf("reddit %+v", st)
	}
}

func TestAccountStatusRefusals(t *testing.T) {
	t.Parallel()
	hw := newHealthWorld(t, core.Limits{AccountsPerPlatform: 1}, nil)
	o, ingest, api := hw.ownerWithKeys(t, "a@example.com")
	for _, tc := range []struct {
		name, key, body string
		status          int
		code            string
	}{
		{"API key", api, fbCheckpoint, 401, "unauthorized"},
		{"no key", "", fbCheckpoint, 401, "unauthorized"},
		{"not JSON", ingest, `platform=facebook`, 400, "invalid_json"},
		{"not an object", ingest, `["facebook"]`, 400, "invalid_json"},
		{"empty", ingest, ``, 400, "invalid_json"},
		{"no platform", ingest, `{"status":200}`, 400, "invalid_parameter"},
		{"unknown platform", ingest, `{"platform":"myspace","status":200}`, 400, "invalid_parameter"},
		{"wrong type", ingest, `{"platform":"facebook","status":"200"}`, 400, "invalid_parameter"},
		{"unknown field", ingest, `{"platform":"facebook","status":200,"retry":5}`, 400, "invalid_parameter"},
		{"no status", ingest, `{"platform":"facebook","code":190,"subcode":459}`, 400, "invalid_parameter"},
		{"status and noResponse", ingest, `{"platform":"facebook","status":200,"noResponse":true}`, 400, "invalid_parameter"},
		{"negative code", ingest, `{"platform":"facebook","status":400,"code":-4}`, 400, "invalid_parameter"},
		{"body too long", ingest, `{"platform":"facebook","status":200,"body":"` + strings.Repeat("a", health.MaxSignalBody+1) + `"}`, 400, "invalid_parameter"},
		{"request too large", ingest, `{"platform":"facebook","status":200,"body":"` + strings.Repeat("a", 20<<10) + `"}`, 413, "payload_too_large"},
	} {
		code, _, errCode := hw.report(t, tc.key, tc.body)
		if code != tc.status || errCode != tc.code {
			t.Errorf("%s: %d %s, want %d %s", tc.name, code, errCode, tc.status, tc.code)
		}
	}
	// Nothing was stored: no account connected, no notification.
	for _, st := range mustAccounts(t, hw, o.ID) {
		if st.State != health.NotConnected {
			t.Fatalf("a refused report connected %s: %+v", st.Platform, st)
		}
	}
	if l := hw.notifications(t, o.ID); len(l.Items) != 0 {
		t.Fatalf("refused reports made %d notifications", len(l.Items))
	}
}

func mustAccounts(t *testing.T, hw healthWorld, ownerID string) []health.Status {
	t.Helper()
	list, err := hw.health.Accounts(context.Background(), ownerID)
	if err != nil || len(list) != len(core.Platforms) {
		t.Fatalf("Accounts = %d, %v", len(list), err)
	}
	return list
}

func TestAccountStatusPlanLimit(t *testing.T) {
	t.Parallel()
	hw := newHealthWorld(t, core.Limits{AccountsPerPlatform: 0}, nil)
	_, ingest, _ := hw.ownerWithKeys(t, "a@example.com")
	if code, _, errCode := hw.report(t, ingest, fbCheckpoint); code != 403 || errCode != "plan_limit" {
		t.Fatalf("past the account limit: %d %s", code, errCode)
	}
}

// One owner's key never reads or changes another's account, over the
// route and through the dashboard's calls.
func TestAccountStatusTwoOwners(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hw := newHealthWorld(t, core.Limits{AccountsPerPlatform: 1}, nil)
	a, aKey, _ := hw.ownerWithKeys(t, "a@example.com")
	b, bKey, _ := hw.ownerWithKeys(t, "b@example.com")

	_, va, _ := hw.report(t, aKey, fbCheckpoint)
	if st := hw.statusOf(t, b.ID, core.Facebook); st.State != health.NotConnected {
		t.Fatalf("a's report reached b: %+v", st)
	}
	code, vb, _ := hw.report(t, bKey, fbHealthy)
	if code != 200 || vb.AccountID == nil || *vb.AccountID == *va.AccountID || vb.State != "healthy" {
		t.Fatalf("b's report: %d %+v (a's account %s)", code, vb, *va.AccountID)
	}
	if st := hw.statusOf(t, a.ID, core.Facebook); st.AccountID != *va.AccountID || st.LastIssue != health.Checkpointed {
		t.Fatalf("b's report changed a's account: %+v", st)
	}
	if l := hw.notifications(t, b.ID); len(l.Items) != 0 || l.Unread != 0 {
		t.Fatalf("b sees %d notifications, a's checkpoint among them", len(l.Items))
	}
	la := hw.notifications(t, a.ID)
	if len(la.Items) != 1 {
		t.Fatalf("a has %d notifications", len(la.Items))
	}
	// b cannot resolve a's account, nor mark a's notification read.
	if _, err := hw.health.Resolve(ctx, b.ID, *va.AccountID); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("b resolving a's account: %v", err)
	}
	if err := hw.notes.MarkRead(ctx, b.ID, la.Items[0].ID); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("b marking a's notification read: %v", err)
	}
	if n, err := hw.notes.MarkAllRead(ctx, b.ID); err != nil || n != 0 {
		t.Fatalf("b's MarkAllRead = %d, %v", n, err)
	}
	if st := hw.statusOf(t, a.ID, core.Facebook); st.LastIssue != health.Checkpointed {
		t.Fatal("b's calls cleared a's challenge")
	}
	if hw.notifications(t, a.ID).Unread != 1 {
		t.Fatal("b's calls marked a's notification read")
	}
}

// The legacy spec's table (section 6): a notification only when the state
// or the normalised issue changes; recoveries make one; a repeated report
// makes none. Those that need action owe an email.
func TestHealthNotificationsFollowTheSpecTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hw := newHealthWorld(t, core.Limits{AccountsPerPlatform: 1}, nil)
	o, ingest, _ := hw.ownerWithKeys(t, "a@example.com")
	steps := []struct {
		name     string
		body     string // empty: resolve
		severity string // empty: no notification
		email    bool
	}{
		{"first healthy answer is the baseline", fbHealthy, "", false},
		{"null to checkpointed", fbCheckpoint, "alert", true},
		{"checkpointed again", fbCheckpoint, "", false},
		{"healthy answer keeps the challenge", fbHealthy, "", false},
		{"checkpointed to null by resolve", "", "recovery", false},
		{"null to rate_limited", `{"platform":"facebook","status":400,"code":17}`, "info", false},
		{"rate_limited again", `{"platform":"facebook","status":429}`, "", false},
		{"rate_limited to null", fbHealthy, "recovery", false},
		{"null to session_expired", `{"platform":"facebook","status":401}`, "alert", true},
		{"session_expired to session_expired", `{"platform":"facebook","status":400,"code":190,"subcode":463}`, "", false},
		{"session_expired to captcha_html", `{"platform":"facebook","status":200,"body":"<div class=\"g-recaptcha\">"}`, "alert", true},
		{"captcha_html to challenge_interstitial", `{"platform":"facebook","status":403,"body":"<title>Just a moment...</title>"}`, "alert", true},
		{"challenge resolved", "", "recovery", false},
		{"null to network_error", `{"platform":"facebook","noResponse":true}`, "info", false},
	}
	seen := 0
	for _, s := range steps {
		if s.body == "" {
			acc := hw.statusOf(t, o.ID, core.Facebook).AccountID
			if _, err := hw.health.Resolve(ctx, o.ID, acc); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		} else if code, _, _ := hw.report(t, ingest, s.body); code != 200 {
			t.Fatalf("%s: status %d", s.name, code)
		}
		l := hw.notifications(t, o.ID)
		if s.severity == "" {
			if len(l.Items) != seen {
				t.Fatalf("%s: made a notification: %+v", s.name, l.Items[0])
			}
			continue
		}
		if len(l.Items) != seen+1 {
			t.Fatalf("%s: %d notifications, want %d", s.name, len(l.Items), seen+1)
		}
		seen++
		n := l.Items[0]
		if n.Severity != s.severity || n.Email != s.email || n.Kind != core.NotifyAccountHealth || n.Platform != core.Facebook || n.Title == "" || n.Message == "" {
			t.Fatalf("%s: %+v", s.name, n)
		}
		if l.Unread != seen {
			t.Fatalf("%s: %d unread of %d", s.name, l.Unread, seen)
		}
	}
	l := hw.notifications(t, o.ID)
	if err := hw.notes.MarkRead(ctx, o.ID, l.Items[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := hw.notifications(t, o.ID).Unread; got != seen-1 {
		t.Fatalf("%d unread after one read, want %d", got, seen-1)
	}
	if n, err := hw.notes.MarkAllRead(ctx, o.ID); err != nil || n != seen-1 {
		t.Fatalf("MarkAllRead = %d, %v", n, err)
	}
	if got := hw.notifications(t, o.ID).Unread; got != 0 {
		t.Fatalf("%d unread after all read", got)
	}
}

// Notifications that need action are emailed once, through a real SMTP
// conversation; a refused send is tried again and still sent once.
func TestNotificationEmailsSentOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	smtp := mailtest.NewServer(t)
	mailer, err := smtpmail.New(smtp.URL(), "earshot@example.com", quiet)
	if err != nil {
		t.Fatal(err)
	}
	hw := newHealthWorld(t, core.Limits{AccountsPerPlatform: 1}, mailer)
	_, ingest, _ := hw.ownerWithKeys(t, "ana@example.com")
	hw.report(t, ingest, fbCheckpoint)                         // alert: emailed
	hw.report(t, ingest, fbCheckpoint)                         // nothing new
	hw.report(t, ingest, `{"platform":"x","status":429}`)      // info: listed only
	hw.report(t, ingest, `{"platform":"reddit","status":401}`) // alert: emailed
	hw.report(t, ingest, `{"platform":"reddit","status":401}`) // nothing new

	smtp.RejectWith(451, "try again later")
	if n, err := hw.notes.SendEmails(ctx); err != nil || n != 0 {
		t.Fatalf("SendEmails against a refusing server = %d, %v", n, err)
	}
	// The refused ones are leased: nothing is sent twice meanwhile.
	smtp.RejectWith(0, "")
	if n, _ := hw.notes.SendEmails(ctx); n != 0 {
		t.Fatalf("%d emails sent while their claims still ran", n)
	}
	expireEmailLeases(t, hw.world)
	if n, err := hw.notes.SendEmails(ctx); err != nil || n != 2 {
		t.Fatalf("SendEmails = %d, %v; want the 2 alerts", n, err)
	}
	expireEmailLeases(t, hw.world)
	if n, err := hw.notes.SendEmails(ctx); err != nil || n != 0 {
		t.Fatalf("second SendEmails = %d, %v; want none", n, err)
	}
	msgs := smtp.Messages()
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want 2", len(msgs))
	}
	var subjects []string
	for _, m := range msgs {
		if len(m.To) != 1 || m.To[0] != "ana@example.com" {
			t.Fatalf("sent to %v", m.To)
		}
		subjects = append(subjects, m.Subject)
	}
	all := strings.Join(subjects, "\n")
	if !strings.Contains(all, "Your facebook account needs you: The platform wants to verify the account") ||
		!strings.Contains(all, "Your reddit account needs you: Session expired") {
		t.Fatalf("subjects %q", subjects)
	}
	for _, m := range msgs {
		if strings.Contains(m.Subject, "facebook") && (!strings.Contains(m.Body, "open challenge") || !strings.Contains(m.Body, "http://earshot.test/app/")) {
			t.Fatalf("body %q", m.Body)
		}
	}
}

// emailWatch is a notification store that tells of each email marked
// sent.
type emailWatch struct {
	ports.NotificationStore
	marked signal
}

func (s *emailWatch) MarkEmailed(ctx context.Context, id string, at time.Time) error {
	defer s.marked.notify()
	return s.NotificationStore.MarkEmailed(ctx, id, at)
}

// expireEmailLeases ends every claim on owed emails, as time would.
func expireEmailLeases(t *testing.T, w world) {
	t.Helper()
	if _, err := w.db.SQL().Exec("UPDATE notifications SET lease_until = 0"); err != nil {
		t.Fatal(err)
	}
}

// A webhook that switches itself off emails its owner once, naming it and
// the reason, however many failures follow.
func TestWebhookSwitchOffEmailsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	smtp := mailtest.NewServer(t)
	mailer, err := smtpmail.New(smtp.URL(), "earshot@example.com", quiet)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	o := w.owner(t, "wes@example.com")
	other := w.owner(t, "olga@example.com")
	emailed := &emailWatch{NotificationStore: gormstore.NewNotificationStore(w.db), marked: newSignal()}
	notes := NewNotifications(NotificationDeps{Store: emailed, Owners: gormstore.NewOwnerStore(w.db), Mailer: mailer, Log: quiet},
		func() string { return "http://earshot.test" })
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); notes.Run(runCtx, time.Hour) }() // only pokes wake it
	t.Cleanup(func() { stop(); <-done })
	// allEmailed waits until every notification of the owner is emailed.
	allEmailed := func() {
		t.Helper()
		var l NotificationList
		waitUntil(t, 5*time.Second, emailed.marked, func() bool {
			var err error
			if l, err = notes.List(ctx, o.ID, 0); err != nil {
				t.Fatal(err)
			}
			return !slices.ContainsFunc(l.Items, func(n core.Notification) bool { return n.EmailedAt.IsZero() })
		}, func() string { return fmt.Sprintf("notifications not emailed: %+v", l.Items) })
	}

	// One try each; every switch-off is recorded for the owner.
	switchedOff := make(chan struct{}, 2*core.MaxConsecutiveFailures)
	h := newHooksWith(t, w, DeliveryConfig{Schedule: core.RetrySchedule{}}, func(ctx context.Context, wh core.Webhook) {
		if err := notes.WebhookSwitchedOff(ctx, wh); err != nil {
			t.Error(err)
		}
		switchedOff <- struct{}{}
	})
	h.start()
	wh, rcv := h.webhook(t, o.ID, 0)
	rcv.SetStatus(500)
	// More than five: the failures after the fifth, claimed while the
	// webhook was still on, are recorded after the switch-off.
	h.score(t, o.ID, core.MaxConsecutiveFailures+3, 80)
	select {
	case <-switchedOff:
	case <-time.After(5 * time.Second):
		t.Fatal("the webhook was not switched off")
	}
	smtp.WaitFor(1, 5*time.Second)
	// The worker stopped: it returns once every send it made is answered
	// and stored, so each switch-off it told of is stored. (Deliveries not
	// claimed before the switch-off stay queued, so waiting for all to be
	// final would wait on a race.) Once all are emailed, a second, wrong
	// email is out.
	h.stop()
	allEmailed()
	if n, err := notes.SendEmails(ctx); err != nil || n != 0 {
		t.Fatalf("SendEmails after the switch-off email = %d, %v", n, err)
	}
	msgs := smtp.Messages()
	if len(msgs) != 1 {
		t.Fatalf("%d emails for one switch-off", len(msgs))
	}
	got, _, _ := h.store.Webhook(ctx, o.ID, wh.ID)
	m := msgs[0]
	if got.Active || len(m.To) != 1 || m.To[0] != "wes@example.com" || !strings.Contains(m.Subject, wh.URL) ||
		!strings.Contains(m.Body, wh.ID) || !strings.Contains(m.Body, got.DisabledReason) || !strings.Contains(m.Body, "http 500") {
		t.Fatalf("webhook %+v; email to %v %q\n%s", got, m.To, m.Subject, m.Body)
	}
	l, err := notes.List(ctx, o.ID, 0)
	if err != nil || len(l.Items) != 1 || l.Items[0].Kind != core.NotifyWebhookOff || l.Items[0].SubjectID != wh.ID || l.Items[0].EmailedAt.IsZero() {
		t.Fatalf("owner's notifications %+v, %v", l.Items, err)
	}
	if l, _ := notes.List(ctx, other.ID, 0); len(l.Items) != 0 {
		t.Fatal("another owner was told of the switch-off")
	}

	// Switched on and off again: a second switch-off, a second email.
	on := true
	if _, err := h.Update(ctx, o.ID, wh.ID, ports.WebhookChange{Active: &on}); err != nil {
		t.Fatal(err)
	}
	h.start()
	h.score(t, o.ID, core.MaxConsecutiveFailures, 80)
	smtp.WaitFor(2, 5*time.Second)
	h.stop() // as above: every send made is stored when it returns
	allEmailed()
	if n, err := notes.SendEmails(ctx); err != nil || n != 0 {
		t.Fatalf("SendEmails after the second switch-off email = %d, %v", n, err)
	}
	if n := len(smtp.Messages()); n != 2 {
		t.Fatalf("%d emails after two switch-offs", n)
	}
}
