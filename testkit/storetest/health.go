package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
)

// Health holds the stores of account health and notifications.
type Health struct {
	Accounts      ports.AccountHealthStore
	Notifications ports.NotificationStore
}

// RunHealth runs the account-health and notification cases, and the
// webhook switch-off result the notifications rely on. s must share h's
// database.
func RunHealth(t *testing.T, s Stores, h Health) {
	cases := []struct {
		name string
		run  func(*testing.T, Stores, Health)
	}{
		{"HealthRoundTrip", testHealthRoundTrip},
		{"HealthIsolation", testHealthIsolation},
		{"HealthConcurrent", testHealthConcurrent},
		{"Notifications", testNotifications},
		{"NotificationTrim", testNotificationTrim},
		{"NotificationEmailClaims", testNotificationEmailClaims},
		{"WebhookSwitchedOffOnce", testWebhookSwitchedOffOnce},
		{"HealthImpossibleIDs", testHealthImpossibleIDs},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, s, h)
		})
	}
}

func healthAccount(t *testing.T, s Stores, ownerID string, p core.Platform) core.Account {
	t.Helper()
	a, err := s.Accounts.EnsureAccount(ctx, ownerID, p, roomy)
	if err != nil {
		t.Fatalf("EnsureAccount: %v", err)
	}
	return a
}

func healthOf(t *testing.T, h Health, ownerID, accountID string) health.Record {
	t.Helper()
	list, err := h.Accounts.AccountHealth(ctx, ownerID)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		if a.Account.ID == accountID {
			return a.Health
		}
	}
	t.Fatalf("account %s not listed for its owner", accountID)
	return health.Record{}
}

func setHealth(rec health.Record, note *core.Notification) func(ports.AccountHealth) (health.Record, *core.Notification, error) {
	return func(ports.AccountHealth) (health.Record, *core.Notification, error) { return rec, note, nil }
}

