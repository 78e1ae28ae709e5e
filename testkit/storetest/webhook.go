package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// testWebhookStore runs the webhook cases; a backend without a webhook
// store skips them.
func testWebhookStore(t *testing.T, s Stores) {
	if s.Webhooks == nil {
		t.Skip("no webhook store")
	}
	// Before the others, which start once this function returns: it
	// claims every due delivery, so it must not take theirs.
	t.Run("CallerRules", func(t *testing.T) { testCallerRules(t, s) })
	t.Run("FinishBurst", func(t *testing.T) { testFinishBurst(t, s) })
	for _, c := range []struct {
		name string
		run  func(*testing.T, Stores)
	}{
		{"CRUD", testWebhookCRUD},
		{"LimitConcurrent", testWebhookLimitConcurrent},
		{"QueuedOnScore", testDeliveriesQueuedOnScore},
		{"Log", testDeliveryLog},
		{"Claims", testDeliveryClaims},
		{"DeliveryIDs", testDeliveryIDs},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, s)
		})
	}
}

var webhookLimits = core.Limits{WebhooksPerPerson: 2}

// attemptRules are the rules the delivery worker hands FinishAttempts:
// core's failure count and switch-off, and the log of the spec's size.
var attemptRules = ports.AttemptRules{Webhook: core.Webhook.AfterDelivery, KeepLog: core.DeliveryLogSize}

// fakeSeal stands in for core.Sealer: the store only keeps the bytes.
func fakeSeal(id string) ([]byte, error) { return []byte("sealed:" + id), nil }

func newWebhook(t *testing.T, s Stores, ownerID, url string, minScore int, platforms ...core.Platform) core.Webhook {
	t.Helper()
	w := core.Webhook{OwnerID: ownerID, URL: url, MinScore: minScore, Platforms: platforms, Active: true}
	if err := s.Webhooks.CreateWebhook(ctx, &w, core.Limits{WebhooksPerPerson: 100}.CheckNewWebhook, fakeSeal); err != nil {
		t.Fatalf("CreateWebhook(%s): %v", url, err)
	}
	return w
}

func testWebhookCRUD(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	w := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/a", MinScore: 70, Platforms: []core.Platform{core.X, core.Reddit}, Active: true}
	if err := s.Webhooks.CreateWebhook(ctx, &w, webhookLimits.CheckNewWebhook, fakeSeal); err != nil {
		t.Fatal(err)
	}
	if w.ID == "" || w.CreatedAt.IsZero() || !w.Active || w.MinScore != 70 || !slices.Equal(w.Platforms, []core.Platform{core.X, core.Reddit}) {
		t.Fatalf("created %+v", w)
	}
	got, sealed, err := s.Webhooks.Webhook(ctx, o.ID, w.ID)
	if err != nil || string(sealed) != "sealed:"+w.ID || got.URL != w.URL || !got.CreatedAt.Equal(w.CreatedAt) ||
		!slices.Equal(got.Platforms, w.Platforms) || got.OwnerID != o.ID {
		t.Fatalf("Webhook = %+v, %q, %v", got, sealed, err)
	}
	_, _, err = s.Webhooks.Webhook(ctx, other.ID, w.ID)
	wantKind(t, err, core.KindNotFound)

	dup := core.Webhook{OwnerID: o.ID, URL: w.URL, Active: true}
	wantKind(t, s.Webhooks.CreateWebhook(ctx, &dup, webhookLimits.CheckNewWebhook, fakeSeal), core.KindConflict)
	theirs := core.Webhook{OwnerID: other.ID, URL: w.URL, Active: true}
	if err := s.Webhooks.CreateWebhook(ctx, &theirs, webhookLimits.CheckNewWebhook, fakeSeal); err != nil {
		t.Fatalf("another owner's webhook with the same url: %v", err)
	}
	none := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/none", Active: true}
	wantKind(t, s.Webhooks.CreateWebhook(ctx, &none, core.Limits{}.CheckNewWebhook, fakeSeal), core.KindPlanLimit)
	sealErr := errors.New("no key")
	failing := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/seal", Active: true}
	if err := s.Webhooks.CreateWebhook(ctx, &failing, webhookLimits.CheckNewWebhook, func(string) ([]byte, error) { return nil, sealErr }); err == nil {
		t.Fatal("a webhook was created although sealing its secret failed")
	}
	w2 := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/b", MinScore: 0, Active: true}
	if err := s.Webhooks.CreateWebhook(ctx, &w2, webhookLimits.CheckNewWebhook, fakeSeal); err != nil {
		t.Fatal(err)
	}
	w3 := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/c", Active: true}
	wantKind(t, s.Webhooks.CreateWebhook(ctx, &w3, webhookLimits.CheckNewWebhook, fakeSeal), core.KindPlanLimit)
	wantKind(t, s.Webhooks.CreateWebhook(ctx, &core.Webhook{OwnerID: "no-such-owner", URL: "https://x.example.com", Active: true}, webhookLimits.CheckNewWebhook, fakeSeal), core.KindNotFound)

	if u, err := s.Phrases.Usage(ctx, o.ID); err != nil || u.Webhooks != 2 {
		t.Fatalf("Usage = %+v, %v; want 2 webhooks", u, err)
	}
	list, err := s.Webhooks.Webhooks(ctx, o.ID)
	if err != nil || len(list) != 2 || list[0].ID != w.ID || list[1].ID != w2.ID || len(list[1].Platforms) != 0 {
		t.Fatalf("Webhooks = %+v, %v", list, err)
	}
	if list, _ := s.Webhooks.Webhooks(ctx, other.ID); len(list) != 1 || list[0].ID != theirs.ID {
		t.Fatalf("the other owner lists %+v", list)
	}

	up, err := s.Webhooks.UpdateWebhook(ctx, o.ID, w.ID, func(w core.Webhook) (core.Webhook, error) {
		w.MinScore, w.Platforms, w.Active = 55, []core.Platform{core.Facebook}, false
		w.DisabledReason, w.ConsecutiveFailures = "switched off", 3
		w.URL = "https://elsewhere.example.com" // not a field an update changes
		return w, nil
	})
	if err != nil || up.MinScore != 55 || up.Active || up.DisabledReason != "switched off" || up.ConsecutiveFailures != 3 || up.URL != w.URL {
		t.Fatalf("UpdateWebhook = %+v, %v", up, err)
	}
	got, _, _ = s.Webhooks.Webhook(ctx, o.ID, w.ID)
	if got.MinScore != 55 || got.Active || got.DisabledReason != "switched off" || got.ConsecutiveFailures != 3 ||
		!slices.Equal(got.Platforms, []core.Platform{core.Facebook}) || got.URL != w.URL {
		t.Fatalf("after update: %+v", got)
	}
	refuse := core.Errorf(core.KindInvalid, "no")
	if _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, w.ID, func(w core.Webhook) (core.Webhook, error) {
		w.MinScore = 1
		return w, refuse
	}); !errors.Is(err, refuse) && !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("a refused change answered %v", err)
	}
	if got, _, _ := s.Webhooks.Webhook(ctx, o.ID, w.ID); got.MinScore != 55 {
		t.Fatal("a refused change was stored")
	}
	_, err = s.Webhooks.UpdateWebhook(ctx, other.ID, w.ID, func(w core.Webhook) (core.Webhook, error) { return w, nil })
	wantKind(t, err, core.KindNotFound)

	wantKind(t, s.Webhooks.DeleteWebhook(ctx, other.ID, w.ID), core.KindNotFound)
	if err := s.Webhooks.DeleteWebhook(ctx, o.ID, w.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Webhooks.Webhook(ctx, o.ID, w.ID)
	wantKind(t, err, core.KindNotFound)
	wantKind(t, s.Webhooks.DeleteWebhook(ctx, o.ID, w.ID), core.KindNotFound)
	if u, _ := s.Phrases.Usage(ctx, o.ID); u.Webhooks != 1 {
		t.Fatalf("usage after delete: %d webhooks", u.Webhooks)
	}
}

