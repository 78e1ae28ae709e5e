package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// testWebhookRecovery runs the cases of secret rotation and replay; a
// backend without a webhook store skips them. None claims deliveries:
// the webhook cases that do would see their claims taken.
func testWebhookRecovery(t *testing.T, s Stores) {
	if s.Webhooks == nil {
		t.Skip("no webhook store")
	}
	for _, c := range []struct {
		name string
		run  func(*testing.T, Stores)
	}{
		{"Rotation", testSecretRotation},
		{"ForgetPreviousSecrets", testForgetPreviousSecrets},
		{"Replay", testReplay},
		{"ReplayConcurrent", testReplayConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, s)
		})
	}
}

// sealAs stands in for core.Sealer with a mark of its own, so each
// rotation's secret is told apart.
func sealAs(mark string) func(id string) ([]byte, error) {
	return func(id string) ([]byte, error) { return []byte(mark + ":" + id), nil }
}

func secrets(t *testing.T, s Stores, ownerID, id string) (core.Webhook, string, string) {
	t.Helper()
	w, sec, err := s.Webhooks.WebhookSecrets(ctx, ownerID, id)
	if err != nil {
		t.Fatalf("WebhookSecrets: %v", err)
	}
	if (sec.Previous == nil) != w.PreviousSecretUntil.IsZero() {
		t.Fatalf("a previous secret %q with until %v", sec.Previous, w.PreviousSecretUntil)
	}
	return w, string(sec.Current), string(sec.Previous)
}