func testHealthRoundTrip(t *testing.T, s Stores, h Health) {
	o := newOwner(t, s)
	a := healthAccount(t, s, o.ID, core.Facebook)
	if got := healthOf(t, h, o.ID, a.ID); got.LastIssue != health.None || got.RawSignal != nil || !got.LastCheckedAt.IsZero() || !got.RetryAfter.IsZero() {
		t.Fatalf("a new account has health %+v", got)
	}
	at := time.UnixMicro(time.Now().UnixMicro()).UTC()
	rec := health.Record{LastIssue: health.RateLimited, RawSignal: &health.RawSignal{Status: 400, Code: 17, Subcode: 2446079, ViaProxy: true},
		LastCheckedAt: at, RetryAfter: at.Add(15 * time.Minute)}
	var seen ports.AccountHealth
	got, err := h.Accounts.UpdateHealth(ctx, o.ID, a.ID, func(cur ports.AccountHealth) (health.Record, *core.Notification, error) {
		seen = cur
		return rec, &core.Notification{Kind: core.NotifyAccountHealth, SubjectID: a.ID, Platform: core.Facebook,
			Severity: "info", State: "degraded", Issue: "rate_limited", Action: "wait", Title: "Rate limited", Message: "wait"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen.Account.ID != a.ID || seen.Account.OwnerID != o.ID || seen.Account.Platform != core.Facebook {
		t.Fatalf("change saw %+v", seen.Account)
	}
	if got.Account.ID != a.ID || got.Health.LastIssue != health.RateLimited {
		t.Fatalf("UpdateHealth = %+v", got)
	}
	stored := healthOf(t, h, o.ID, a.ID)
	if stored.LastIssue != rec.LastIssue || stored.RawSignal == nil || *stored.RawSignal != *rec.RawSignal ||
		!stored.LastCheckedAt.Equal(rec.LastCheckedAt) || !stored.RetryAfter.Equal(rec.RetryAfter) {
		t.Fatalf("stored %+v, want %+v", stored, rec)
	}
	ns, unread, err := h.Notifications.Notifications(ctx, o.ID, 10)
	if err != nil || len(ns) != 1 || unread != 1 {
		t.Fatalf("Notifications = %d, %d unread, %v; want the one stored with the change", len(ns), unread, err)
	}
	if n, err := h.Notifications.UnreadNotifications(ctx, o.ID); n != 1 || err != nil {
		t.Fatalf("UnreadNotifications = %d, %v; want 1", n, err)
	}
	if n := ns[0]; n.ID == "" || n.OwnerID != o.ID || n.SubjectID != a.ID || n.Issue != "rate_limited" || n.CreatedAt.IsZero() || n.Read() {
		t.Fatalf("notification %+v", n)
	}

	// An error from change stores neither the record nor a notification.
	boom := errors.New("refused")
	_, err = h.Accounts.UpdateHealth(ctx, o.ID, a.ID, func(ports.AccountHealth) (health.Record, *core.Notification, error) {
		return health.Record{LastIssue: health.Checkpointed}, &core.Notification{Kind: core.NotifyAccountHealth}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateHealth returned %v, want the change's error", err)
	}
	if healthOf(t, h, o.ID, a.ID).LastIssue != health.RateLimited {
		t.Fatal("a refused change was stored")
	}
	if ns, _, _ := h.Notifications.Notifications(ctx, o.ID, 10); len(ns) != 1 {
		t.Fatalf("%d notifications after a refused change", len(ns))
	}

	// Clearing stores empty values, not the old ones.
	if _, err := h.Accounts.UpdateHealth(ctx, o.ID, a.ID, setHealth(health.Record{LastCheckedAt: at}, nil)); err != nil {
		t.Fatal(err)
	}
	if got := healthOf(t, h, o.ID, a.ID); got.LastIssue != health.None || got.RawSignal != nil || !got.RetryAfter.IsZero() {
		t.Fatalf("cleared record reads %+v", got)
	}
}

func testHealthIsolation(t *testing.T, s Stores, h Health) {
	o, other := newOwner(t, s), newOwner(t, s)
	a := healthAccount(t, s, o.ID, core.X)
	b := healthAccount(t, s, other.ID, core.X)
	called := false
	_, err := h.Accounts.UpdateHealth(ctx, other.ID, a.ID, func(ports.AccountHealth) (health.Record, *core.Notification, error) {
		called = true
		return health.Record{LastIssue: health.Checkpointed}, nil, nil
	})
	wantKind(t, err, core.KindNotFound)
	if called {
		t.Fatal("change was shown another owner's account")
	}
	if got := healthOf(t, h, o.ID, a.ID); got.LastIssue != health.None {
		t.Fatalf("another owner's update reached the account: %+v", got)
	}
	if _, err := h.Accounts.UpdateHealth(ctx, other.ID, b.ID, setHealth(health.Record{LastIssue: health.SessionExpired},
		&core.Notification{Kind: core.NotifyAccountHealth, SubjectID: b.ID, Email: true})); err != nil {
		t.Fatal(err)
	}
	list, err := h.Accounts.AccountHealth(ctx, o.ID)
	if err != nil || len(list) != 1 || list[0].Account.ID != a.ID || list[0].Health.LastIssue != health.None {
		t.Fatalf("owner's accounts = %+v, %v", list, err)
	}
	if ns, unread, _ := h.Notifications.Notifications(ctx, o.ID, 10); len(ns) != 0 || unread != 0 {
		t.Fatalf("owner sees %d notifications of another", len(ns))
	}
	if n, err := h.Notifications.UnreadNotifications(ctx, o.ID); n != 0 || err != nil {
		t.Fatalf("UnreadNotifications = %d, %v; the owner's notifications are read or another's", n, err)
	}
	ns, _, _ := h.Notifications.Notifications(ctx, other.ID, 10)
	if len(ns) != 1 {
		t.Fatalf("other owner has %d notifications", len(ns))
	}
	wantKind(t, h.Notifications.MarkRead(ctx, o.ID, ns[0].ID, time.Now()), core.KindNotFound)
	if n, err := h.Notifications.MarkAllRead(ctx, o.ID, time.Now()); err != nil || n != 0 {
		t.Fatalf("MarkAllRead of an owner with none = %d, %v", n, err)
	}
	if _, unread, _ := h.Notifications.Notifications(ctx, other.ID, 10); unread != 1 {
		t.Fatal("another owner marked a notification read")
	}
}

// Reports at once each see the last one's result: every one of them
// counts, as a read-modify-write under a lock must.
func testHealthConcurrent(t *testing.T, s Stores, h Health) {
	o := newOwner(t, s)
	a := healthAccount(t, s, o.ID, core.Reddit)
	const n = 8
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.Accounts.UpdateHealth(ctx, o.ID, a.ID, func(cur ports.AccountHealth) (health.Record, *core.Notification, error) {
				next := cur.Health
				raw := health.RawSignal{}
				if next.RawSignal != nil {
					raw = *next.RawSignal
				}
				raw.Code++
				next.RawSignal = &raw
				return next, nil, nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := healthOf(t, h, o.ID, a.ID); got.RawSignal == nil || got.RawSignal.Code != n {
		t.Fatalf("after %d concurrent updates the count is %+v", n, got.RawSignal)
	}
}

func addNote(t *testing.T, h Health, ownerID string, email bool) core.Notification {
	t.Helper()
	n := core.Notification{OwnerID: ownerID, Kind: core.NotifyWebhookOff, SubjectID: "hook-" + unique(), Severity: "alert",
		Title: "Your webhook was switched off", Message: "fix it", Email: email}
	if err := h.Notifications.AddNotification(ctx, &n); err != nil {
		t.Fatalf("AddNotification: %v", err)
	}
	if n.ID == "" || n.CreatedAt.IsZero() {
		t.Fatalf("AddNotification left ID or CreatedAt empty: %+v", n)
	}
	return n
}

func testNotifications(t *testing.T, s Stores, h Health) {
	o := newOwner(t, s)
	wantKind(t, h.Notifications.AddNotification(ctx, &core.Notification{OwnerID: "no-such-owner", Kind: core.NotifyWebhookOff}), core.KindNotFound)
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, addNote(t, h, o.ID, false).ID)
	}
	ns, unread, err := h.Notifications.Notifications(ctx, o.ID, 2)
	if err != nil || len(ns) != 2 || unread != 3 {
		t.Fatalf("Notifications(limit 2) = %d, %d unread, %v", len(ns), unread, err)
	}
	if ns[0].ID != ids[2] || ns[1].ID != ids[1] {
		t.Fatalf("not newest first: %s %s, added %v", ns[0].ID, ns[1].ID, ids)
	}
	if ns[0].Kind != core.NotifyWebhookOff || ns[0].Title == "" || ns[0].Message != "fix it" || ns[0].Severity != "alert" {
		t.Fatalf("read back %+v", ns[0])
	}
	at := time.UnixMicro(time.Now().UnixMicro()).UTC()
	if err := h.Notifications.MarkRead(ctx, o.ID, ids[0], at); err != nil {
		t.Fatal(err)
	}
	if err := h.Notifications.MarkRead(ctx, o.ID, ids[0], at.Add(time.Hour)); err != nil {
		t.Fatalf("marking a read notification again: %v", err)
	}
	wantKind(t, h.Notifications.MarkRead(ctx, o.ID, "no-such-id", at), core.KindNotFound)
	ns, unread, _ = h.Notifications.Notifications(ctx, o.ID, 10)
	if unread != 2 || !ns[2].ReadAt.Equal(at) {
		t.Fatalf("after one read: %d unread, read at %v (want %v, the first time)", unread, ns[2].ReadAt, at)
	}
	if n, err := h.Notifications.UnreadNotifications(ctx, o.ID); n != 2 || err != nil {
		t.Fatalf("UnreadNotifications after one read = %d, %v; want 2", n, err)
	}
	if n, err := h.Notifications.MarkAllRead(ctx, o.ID, at); err != nil || n != 2 {
		t.Fatalf("MarkAllRead = %d, %v; want 2", n, err)
	}
	if _, unread, _ = h.Notifications.Notifications(ctx, o.ID, 10); unread != 0 {
		t.Fatalf("%d unread after MarkAllRead", unread)
	}
	if n, err := h.Notifications.UnreadNotifications(ctx, o.ID); n != 0 || err != nil {
		t.Fatalf("UnreadNotifications after MarkAllRead = %d, %v; want 0", n, err)
	}
}

func testNotificationTrim(t *testing.T, s Stores, h Health) {
	o := newOwner(t, s)
	owed := addNote(t, h, o.ID, true) // its email is owed: never trimmed
	first := addNote(t, h, o.ID, false)
	for i := 0; i < core.MaxNotifications; i++ {
		addNote(t, h, o.ID, false)
	}
	ns, unread, err := h.Notifications.Notifications(ctx, o.ID, core.MaxNotifications+10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != core.MaxNotifications+1 || unread != len(ns) {
		t.Fatalf("%d kept (%d unread), want %d and the owed one", len(ns), unread, core.MaxNotifications)
	}
	for _, n := range ns {
		if n.ID == first.ID {
			t.Fatal("the oldest notification past the bound was kept")
		}
	}
	if ns[len(ns)-1].ID != owed.ID {
		t.Fatal("a notification whose email is owed was trimmed")
	}
}

func testNotificationEmailClaims(t *testing.T, s Stores, h Health) {
	o := newOwner(t, s)
	want := map[string]bool{}
	for i := 0; i < 6; i++ {
		want[addNote(t, h, o.ID, true).ID] = true
	}
	quiet := addNote(t, h, o.ID, false)
	// Claims at once, as replicas make them: each owed email goes to one.
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns, err := h.Notifications.ClaimEmails(ctx, 100, time.Hour)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, n := range ns {
				if n.OwnerID == o.ID {
					got[n.ID]++
				}
			}
		}()
	}
	wg.Wait()
	if got[quiet.ID] != 0 {
		t.Fatal("a notification that owes no email was claimed")
	}
	for id := range want {
		if got[id] != 1 {
			t.Fatalf("notification %s claimed %d times", id, got[id])
		}
	}
	// Claimed and leased: not claimed again until the lease ends.
	for _, n := range claimOwn(t, h, o.ID, time.Hour) {
		t.Fatalf("leased notification %s claimed again", n.ID)
	}

	o2 := newOwner(t, s)
	n := addNote(t, h, o2.ID, true)
	if c := claimOwn(t, h, o2.ID, -time.Second); len(c) != 1 || c[0].ID != n.ID || !c[0].Email || !c[0].EmailedAt.IsZero() {
		t.Fatalf("claim = %+v", c)
	}
	if c := claimOwn(t, h, o2.ID, time.Hour); len(c) != 1 {
		t.Fatal("a claim whose lease ran out was not taken again")
	}
	at := time.UnixMicro(time.Now().UnixMicro()).UTC()
	if err := h.Notifications.MarkEmailed(ctx, n.ID, at); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	if c := claimOwn(t, h, o2.ID, time.Hour); len(c) != 0 {
		t.Fatal("an emailed notification was claimed again")
	}
	ns, _, _ := h.Notifications.Notifications(ctx, o2.ID, 10)
	if len(ns) != 1 || !ns[0].EmailedAt.Equal(at) {
		t.Fatalf("emailed at %v, want %v", ns[0].EmailedAt, at)
	}
}

// claimOwn claims owed emails of every owner and returns the owner's.
func claimOwn(t *testing.T, h Health, ownerID string, lease time.Duration) []core.Notification {
	t.Helper()
	ns, err := h.Notifications.ClaimEmails(ctx, 1000, lease)
	if err != nil {
		t.Fatal(err)
	}
	var out []core.Notification
	for _, n := range ns {
		if n.OwnerID == ownerID {
			out = append(out, n)
		}
	}
	return out
}

// testWebhookSwitchedOffOnce: FinishAttempts marks exactly the attempt
// that switched a webhook off, also when later failures of the same
// webhook, claimed while it was on, are recorded after it.
func testWebhookSwitchedOffOnce(t *testing.T, s Stores, _ Health) {
	o := newOwner(t, s)
	w := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/off-" + unique(), MinScore: 0, Active: true}
	seal := func(id string) ([]byte, error) { return []byte("sealed:" + id), nil }
	if err := s.Webhooks.CreateWebhook(ctx, &w, core.Limits{WebhooksPerPerson: 100}.CheckNewWebhook, seal); err != nil {
		t.Fatal(err)
	}
	const n = core.MaxConsecutiveFailures + 2
	p := newPhrase(t, s, o.ID, "off "+unique(), "x", "")
	var batch []ports.PostMatches
	for i := 0; i < n; i++ {
		batch = append(batch, ports.PostMatches{Post: post(unique()), PhraseIDs: []string{p.ID}})
	}
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Matches {
		scoreMatch(t, s, m, core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"})
	}
	var due []ports.DueDelivery
	for len(due) < n {
		got, err := s.Deliveries.ClaimDeliveries(ctx, ports.DeliveryClaim{Limit: 100, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Fatalf("claimed %d of %d deliveries", len(due), n)
		}
		for _, d := range got {
			if d.Delivery.OwnerID == o.ID {
				due = append(due, d)
			}
		}
	}
	// The first few one at a time, the rest, the switch-off and the
	// failures after it, in one batch.
	var results []ports.AttemptResult
	var batchOf []ports.Attempt
	for i, d := range due {
		failed := d.Delivery
		failed.Status, failed.Tries, failed.Error, failed.Payload = core.DeliveryFailed, 4, "http 500", []byte(`{}`)
		batchOf = append(batchOf, ports.Attempt{Due: d, Delivery: failed})
		if i < 3 || i == len(due)-1 {
			rs, err := s.Deliveries.FinishAttempts(ctx, batchOf, attemptRules)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, rs...)
			batchOf = nil
		}
	}
	switchedOff := 0
	for i, r := range results {
		if !r.Recorded {
			t.Fatalf("attempt %d not recorded", i)
		}
		if r.SwitchedOff {
			switchedOff++
			if i != core.MaxConsecutiveFailures-1 || r.Webhook.Active || r.Webhook.DisabledReason == "" {
				t.Fatalf("attempt %d reported the switch-off: %+v", i, r)
			}
		}
	}
	if switchedOff != 1 {
		t.Fatalf("%d attempts reported the switch-off, want 1", switchedOff)
	}
}

// testHealthImpossibleIDs: ids no store hands out (see impossibleIDs) are
// not found, as the account or notification id and as the owner's.
func testHealthImpossibleIDs(t *testing.T, s Stores, h Health) {
	o := newOwner(t, s)
	a := healthAccount(t, s, o.ID, core.Facebook)
	n := addNote(t, h, o.ID, false)
	keep := func(cur ports.AccountHealth) (health.Record, *core.Notification, error) { return cur.Health, nil, nil }
	for _, bad := range impossibleIDs {
		for name, err := range map[string]error{
			"UpdateHealth":       func() error { _, err := h.Accounts.UpdateHealth(ctx, o.ID, bad, keep); return err }(),
			"UpdateHealth owner": func() error { _, err := h.Accounts.UpdateHealth(ctx, bad, a.ID, keep); return err }(),
			"MarkRead":           h.Notifications.MarkRead(ctx, o.ID, bad, time.Now()),
			"MarkRead owner":     h.Notifications.MarkRead(ctx, bad, n.ID, time.Now()),
			"AddNotification":    h.Notifications.AddNotification(ctx, &core.Notification{OwnerID: bad, Kind: core.NotifyWebhookOff}),
		} {
			if !core.IsKind(err, core.KindNotFound) {
				t.Errorf("%s(%q) = %v, want KindNotFound", name, bad, err)
			}
		}
	}
	if _, unread, _ := h.Notifications.Notifications(ctx, o.ID, 10); unread != 1 {
		t.Fatal("a lookup by an impossible id marked the owner's notification read")
	}
}