func testWebhookLimitConcurrent(t *testing.T, s Stores) {
	o := newOwner(t, s)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := core.Webhook{OwnerID: o.ID, URL: fmt.Sprintf("https://hooks.example.com/%d", i), Active: true}
			errs[i] = s.Webhooks.CreateWebhook(ctx, &w, webhookLimits.CheckNewWebhook, fakeSeal)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !core.IsKind(err, core.KindPlanLimit):
			t.Errorf("concurrent create: %v", err)
		}
	}
	if list, _ := s.Webhooks.Webhooks(ctx, o.ID); ok != 2 || len(list) != 2 {
		t.Fatalf("%d creates succeeded and %d webhooks exist under a limit of 2", ok, len(list))
	}
}

// scoredMatches saves n matches of the owner on platform and scores them
// all at value.
func scoredMatches(t *testing.T, s Stores, ownerID string, platform core.Platform, n, value int) []core.Match {
	t.Helper()
	p := newPhrase(t, s, ownerID, "hook "+unique(), string(platform), map[core.Platform]string{core.Reddit: "golang"}[platform])
	var batch []ports.PostMatches
	for i := 0; i < n; i++ {
		batch = append(batch, ports.PostMatches{Post: post(unique()), PhraseIDs: []string{p.ID}})
	}
	res, err := s.Matches.SaveMatches(ctx, ownerID, platform, batch)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]core.Match, len(res.Matches))
	for i, m := range res.Matches {
		out[i] = scoreMatch(t, s, m, core.Score{Value: value, Intent: core.IntentBuying, Reason: "wants one"})
	}
	return out
}

func deliveries(t *testing.T, s Stores, ownerID, webhookID string) []core.Delivery {
	t.Helper()
	ds, err := s.Webhooks.Deliveries(ctx, ownerID, webhookID, 100)
	if err != nil {
		t.Fatalf("Deliveries: %v", err)
	}
	return ds
}