// A rotation moves the sealed secret to the previous one, kept until
// the time given, and stores the new one; a second rotation forgets the
// oldest; a zero until keeps none. Other owners' webhooks are not
// found; a seal that fails stores nothing; changes of the webhook's
// settings keep the rotation.
func testSecretRotation(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	w := newWebhook(t, s, o.ID, "https://hooks.example.com/rotate", 70)
	if got, cur, prev := secrets(t, s, o.ID, w.ID); cur != "sealed:"+w.ID || prev != "" || !got.PreviousSecretUntil.IsZero() || got.URL != w.URL {
		t.Fatalf("before a rotation: %+v, %q, %q", got, cur, prev)
	}
	until := time.Now().UTC().Truncate(time.Microsecond).Add(24 * time.Hour)
	rotated, err := s.Webhooks.RotateSecret(ctx, o.ID, w.ID, until, sealAs("second"))
	if err != nil || !rotated.PreviousSecretUntil.Equal(until) || rotated.ID != w.ID || rotated.URL != w.URL || !rotated.Active {
		t.Fatalf("RotateSecret = %+v, %v", rotated, err)
	}
	if got, cur, prev := secrets(t, s, o.ID, w.ID); cur != "second:"+w.ID || prev != "sealed:"+w.ID || !got.PreviousSecretUntil.Equal(until) {
		t.Fatalf("after a rotation: %+v, %q, %q", got, cur, prev)
	}
	if got, sealed, err := s.Webhooks.Webhook(ctx, o.ID, w.ID); err != nil || string(sealed) != "second:"+w.ID || !got.PreviousSecretUntil.Equal(until) {
		t.Fatalf("Webhook after a rotation: %+v, %q, %v", got, sealed, err)
	}
	if list, err := s.Webhooks.Webhooks(ctx, o.ID); err != nil || len(list) != 1 || !list[0].PreviousSecretUntil.Equal(until) {
		t.Fatalf("Webhooks after a rotation: %+v, %v", list, err)
	}
	// Settings changed meanwhile leave the rotation as it is.
	if _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, w.ID, func(w core.Webhook) (core.Webhook, error) {
		w.MinScore, w.PreviousSecretUntil = 40, time.Time{}
		return w, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, cur, prev := secrets(t, s, o.ID, w.ID); got.MinScore != 40 || !got.PreviousSecretUntil.Equal(until) || cur != "second:"+w.ID || prev != "sealed:"+w.ID {
		t.Fatalf("after a change of settings: %+v, %q, %q", got, cur, prev)
	}

	// A second rotation during the overlap: the oldest secret goes.
	later := until.Add(time.Hour)
	if _, err := s.Webhooks.RotateSecret(ctx, o.ID, w.ID, later, sealAs("third")); err != nil {
		t.Fatal(err)
	}
	if got, cur, prev := secrets(t, s, o.ID, w.ID); cur != "third:"+w.ID || prev != "second:"+w.ID || !got.PreviousSecretUntil.Equal(later) {
		t.Fatalf("after a second rotation: %+v, %q, %q", got, cur, prev)
	}
	// No overlap: the replaced secret is not kept.
	if got, err := s.Webhooks.RotateSecret(ctx, o.ID, w.ID, time.Time{}, sealAs("fourth")); err != nil || !got.PreviousSecretUntil.IsZero() {
		t.Fatalf("a rotation without overlap = %+v, %v", got, err)
	}
	if got, cur, prev := secrets(t, s, o.ID, w.ID); cur != "fourth:"+w.ID || prev != "" || !got.PreviousSecretUntil.IsZero() {
		t.Fatalf("after a rotation without overlap: %+v, %q, %q", got, cur, prev)
	}

	// A seal that fails stores nothing.
	noKey := errors.New("no key")
	if _, err := s.Webhooks.RotateSecret(ctx, o.ID, w.ID, until, func(string) ([]byte, error) { return nil, noKey }); err == nil {
		t.Fatal("a rotation whose seal failed succeeded")
	}
	if _, cur, prev := secrets(t, s, o.ID, w.ID); cur != "fourth:"+w.ID || prev != "" {
		t.Fatalf("a failed rotation changed the secrets: %q, %q", cur, prev)
	}

	_, err = s.Webhooks.RotateSecret(ctx, other.ID, w.ID, until, sealAs("theirs"))
	wantKind(t, err, core.KindNotFound)
	_, err = s.Webhooks.RotateSecret(ctx, o.ID, "no-such-webhook", until, sealAs("none"))
	wantKind(t, err, core.KindNotFound)
	_, _, err = s.Webhooks.WebhookSecrets(ctx, other.ID, w.ID)
	wantKind(t, err, core.KindNotFound)
	if _, cur, _ := secrets(t, s, o.ID, w.ID); cur != "fourth:"+w.ID {
		t.Fatalf("another owner's rotation changed the secret: %q", cur)
	}
}

// The sweep clears previous secrets whose overlap ended by the time
// given, at the end included, and leaves the others.
func testForgetPreviousSecrets(t *testing.T, s Stores) {
	o := newOwner(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	ended := newWebhook(t, s, o.ID, "https://hooks.example.com/ended", 70)
	endsNow := newWebhook(t, s, o.ID, "https://hooks.example.com/ends-now", 70)
	running := newWebhook(t, s, o.ID, "https://hooks.example.com/running", 70)
	for w, until := range map[string]time.Time{ended.ID: now.Add(-time.Hour), endsNow.ID: now, running.ID: now.Add(time.Hour)} {
		if _, err := s.Webhooks.RotateSecret(ctx, o.ID, w, until, sealAs("new")); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Deliveries.ForgetPreviousSecrets(ctx, now)
	if err != nil || n < 2 { // other cases' webhooks may be swept too
		t.Fatalf("ForgetPreviousSecrets = %d, %v; want at least 2", n, err)
	}
	for _, w := range []core.Webhook{ended, endsNow} {
		if got, cur, prev := secrets(t, s, o.ID, w.ID); prev != "" || !got.PreviousSecretUntil.IsZero() || cur != "new:"+w.ID {
			t.Fatalf("%s after the sweep: %+v, %q, %q", w.URL, got, cur, prev)
		}
	}
	if got, _, prev := secrets(t, s, o.ID, running.ID); prev != "sealed:"+running.ID || !got.PreviousSecretUntil.Equal(now.Add(time.Hour)) {
		t.Fatalf("a running overlap was swept: %+v, %q", got, prev)
	}
}

// failAll marks deliveries of the webhook failed, as the last try of
// each would leave them.
func failAll(t *testing.T, s Stores, ownerID, webhookID string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if _, err := s.Webhooks.UpdateDelivery(ctx, ownerID, webhookID, id, func(d core.Delivery) (core.Delivery, error) {
			d.Status, d.Tries, d.ResponseStatus, d.Error = core.DeliveryFailed, 4, 500, "http 500"
			d.LastAttemptAt, d.NextAttemptAt = time.Now(), time.Time{}
			return d, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// matchDeliveries returns the webhook's deliveries of each match, in the
// order of ms.
func matchDeliveries(t *testing.T, s Stores, ownerID, webhookID string, ms []core.Match) []core.Delivery {
	t.Helper()
	all := deliveries(t, s, ownerID, webhookID)
	out := make([]core.Delivery, len(ms))
	for i, m := range ms {
		j := slices.IndexFunc(all, func(d core.Delivery) bool { return d.MatchID == m.ID && d.Trigger == core.TriggerScheduled })
		if j < 0 {
			t.Fatalf("no delivery of match %s in %+v", m.ID, all)
		}
		out[i] = all[j]
	}
	return out
}

// recordPlan is core's replay rule, noting what the store handed it.
type recordPlan struct {
	mu    sync.Mutex
	calls int
	hook  core.Webhook
	given []core.Delivery
	at    time.Time
}

func (p *recordPlan) plan(w core.Webhook, failed []core.Delivery, at time.Time) ([]core.Delivery, error) {
	p.mu.Lock()
	p.calls++
	p.hook, p.given, p.at = w, failed, at
	p.mu.Unlock()
	return core.ReplayFailed(w, failed, at)
}

func deliveryIDs(ds []core.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// A replay hands the plan the failed match.created deliveries made in
// the range, oldest first, up to the limit, and stores what it returns
// as new queued deliveries with ids of their own and the match kept;
// the failed ones stay. A delivery whose match has a later delivery
// (its replay) is passed over, so the same call again takes the next
// ones; the bounds of the range are [from, to); pings, delivered and
// queued ones, and deliveries of deleted matches are not offered. A
// plan's refusal stores nothing; other owners' webhooks are not found.
func testReplay(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	w := newWebhook(t, s, o.ID, "https://hooks.example.com/replay", 0)
	before := time.Now().Add(-time.Minute)
	ms := scoredMatches(t, s, o.ID, core.X, 5, 80)
	ds := matchDeliveries(t, s, o.ID, w.ID, ms)
	failAll(t, s, o.ID, w.ID, ds[0].ID, ds[1].ID, ds[2].ID)
	if _, err := s.Webhooks.UpdateDelivery(ctx, o.ID, w.ID, ds[3].ID, func(d core.Delivery) (core.Delivery, error) {
		d.Status, d.Tries, d.ResponseStatus, d.Error, d.NextAttemptAt = core.DeliveryDelivered, 1, 204, "", time.Time{}
		return d, nil
	}); err != nil {
		t.Fatal(err)
	}
	// ds[4] stays queued. A failed ping and a failed delivery of a match
	// deleted since are in the range too.
	ping := core.Delivery{ID: s.Webhooks.NewDeliveryID(), WebhookID: w.ID, OwnerID: o.ID, Event: core.EventPing, Trigger: core.TriggerPing,
		Status: core.DeliveryFailed, Tries: 1, ResponseStatus: 500, Error: "http 500", Payload: []byte(`{}`), CreatedAt: time.Now()}
	if err := s.Webhooks.AddDelivery(ctx, ping, core.DeliveryLogSize); err != nil {
		t.Fatal(err)
	}
	gone := scoredMatches(t, s, o.ID, core.Facebook, 1, 80)
	failAll(t, s, o.ID, w.ID, matchDeliveries(t, s, o.ID, w.ID, gone)[0].ID)
	if err := s.Phrases.DeletePhrase(ctx, o.ID, gone[0].PhraseID); err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(time.Minute)
	q := ports.ReplayQuery{From: before, To: after, Limit: 2}

	p := &recordPlan{}
	res, err := s.Webhooks.ReplayDeliveries(ctx, o.ID, w.ID, q, p.plan)
	if err != nil || !res.More || len(res.Queued) != 2 {
		t.Fatalf("ReplayDeliveries with limit 2 = %+v, %v; want 2 queued and more", res, err)
	}
	if p.calls != 1 || p.hook.ID != w.ID || !p.hook.Active || !slices.Equal(deliveryIDs(p.given), []string{ds[0].ID, ds[1].ID}) ||
		p.at.Before(before) || p.at.After(after) {
		t.Fatalf("the plan was given %+v, %v at %v", p.hook, deliveryIDs(p.given), p.at)
	}
	for i, d := range res.Queued {
		if d.ID == "" || d.ID == ds[i].ID || d.MatchID != ms[i].ID || d.Trigger != core.TriggerReplay || d.Status != core.DeliveryQueued ||
			d.Event != core.EventMatchCreated || d.WebhookID != w.ID || d.OwnerID != o.ID || d.Tries != 0 || len(d.Payload) != 0 {
			t.Fatalf("replay %d: %+v", i, d)
		}
		stored := findDelivery(t, s, o.ID, w.ID, d.ID)
		if stored.ID != d.ID || stored.MatchID != ms[i].ID || stored.Trigger != core.TriggerReplay || stored.Status != core.DeliveryQueued ||
			!stored.CreatedAt.Equal(d.CreatedAt) || !stored.NextAttemptAt.Equal(d.NextAttemptAt) || len(stored.Payload) != 0 {
			t.Fatalf("stored replay %d: %+v, want %+v", i, stored, d)
		}
		if orig := findDelivery(t, s, o.ID, w.ID, ds[i].ID); orig.Status != core.DeliveryFailed || orig.Trigger != core.TriggerScheduled {
			t.Fatalf("the replayed delivery changed: %+v", orig)
		}
	}
	if res.Queued[0].ID == res.Queued[1].ID {
		t.Fatal("two replays share an id")
	}

	// The same call again takes the rest; then there is nothing left.
	res, err = s.Webhooks.ReplayDeliveries(ctx, o.ID, w.ID, q, p.plan)
	if err != nil || res.More || len(res.Queued) != 1 || res.Queued[0].MatchID != ms[2].ID || !slices.Equal(deliveryIDs(p.given), []string{ds[2].ID}) {
		t.Fatalf("the second call = %+v, %v (given %v); want the third failed one", res, err, deliveryIDs(p.given))
	}
	third := res.Queued[0]
	res, err = s.Webhooks.ReplayDeliveries(ctx, o.ID, w.ID, q, p.plan)
	if err != nil || res.More || len(res.Queued) != 0 || len(p.given) != 0 {
		t.Fatalf("a third call = %+v, %v (given %v); want nothing", res, err, deliveryIDs(p.given))
	}

	// A replay that failed is replayed in its turn, and its original,
	// which is no longer the newest delivery of its match, is not.
	failAll(t, s, o.ID, w.ID, third.ID)
	res, err = s.Webhooks.ReplayDeliveries(ctx, o.ID, w.ID, q, p.plan)
	if err != nil || len(res.Queued) != 1 || res.Queued[0].MatchID != ms[2].ID || !slices.Equal(deliveryIDs(p.given), []string{third.ID}) {
		t.Fatalf("after a replay failed = %+v, %v (given %v); want that replay alone", res, err, deliveryIDs(p.given))
	}

	// [from, to): a delivery made at to is left out, one made at from is in.
	w2 := newWebhook(t, s, o.ID, "https://hooks.example.com/bounds", 0)
	m2 := scoredMatches(t, s, o.ID, core.Reddit, 2, 80)
	d2 := matchDeliveries(t, s, o.ID, w2.ID, m2)
	failAll(t, s, o.ID, w2.ID, d2[0].ID, d2[1].ID)
	bounds := ports.ReplayQuery{From: d2[0].CreatedAt, To: d2[1].CreatedAt, Limit: 10}
	res, err = s.Webhooks.ReplayDeliveries(ctx, o.ID, w2.ID, bounds, p.plan)
	if err != nil || res.More || len(res.Queued) != 1 || res.Queued[0].MatchID != m2[0].ID {
		t.Fatalf("replay of [first, second) = %+v, %v; want the first alone", res, err)
	}

	// A plan's refusal stores nothing: a switched-off webhook.
	if _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, w2.ID, func(w core.Webhook) (core.Webhook, error) {
		w.Active = false
		return w, nil
	}); err != nil {
		t.Fatal(err)
	}
	n := len(deliveries(t, s, o.ID, w2.ID))
	_, err = s.Webhooks.ReplayDeliveries(ctx, o.ID, w2.ID, ports.ReplayQuery{From: before, To: after, Limit: 10}, p.plan)
	wantKind(t, err, core.KindConflict)
	if p.hook.Active || len(p.given) != 1 || p.given[0].ID != d2[1].ID {
		t.Fatalf("the plan was given %+v, %v; want the switched-off webhook and the second failed one", p.hook, deliveryIDs(p.given))
	}
	if got := len(deliveries(t, s, o.ID, w2.ID)); got != n {
		t.Fatalf("a refused replay left %d deliveries, had %d", got, n)
	}

	_, err = s.Webhooks.ReplayDeliveries(ctx, other.ID, w.ID, q, p.plan)
	wantKind(t, err, core.KindNotFound)
	_, err = s.Webhooks.ReplayDeliveries(ctx, o.ID, "no-such-webhook", q, p.plan)
	wantKind(t, err, core.KindNotFound)
}

// Replays of one range at once queue each failed match once in all.
func testReplayConcurrent(t *testing.T, s Stores) {
	o := newOwner(t, s)
	w := newWebhook(t, s, o.ID, "https://hooks.example.com/replay-race", 0)
	before := time.Now().Add(-time.Minute)
	ms := scoredMatches(t, s, o.ID, core.X, 6, 80)
	failAll(t, s, o.ID, w.ID, deliveryIDs(matchDeliveries(t, s, o.ID, w.ID, ms))...)
	q := ports.ReplayQuery{From: before, To: time.Now().Add(time.Minute), Limit: 4}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		queued = map[string]int{}
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Webhooks.ReplayDeliveries(ctx, o.ID, w.ID, q, core.ReplayFailed)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, d := range res.Queued {
				queued[d.MatchID]++
			}
		}()
	}
	wg.Wait()
	if len(queued) != len(ms) {
		t.Fatalf("concurrent replays queued %d of %d matches", len(queued), len(ms))
	}
	for m, n := range queued {
		if n != 1 {
			t.Fatalf("match %s replayed %d times", m, n)
		}
	}
}