func testDeliveriesQueuedOnScore(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	all := newWebhook(t, s, o.ID, "https://hooks.example.com/all", 70)
	strict := newWebhook(t, s, o.ID, "https://hooks.example.com/strict", 90)
	fb := newWebhook(t, s, o.ID, "https://hooks.example.com/fb", 0, core.Facebook)
	xOnly := newWebhook(t, s, o.ID, "https://hooks.example.com/x", 0, core.X)
	off := newWebhook(t, s, o.ID, "https://hooks.example.com/off", 0)
	if _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, off.ID, func(w core.Webhook) (core.Webhook, error) {
		w.Active = false
		return w, nil
	}); err != nil {
		t.Fatal(err)
	}
	theirs := newWebhook(t, s, other.ID, "https://hooks.example.com/theirs", 0)

	before := time.Now().Add(-time.Minute)
	m := scoredMatches(t, s, o.ID, core.X, 1, 80)[0]
	for _, c := range []struct {
		w    core.Webhook
		want int
	}{{all, 1}, {strict, 0}, {fb, 0}, {xOnly, 1}, {off, 0}, {theirs, 0}} {
		owner := o.ID
		if c.w.ID == theirs.ID {
			owner = other.ID
		}
		ds := deliveries(t, s, owner, c.w.ID)
		if len(ds) != c.want {
			t.Fatalf("webhook %s has %d deliveries, want %d", c.w.URL, len(ds), c.want)
		}
		for _, d := range ds {
			if d.ID == "" || d.WebhookID != c.w.ID || d.OwnerID != o.ID || d.Event != core.EventMatchCreated ||
				d.Trigger != core.TriggerScheduled || d.Status != core.DeliveryQueued || d.Tries != 0 ||
				d.CreatedAt.Before(before) || d.NextAttemptAt.IsZero() || d.NextAttemptAt.After(time.Now().Add(time.Minute)) ||
				!d.LastAttemptAt.IsZero() || len(d.Payload) != 0 {
				t.Fatalf("queued delivery %+v", d)
			}
		}
	}
	// A second score is refused and queues nothing more.
	again := []ports.ScoreUpdate{{Match: m, Score: core.Score{Value: 99, Intent: core.IntentBuying, Reason: "again"}}}
	if got, err := s.Matches.SetScores(ctx, again, core.QueueMatchCreated); err != nil || len(got) != 0 {
		t.Fatalf("a match was scored twice: %+v, %v", got, err)
	}
	if n := len(deliveries(t, s, o.ID, all.ID)); n != 1 {
		t.Fatalf("%d deliveries after a second score, want 1", n)
	}
	_, err := s.Webhooks.Deliveries(ctx, other.ID, all.ID, 20)
	wantKind(t, err, core.KindNotFound)
	// Deleting the webhook removes its log.
	if err := s.Webhooks.DeleteWebhook(ctx, o.ID, xOnly.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.Webhooks.Deliveries(ctx, o.ID, xOnly.ID, 20)
	wantKind(t, err, core.KindNotFound)
}

func testDeliveryLog(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	w := newWebhook(t, s, o.ID, "https://hooks.example.com/log", 70)
	base := time.Now().UTC().Truncate(time.Microsecond).Add(-time.Hour)
	var ids []string
	for i := 0; i < core.DeliveryLogSize+5; i++ {
		at := base.Add(time.Duration(i) * time.Second)
		d := core.Delivery{
			ID: fmt.Sprintf("ping-%s-%02d", unique(), i), WebhookID: w.ID, OwnerID: o.ID, Event: core.EventPing,
			Trigger: core.TriggerPing, Status: core.DeliveryFailed, Tries: 1, ResponseStatus: 500, Error: "http 500",
			Payload: []byte(`{"id":"x"}`), CreatedAt: at, LastAttemptAt: at,
		}
		if i%2 == 0 {
			d.Status, d.ResponseStatus, d.Error = core.DeliveryDelivered, 204, ""
		}
		if err := s.Webhooks.AddDelivery(ctx, d, core.DeliveryLogSize); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	ds := deliveries(t, s, o.ID, w.ID)
	if len(ds) != core.DeliveryLogSize {
		t.Fatalf("%d deliveries kept, want %d", len(ds), core.DeliveryLogSize)
	}
	for i, d := range ds {
		if want := ids[len(ids)-1-i]; d.ID != want {
			t.Fatalf("delivery %d is %s, want %s (newest first)", i, d.ID, want)
		}
	}
	newest := ds[0]
	if newest.Event != core.EventPing || newest.Trigger != core.TriggerPing || newest.Status != core.DeliveryDelivered ||
		newest.ResponseStatus != 204 || newest.Tries != 1 || !newest.CreatedAt.Equal(base.Add(24*time.Second)) ||
		!newest.LastAttemptAt.Equal(newest.CreatedAt) || !newest.NextAttemptAt.IsZero() || string(newest.Payload) != `{"id":"x"}` {
		t.Fatalf("stored ping %+v", newest)
	}
	if ds, _ := s.Webhooks.Deliveries(ctx, o.ID, w.ID, 3); len(ds) != 3 || ds[0].ID != newest.ID {
		t.Fatalf("limit 3: %d deliveries", len(ds))
	}
	foreign := core.Delivery{ID: "foreign-" + unique(), WebhookID: w.ID, OwnerID: other.ID, Event: core.EventPing,
		Trigger: core.TriggerPing, Status: core.DeliveryDelivered, CreatedAt: time.Now()}
	wantKind(t, s.Webhooks.AddDelivery(ctx, foreign, core.DeliveryLogSize), core.KindNotFound)

	// A requeue, as a manual retry makes it.
	next := time.Now().UTC().Truncate(time.Microsecond).Add(time.Hour) // not due: no claim of a parallel case takes it
	got, err := s.Webhooks.UpdateDelivery(ctx, o.ID, w.ID, ds[1].ID, func(d core.Delivery) (core.Delivery, error) {
		if d.ID != ds[1].ID || d.Status != core.DeliveryFailed {
			return d, fmt.Errorf("change saw %+v", d)
		}
		d.Trigger, d.Status, d.Tries, d.ResponseStatus, d.Error, d.NextAttemptAt = core.TriggerManual, core.DeliveryQueued, 0, 0, "", next
		return d, nil
	})
	if err != nil || got.Status != core.DeliveryQueued || got.Trigger != core.TriggerManual || got.Tries != 0 || !got.NextAttemptAt.Equal(next) {
		t.Fatalf("UpdateDelivery = %+v, %v", got, err)
	}
	again := deliveries(t, s, o.ID, w.ID)[1]
	if again.Status != core.DeliveryQueued || again.Trigger != core.TriggerManual || again.Tries != 0 || again.Error != "" ||
		again.ResponseStatus != 0 || !again.NextAttemptAt.Equal(next) || !again.LastAttemptAt.Equal(ds[1].LastAttemptAt) ||
		string(again.Payload) != `{"id":"x"}` {
		t.Fatalf("after requeue %+v", again)
	}
	refuse := errors.New("refused")
	if _, err := s.Webhooks.UpdateDelivery(ctx, o.ID, w.ID, ds[2].ID, func(d core.Delivery) (core.Delivery, error) {
		d.Status = core.DeliveryQueued
		return d, refuse
	}); !errors.Is(err, refuse) && err == nil {
		t.Fatal("a refused change succeeded")
	}
	if d := deliveries(t, s, o.ID, w.ID)[2]; d.Status == core.DeliveryQueued {
		t.Fatal("a refused change was stored")
	}
	_, err = s.Webhooks.UpdateDelivery(ctx, other.ID, w.ID, ds[2].ID, func(d core.Delivery) (core.Delivery, error) { return d, nil })
	wantKind(t, err, core.KindNotFound)
	_, err = s.Webhooks.UpdateDelivery(ctx, o.ID, w.ID, "no-such-delivery", func(d core.Delivery) (core.Delivery, error) { return d, nil })
	wantKind(t, err, core.KindNotFound)

	// More finished ones push old finished ones out, never the queued one.
	for i := 0; i < core.DeliveryLogSize; i++ {
		d := core.Delivery{ID: fmt.Sprintf("later-%s-%02d", unique(), i), WebhookID: w.ID, OwnerID: o.ID, Event: core.EventPing,
			Trigger: core.TriggerPing, Status: core.DeliveryDelivered, Tries: 1, CreatedAt: time.Now().Add(time.Duration(i) * time.Millisecond)}
		if err := s.Webhooks.AddDelivery(ctx, d, core.DeliveryLogSize); err != nil {
			t.Fatal(err)
		}
	}
	ds = deliveries(t, s, o.ID, w.ID)
	if len(ds) != core.DeliveryLogSize+1 || ds[len(ds)-1].ID != again.ID {
		t.Fatalf("%d deliveries after trimming, last %s; want %d and the queued %s kept", len(ds), ds[len(ds)-1].ID, core.DeliveryLogSize+1, again.ID)
	}
}

// claimAll claims until nothing is left and returns what was claimed of
// the owner; deliveries of other cases running at once may be claimed
// too and are left to their lease.
func claimAll(t *testing.T, s Stores, ownerID string, c ports.DeliveryClaim) []ports.DueDelivery {
	t.Helper()
	var out []ports.DueDelivery
	for {
		due, err := s.Deliveries.ClaimDeliveries(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) == 0 {
			return out
		}
		for _, d := range due {
			if d.Delivery.OwnerID == ownerID {
				out = append(out, d)
			}
		}
	}
}

// finish records one attempt.
func finish(t *testing.T, s Stores, due ports.DueDelivery, d core.Delivery) (core.Webhook, bool, error) {
	t.Helper()
	res, err := s.Deliveries.FinishAttempts(ctx, []ports.Attempt{{Due: due, Delivery: d}}, attemptRules)
	if err != nil {
		return core.Webhook{}, false, err
	}
	if len(res) != 1 {
		t.Fatalf("FinishAttempts returned %d results for 1 attempt", len(res))
	}
	return res[0].Webhook, res[0].Recorded, nil
}

// claimOnce makes one claim and returns what it took of the owner.
func claimOnce(t *testing.T, s Stores, ownerID string, c ports.DeliveryClaim) []ports.DueDelivery {
	t.Helper()
	due, err := s.Deliveries.ClaimDeliveries(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var out []ports.DueDelivery
	for _, d := range due {
		if d.Delivery.OwnerID == ownerID {
			out = append(out, d)
		}
	}
	return out
}

func testDeliveryClaims(t *testing.T, s Stores) {
	o := newOwner(t, s)
	h1 := newWebhook(t, s, o.ID, "https://hooks.example.com/one", 0)
	h2 := newWebhook(t, s, o.ID, "https://hooks.example.com/two", 0)
	ms := scoredMatches(t, s, o.ID, core.X, 8, 75)

	// Bounds: per webhook, and webhooks the caller is busy with.
	due, err := s.Deliveries.ClaimDeliveries(ctx, ports.DeliveryClaim{Limit: 100, PerWebhook: 2, Skip: []string{h2.ID}, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var first []ports.DueDelivery
	for _, d := range due {
		if d.Delivery.OwnerID == o.ID {
			first = append(first, d)
		}
	}
	if len(first) != 2 || first[0].Delivery.WebhookID != h1.ID || first[1].Delivery.WebhookID != h1.ID {
		t.Fatalf("claimed %d of the owner's deliveries with PerWebhook 2 and h2 skipped: %+v", len(first), first)
	}
	d0 := first[0]
	if d0.Webhook.ID != h1.ID || d0.Webhook.URL != h1.URL || string(d0.SealedSecret) != "sealed:"+h1.ID ||
		!slices.ContainsFunc(ms, func(m core.Match) bool { return m.ID == d0.Delivery.MatchID }) || d0.LeaseUntil.Before(time.Now().Add(50*time.Minute)) ||
		d0.Delivery.Status != core.DeliveryQueued || d0.Delivery.Event != core.EventMatchCreated ||
		d0.Match == nil || d0.Match.ID != d0.Delivery.MatchID || d0.Match.Score == nil || d0.Match.OwnerID != o.ID {
		t.Fatalf("claimed %+v", d0)
	}

	// Concurrent claimers share the other 14, each claimed once.
	var mu sync.Mutex
	seen := map[string]int{}
	var rest []ports.DueDelivery
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				due, err := s.Deliveries.ClaimDeliveries(ctx, ports.DeliveryClaim{Limit: 3, Lease: time.Hour})
				if err != nil {
					t.Error(err)
					return
				}
				if len(due) == 0 {
					return
				}
				mu.Lock()
				for _, d := range due {
					if d.Delivery.OwnerID == o.ID {
						seen[d.Delivery.ID]++
						rest = append(rest, d)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 14 {
		t.Fatalf("concurrent claims took %d of the owner's 14 free deliveries", len(seen))
	}
	for id, n := range seen {
		if n != 1 || id == first[0].Delivery.ID || id == first[1].Delivery.ID {
			t.Fatalf("delivery %s claimed %d times", id, n)
		}
	}

	// An attempt that failed with tries left queues a retry and ends the
	// lease; the same claim cannot record twice.
	now := time.Now().UTC().Truncate(time.Microsecond)
	d := d0.Delivery
	d.Payload = []byte(`{"id":"` + d.ID + `"}`)
	retry := d.Attempted(core.RetrySchedule{time.Hour}, 500, "http 500", now, 0)
	w, recorded, err := finish(t, s, d0, retry)
	if err != nil || !recorded || w.ID != h1.ID || w.ConsecutiveFailures != 0 {
		t.Fatalf("FinishAttempts = %+v, %v, %v", w, recorded, err)
	}
	if _, recorded, err := finish(t, s, d0, retry); err != nil || recorded {
		t.Fatalf("a second record of one claim: %v, %v", recorded, err)
	}
	stored := findDelivery(t, s, o.ID, h1.ID, d.ID)
	if stored.Status != core.DeliveryQueued || stored.Tries != 1 || stored.ResponseStatus != 500 || stored.Error != "http 500" ||
		!stored.LastAttemptAt.Equal(now) || !stored.NextAttemptAt.Equal(now.Add(time.Hour)) || string(stored.Payload) != string(d.Payload) {
		t.Fatalf("after a failed try: %+v", stored)
	}

	// Final outcomes move the webhook's count: a delivered one resets it,
	// five failed in a row switch it off with the reason.
	claimed := []ports.DueDelivery{first[1]}
	var ofH2 ports.DueDelivery
	for _, d := range rest {
		if d.Delivery.WebhookID == h1.ID {
			claimed = append(claimed, d)
		} else {
			ofH2 = d
		}
	}
	if len(claimed) != 7 || ofH2.Delivery.ID == "" {
		t.Fatalf("%d claimed deliveries of h1 to finish, want 7", len(claimed))
	}
	fail := func(due ports.DueDelivery) core.Webhook {
		t.Helper()
		d := due.Delivery.Attempted(nil, 0, "timeout", time.Now(), 0)
		w, recorded, err := finish(t, s, due, d)
		if err != nil || !recorded || d.Status != core.DeliveryFailed {
			t.Fatalf("FinishAttempts(failed) = %v, %v", recorded, err)
		}
		return w
	}
	fail(claimed[0])
	delivered := claimed[1].Delivery.Attempted(nil, 204, "", time.Now(), 0)
	if w, _, _ := finish(t, s, claimed[1], delivered); w.ConsecutiveFailures != 0 || !w.Active {
		t.Fatalf("after a delivered one: %+v", w)
	}
	// Five failing together, in one call, all count, in order.
	var batch []ports.Attempt
	for _, due := range claimed[2:7] {
		batch = append(batch, ports.Attempt{Due: due, Delivery: due.Delivery.Attempted(nil, 0, "timeout", time.Now(), 0)})
	}
	results, err := s.Deliveries.FinishAttempts(ctx, batch, attemptRules)
	if err != nil || len(results) != 5 {
		t.Fatalf("FinishAttempts of 5 = %d results, %v", len(results), err)
	}
	for i, r := range results[:4] {
		if !r.Recorded || r.Webhook.ConsecutiveFailures != i+1 || !r.Webhook.Active {
			t.Fatalf("attempt %d of the batch: %+v", i, r)
		}
	}
	w = results[4].Webhook
	if w.Active || w.ConsecutiveFailures != core.MaxConsecutiveFailures || !strings.Contains(w.DisabledReason, "timeout") {
		t.Fatalf("after 5 failed in a row: %+v", w)
	}
	if got, _, _ := s.Webhooks.Webhook(ctx, o.ID, h1.ID); got.Active || got.DisabledReason != w.DisabledReason {
		t.Fatalf("stored after switch-off: %+v", got)
	}

	// An inactive webhook's queued deliveries wait until it is on again.
	requeue := func(id string) {
		t.Helper()
		if _, err := s.Webhooks.UpdateDelivery(ctx, o.ID, h1.ID, id, func(d core.Delivery) (core.Delivery, error) {
			d.Status, d.Trigger, d.Tries, d.NextAttemptAt = core.DeliveryQueued, core.TriggerManual, 0, time.Now().Add(-time.Second)
			return d, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	requeue(claimed[6].Delivery.ID)
	if got := claimAll(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: time.Hour}); len(got) != 0 {
		t.Fatalf("claimed %d deliveries of a switched-off webhook", len(got))
	}
	if _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, h1.ID, func(w core.Webhook) (core.Webhook, error) { return w.Enable(), nil }); err != nil {
		t.Fatal(err)
	}
	back := claimOnce(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: -time.Second}) // a lease already run out
	if len(back) != 1 || back[0].Delivery.ID != claimed[6].Delivery.ID || back[0].Delivery.Trigger != core.TriggerManual {
		t.Fatalf("after switching on: %+v", back)
	}

	// A lease that ran out is claimed again, and the first holder's
	// record is refused.
	time.Sleep(2 * time.Millisecond)
	again := claimOnce(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: time.Hour})
	if len(again) != 1 || again[0].Delivery.ID != back[0].Delivery.ID || again[0].LeaseUntil.Equal(back[0].LeaseUntil) {
		t.Fatalf("reclaimed %+v", again)
	}
	if _, recorded, _ := finish(t, s, back[0], back[0].Delivery.Attempted(nil, 204, "", time.Now(), 0)); recorded {
		t.Fatal("a lost lease recorded an attempt")
	}
	if err := s.Deliveries.DropDelivery(ctx, back[0]); err != nil {
		t.Fatal(err)
	}
	if findDelivery(t, s, o.ID, h1.ID, back[0].Delivery.ID).ID == "" {
		t.Fatal("a lost lease dropped the delivery")
	}
	if err := s.Deliveries.DropDelivery(ctx, again[0]); err != nil {
		t.Fatal(err)
	}
	if findDelivery(t, s, o.ID, h1.ID, again[0].Delivery.ID).ID != "" {
		t.Fatal("DropDelivery left the delivery")
	}

	// Once a payload is stored, a claim carries no match: the payload is
	// what is sent.
	requeue(d0.Delivery.ID)
	if got := claimOnce(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: time.Hour}); len(got) != 1 ||
		got[0].Delivery.ID != d0.Delivery.ID || string(got[0].Delivery.Payload) != string(d.Payload) || got[0].Match != nil {
		t.Fatalf("claim of a delivery with its payload: %+v", got)
	} else if err := s.Deliveries.DropDelivery(ctx, got[0]); err != nil {
		t.Fatal(err)
	}
	// A match deleted before the first try: the claim says so.
	gone := scoredMatches(t, s, o.ID, core.Facebook, 1, 80)[0]
	if err := s.Phrases.DeletePhrase(ctx, o.ID, gone.PhraseID); err != nil {
		t.Fatal(err)
	}
	got := claimOnce(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: time.Hour})
	if len(got) != 2 {
		t.Fatalf("claimed %d deliveries of the deleted match, want one for each webhook", len(got))
	}
	for _, g := range got {
		if g.Delivery.MatchID != gone.ID || g.Match != nil {
			t.Fatalf("claim of a delivery whose match is gone: %+v", g)
		}
		if err := s.Deliveries.DropDelivery(ctx, g); err != nil {
			t.Fatal(err)
		}
	}

	// A released claim is free at once; a release with a stale claim
	// changes nothing.
	requeue(claimed[5].Delivery.ID)
	held := claimOnce(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: time.Hour})
	if len(held) != 1 {
		t.Fatalf("claimed %d, want the requeued one", len(held))
	}
	if err := s.Deliveries.ReleaseDeliveries(ctx, held); err != nil {
		t.Fatal(err)
	}
	retaken := claimOnce(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: time.Hour})
	if len(retaken) != 1 || retaken[0].Delivery.ID != held[0].Delivery.ID {
		t.Fatalf("after release: %+v", retaken)
	}
	if err := s.Deliveries.ReleaseDeliveries(ctx, held); err != nil {
		t.Fatal(err)
	}
	if got := claimOnce(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: time.Hour}); len(got) != 0 {
		t.Fatal("a stale release freed a delivery another claim holds")
	}

	// A deleted webhook's claimed deliveries record nothing.
	if err := s.Webhooks.DeleteWebhook(ctx, o.ID, h2.ID); err != nil {
		t.Fatal(err)
	}
	if _, recorded, err := finish(t, s, ofH2, ofH2.Delivery.Attempted(nil, 204, "", time.Now(), 0)); err != nil || recorded {
		t.Fatalf("FinishAttempts on a deleted webhook: %v, %v", recorded, err)
	}
}

// findDelivery returns the webhook's delivery id, or the zero value when
// it is gone.
func findDelivery(t *testing.T, s Stores, ownerID, webhookID, id string) core.Delivery {
	t.Helper()
	for _, d := range deliveries(t, s, ownerID, webhookID) {
		if d.ID == id {
			return d
		}
	}
	return core.Delivery{}
}

// testCallerRules checks that the store applies the rules it is handed
// rather than rules of its own: an allow that refuses, a log size other
// than the spec's, and a webhook change other than core's.
func testCallerRules(t *testing.T, s Stores) {
	o := newOwner(t, s)
	refuse := core.Errorf(core.KindPlanLimit, "no webhooks today")
	var seen core.Usage
	no := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/no", Active: true}
	if err := s.Webhooks.CreateWebhook(ctx, &no, func(u core.Usage) error { seen = u; return refuse }, fakeSeal); !errors.Is(err, refuse) && !core.IsKind(err, core.KindPlanLimit) {
		t.Fatalf("a refused create answered %v", err)
	}
	if list, _ := s.Webhooks.Webhooks(ctx, o.ID); len(list) != 0 || seen.Webhooks != 0 {
		t.Fatalf("after a refused create: %d webhooks, usage seen %+v", len(list), seen)
	}
	w := newWebhook(t, s, o.ID, "https://hooks.example.com/rules", 0)
	if err := s.Webhooks.CreateWebhook(ctx, &core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/seen", Active: true},
		func(u core.Usage) error { seen = u; return nil }, fakeSeal); err != nil || seen.Webhooks != 1 {
		t.Fatalf("allow saw %+v, %v; want the one webhook there was", seen, err)
	}

	base := time.Now().UTC().Truncate(time.Microsecond).Add(-time.Hour)
	for i := 0; i < 5; i++ {
		d := core.Delivery{ID: fmt.Sprintf("keep-%s-%d", unique(), i), WebhookID: w.ID, OwnerID: o.ID, Event: core.EventPing,
			Trigger: core.TriggerPing, Status: core.DeliveryDelivered, Tries: 1, CreatedAt: base.Add(time.Duration(i) * time.Second)}
		if err := s.Webhooks.AddDelivery(ctx, d, 3); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(deliveries(t, s, o.ID, w.ID)); n != 3 {
		t.Fatalf("AddDelivery with keep 3 left %d deliveries", n)
	}

	scoredMatches(t, s, o.ID, core.X, 2, 80)
	due := claimAll(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: time.Hour})
	var mine []ports.DueDelivery
	for _, d := range due {
		if d.Delivery.WebhookID == w.ID {
			mine = append(mine, d)
		}
	}
	if len(mine) != 2 {
		t.Fatalf("claimed %d deliveries of the webhook, want 2", len(mine))
	}
	calls := 0
	rules := ports.AttemptRules{
		Webhook: func(w core.Webhook, d core.Delivery) core.Webhook {
			calls++
			w.ConsecutiveFailures += 10
			w.Active, w.DisabledReason = false, "caller says off after "+d.Error
			return w
		},
		KeepLog: 1,
	}
	var batch []ports.Attempt
	for _, d := range mine {
		batch = append(batch, ports.Attempt{Due: d, Delivery: d.Delivery.Attempted(nil, 0, "dns", time.Now(), 0)})
	}
	res, err := s.Deliveries.FinishAttempts(ctx, batch, rules)
	if err != nil || len(res) != 2 || !res[1].Recorded || res[1].Webhook.ConsecutiveFailures != 20 || calls != 2 {
		t.Fatalf("FinishAttempts with the caller's rules = %+v, %v (%d calls)", res, err, calls)
	}
	got, _, _ := s.Webhooks.Webhook(ctx, o.ID, w.ID)
	if got.Active || got.ConsecutiveFailures != 20 || got.DisabledReason != "caller says off after dns" {
		t.Fatalf("stored after the caller's rules: %+v", got)
	}
	if ds := deliveries(t, s, o.ID, w.ID); len(ds) != 1 || ds[0].Status != core.DeliveryFailed {
		t.Fatalf("KeepLog 1 left %+v", ds)
	}
}

// testFinishBurst records, in one call, more finished deliveries of a
// webhook than its log keeps, as a channel's message records its burst:
// some delivered, some failed for good, some to retry, and some whose
// lease was lost (released and claimed again, released only, claimed
// again and dropped by the new holder), beside a webhook whose log is
// short. The log is left as storing every recorded attempt and then
// trimming leaves it; only the attempts whose lease held are recorded;
// the webhooks' counts and switch-off are core's rule applied to the
// recorded final attempts in order.
func testFinishBurst(t *testing.T, s Stores) {
	o := newOwner(t, s)
	h := newWebhook(t, s, o.ID, "https://hooks.example.com/burst", 0)
	few := newWebhook(t, s, o.ID, "https://hooks.example.com/few", 90)
	keep := attemptRules.KeepLog
	n := keep + 12
	p := newPhrase(t, s, o.ID, "burst "+unique(), "x", "")
	var batch []ports.PostMatches
	for range n {
		batch = append(batch, ports.PostMatches{Post: post(unique()), PhraseIDs: []string{p.ID}})
	}
	saved, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil || len(saved.Matches) != n {
		t.Fatalf("SaveMatches: %d, %v", len(saved.Matches), err)
	}
	// Scored eight at a time: a batch's deliveries share their time, so
	// the log's order falls to their ids.
	for i := 0; i < n; i += 8 {
		var updates []ports.ScoreUpdate
		for j, m := range saved.Matches[i:min(i+8, n)] {
			sc := core.Score{Value: 80, Intent: core.IntentBuying, Reason: "wants one"}
			if j == 4 {
				sc.Value = 95 // for few too
			}
			updates = append(updates, ports.ScoreUpdate{Match: m, Score: sc})
		}
		if got, err := s.Matches.SetScores(ctx, updates, core.QueueMatchCreated); err != nil || len(got) != len(updates) {
			t.Fatalf("SetScores: %d, %v", len(got), err)
		}
	}
	claimed, err := s.Deliveries.ClaimBurst(ctx, h.ID, 100, time.Hour)
	if err != nil || len(claimed) != n {
		t.Fatalf("ClaimBurst = %d, %v; want %d", len(claimed), err, n)
	}
	fewDue, err := s.Deliveries.ClaimBurst(ctx, few.ID, 100, time.Hour)
	if err != nil || len(fewDue) != n/8 {
		t.Fatalf("ClaimBurst of few = %d, %v; want %d", len(fewDue), err, n/8)
	}

	// Leases lost: claimed rows are oldest first, so the dropped one
	// (n-9) is among the batch's newest finished ones but not in the
	// log, and the batch's 21st newest finished one (n-21) stays.
	reclaimed, released, dropped := []int{3, n - 9, n - 2}, n-5, n-9
	if err := s.Deliveries.ReleaseDeliveries(ctx, []ports.DueDelivery{claimed[3], claimed[n-9], claimed[n-2]}); err != nil {
		t.Fatal(err)
	}
	again, err := s.Deliveries.ClaimBurst(ctx, h.ID, 100, time.Hour)
	if err != nil || len(again) != len(reclaimed) {
		t.Fatalf("ClaimBurst after a release = %d, %v; want %d", len(again), err, len(reclaimed))
	}
	holder := map[string]ports.DueDelivery{}
	for _, d := range again {
		holder[d.Delivery.ID] = d
	}
	if err := s.Deliveries.DropDelivery(ctx, holder[claimed[dropped].Delivery.ID]); err != nil {
		t.Fatal(err)
	}
	if err := s.Deliveries.ReleaseDeliveries(ctx, claimed[released:released+1]); err != nil {
		t.Fatal(err)
	}
	lost := map[int]bool{released: true}
	for _, i := range reclaimed {
		lost[i] = true
	}

	// The oldest two retry; from n-8 on every one fails, so the webhook
	// switches off on the fifth recorded failure in a row; before, every
	// third fails between deliveries.
	now := time.Now().UTC().Truncate(time.Microsecond)
	outcome := func(due ports.DueDelivery, i int) core.Delivery {
		d := due.Delivery
		d.Payload = []byte(`{"id":"` + d.ID + `"}`)
		switch {
		case i == 1 || i == 5:
			return d.Attempted(core.RetrySchedule{time.Hour}, 500, "http 500", now, 0)
		case i >= n-8 || i%3 == 2:
			return d.Attempted(nil, 0, "timeout", now, 0)
		}
		return d.Attempted(nil, 204, "", now, 0)
	}
	var attempts []ports.Attempt
	for i, due := range claimed {
		attempts = append(attempts, ports.Attempt{Due: due, Delivery: outcome(due, i)})
		if i == 10 {
			for _, d := range fewDue {
				attempts = append(attempts, ports.Attempt{Due: d, Delivery: outcome(d, 0)})
			}
		}
	}
	res, err := s.Deliveries.FinishAttempts(ctx, attempts, attemptRules)
	if err != nil || len(res) != len(attempts) {
		t.Fatalf("FinishAttempts of %d = %d results, %v", len(attempts), len(res), err)
	}

	// What each result and the log should be, worked out as the port
	// says: each recorded attempt stored, core's rule applied in order,
	// then the log trimmed.
	rows := map[string]core.Delivery{} // by id, as stored after the call
	hooks := map[string]core.Webhook{h.ID: claimed[0].Webhook, few.ID: fewDue[0].Webhook}
	for _, d := range append(slices.Clone(claimed), fewDue...) {
		rows[d.Delivery.ID] = d.Delivery
	}
	delete(rows, claimed[dropped].Delivery.ID)
	byID := map[string]int{}
	for i, d := range claimed {
		byID[d.Delivery.ID] = i
	}
	for k, a := range attempts {
		d, r := a.Delivery, res[k]
		i, ofH := byID[d.ID]
		recorded := !ofH || !lost[i]
		want := ports.AttemptResult{Recorded: recorded, Webhook: a.Due.Webhook}
		if recorded {
			rows[d.ID] = d
			if d.Status.Final() {
				before := hooks[d.WebhookID]
				hooks[d.WebhookID] = core.Webhook.AfterDelivery(before, d)
				want.Webhook, want.SwitchedOff = hooks[d.WebhookID], before.Active && !hooks[d.WebhookID].Active
			}
		}
		if r.Recorded != want.Recorded || r.SwitchedOff != want.SwitchedOff || r.Webhook.ID != want.Webhook.ID ||
			r.Webhook.Active != want.Webhook.Active || r.Webhook.ConsecutiveFailures != want.Webhook.ConsecutiveFailures ||
			r.Webhook.DisabledReason != want.Webhook.DisabledReason {
			t.Fatalf("result %d (delivery %s): %+v, want %+v", k, d.ID, r, want)
		}
	}
	if w := hooks[h.ID]; w.Active || w.ConsecutiveFailures != 6 {
		t.Fatalf("the worked-out webhook is %+v: the case no longer switches it off", w)
	}
	for _, w := range []core.Webhook{h, few} {
		var log []core.Delivery
		for _, d := range rows {
			if d.WebhookID == w.ID {
				log = append(log, d)
			}
		}
		slices.SortFunc(log, func(a, b core.Delivery) int { // newest first
			return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
		})
		for i := len(log) - 1; i >= keep; i-- {
			if log[i].Status.Final() {
				log = slices.Delete(log, i, i+1)
			}
		}
		got := deliveries(t, s, o.ID, w.ID)
		if len(got) != len(log) {
			t.Fatalf("%s keeps %d deliveries, want %d", w.URL, len(got), len(log))
		}
		for i, g := range got {
			x := log[i]
			if g.ID != x.ID || g.Status != x.Status || g.Tries != x.Tries || g.Error != x.Error || g.ResponseStatus != x.ResponseStatus ||
				!g.LastAttemptAt.Equal(x.LastAttemptAt) || !g.NextAttemptAt.Equal(x.NextAttemptAt) || string(g.Payload) != string(x.Payload) {
				t.Fatalf("%s log entry %d:\n%+v\nwant\n%+v", w.URL, i, g, x)
			}
		}
		stored, _, err := s.Webhooks.Webhook(ctx, o.ID, w.ID)
		x := hooks[w.ID]
		if err != nil || stored.Active != x.Active || stored.ConsecutiveFailures != x.ConsecutiveFailures || stored.DisabledReason != x.DisabledReason {
			t.Fatalf("%s stored as %+v, %v; want %+v", w.URL, stored, err, x)
		}
	}
	// The new holder of a lost lease records its own attempt.
	d := holder[claimed[n-2].Delivery.ID]
	if _, recorded, err := finish(t, s, d, d.Delivery.Attempted(nil, 204, "", now, 0)); err != nil || !recorded {
		t.Fatalf("the new holder's record: %v, %v", recorded, err)
	}
}

// testDeliveryIDs checks that ids for deliveries made by the caller are
// fresh each time and unlike the ids of queued deliveries.
func testDeliveryIDs(t *testing.T, s Stores) {
	o := newOwner(t, s)
	w := newWebhook(t, s, o.ID, "https://hooks.example.com/ids", 0)
	scoredMatches(t, s, o.ID, core.X, 1, 80)
	seen := map[string]bool{}
	for _, d := range deliveries(t, s, o.ID, w.ID) {
		seen[d.ID] = true
	}
	for i := 0; i < 100; i++ {
		id := s.Webhooks.NewDeliveryID()
		if id == "" || seen[id] {
			t.Fatalf("NewDeliveryID gave %q, empty or seen before", id)
		}
		seen[id] = true
	}
}
