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

// testChannelStore runs the channel cases; a backend without a channel
// store skips them.
func testChannelStore(t *testing.T, s Stores) {
	if s.Channels == nil {
		t.Skip("no channel store")
	}
	// Before the others, which start once this function returns: they
	// claim every due delivery, and would take this one's.
	t.Run("ClaimBurst", func(t *testing.T) { testClaimBurst(t, s) })
	t.Run("SwitchOffEndsPeriod", func(t *testing.T) { testSwitchOffEndsPeriod(t, s) })
	for _, c := range []struct {
		name string
		run  func(*testing.T, Stores)
	}{
		{"CRUD", testChannelCRUD},
		{"SharedLimit", testChannelSharedLimit},
		{"QueuedOnScore", testChannelQueuedOnScore},
		{"DigestMatches", testDigestMatches},
		{"AddDigest", testAddDigest},
		{"UpdateChannelPeriod", testUpdateChannelPeriod},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, s)
		})
	}
}

// newChannel stores a channel of the owner with the schedule given.
func newChannel(t *testing.T, s Stores, ownerID string, kind core.ChannelKind, redacted string, minScore int, sched core.AlertSchedule, platforms ...core.Platform) core.Webhook {
	t.Helper()
	w := core.Webhook{OwnerID: ownerID, Kind: kind, URL: redacted, MinScore: minScore, Platforms: platforms, Active: true, Schedule: sched}
	if err := s.Channels.CreateChannel(ctx, &w, core.Limits{WebhooksPerPerson: 100}.CheckNewWebhook, fakeSeal); err != nil {
		t.Fatalf("CreateChannel(%s): %v", redacted, err)
	}
	return w
}

var atOnce = core.AlertSchedule{Frequency: core.AlertAtOnce}

// A channel is stored with its kind, frequency and sealed target, read
// back by the webhook store's reads, changed only through UpdateChannel,
// and deleted as a webhook is. Two channels may show the same redacted
// address; a webhook's id is not a channel's.
func testChannelCRUD(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	daily := core.AlertSchedule{Frequency: core.AlertDaily, Hour: 9, Zone: "Europe/Berlin"}
	c := newChannel(t, s, o.ID, core.ChannelSlack, "hooks.slack.com/services/T0…/B0…/…abcd", 60, daily, core.Reddit)
	if c.ID == "" || c.CreatedAt.IsZero() || c.Kind != core.ChannelSlack || c.Schedule != daily || !c.LastDigestAt.IsZero() ||
		c.MinScore != 60 || !slices.Equal(c.Platforms, []core.Platform{core.Reddit}) {
		t.Fatalf("created %+v", c)
	}
	twin := newChannel(t, s, o.ID, core.ChannelSlack, c.URL, 70, atOnce)
	hook := newWebhook(t, s, o.ID, "https://hooks.example.com/beside", 70)
	if hook.Kind != core.ChannelWebhook {
		t.Fatalf("a webhook reads back as kind %q", hook.Kind)
	}
	got, sealed, err := s.Webhooks.Webhook(ctx, o.ID, c.ID)
	if err != nil || string(sealed) != "sealed:"+c.ID || got.Kind != core.ChannelSlack || got.Schedule != daily || got.URL != c.URL {
		t.Fatalf("Webhook(channel) = %+v, %q, %v", got, sealed, err)
	}
	list, err := s.Webhooks.Webhooks(ctx, o.ID)
	if err != nil || len(list) != 3 || list[0].ID != c.ID || list[1].ID != twin.ID || list[2].ID != hook.ID ||
		list[1].Kind != core.ChannelSlack || list[1].Schedule != atOnce || list[2].Kind != core.ChannelWebhook {
		t.Fatalf("Webhooks = %+v, %v", list, err)
	}

	// A refused change stores nothing; an accepted one stores the
	// frequency, the end of the last period and, when given, the target.
	refuse := core.Errorf(core.KindInvalid, "no")
	if _, err := s.Channels.UpdateChannel(ctx, o.ID, c.ID, func(w core.Webhook, _ []byte) (core.Webhook, []byte, error) {
		w.MinScore = 1
		return w, []byte("x"), refuse
	}); !errors.Is(err, refuse) && !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("a refused change answered %v", err)
	}
	last := time.Now().UTC().Truncate(time.Microsecond)
	hourly := core.AlertSchedule{Frequency: core.AlertHourly}
	up, err := s.Channels.UpdateChannel(ctx, o.ID, c.ID, func(w core.Webhook, sealed []byte) (core.Webhook, []byte, error) {
		if string(sealed) != "sealed:"+c.ID || w.Schedule != daily {
			t.Errorf("the change was given %+v and %q", w, sealed)
		}
		w.Schedule, w.LastDigestAt, w.MinScore, w.Active = hourly, last, 80, false
		w.URL = "hooks.slack.com/services/T1…/B1…/…wxyz"
		return w, []byte("resealed"), nil
	})
	if err != nil || up.Schedule != hourly || !up.LastDigestAt.Equal(last) || up.MinScore != 80 || up.Active || up.URL != "hooks.slack.com/services/T1…/B1…/…wxyz" {
		t.Fatalf("UpdateChannel = %+v, %v", up, err)
	}
	got, sealed, _ = s.Webhooks.Webhook(ctx, o.ID, c.ID)
	if string(sealed) != "resealed" || got.Schedule != hourly || !got.LastDigestAt.Equal(last) || got.URL != up.URL || got.Kind != core.ChannelSlack {
		t.Fatalf("stored after the change: %+v, %q", got, sealed)
	}
	// Without a new target, the target and its address stay.
	if _, err := s.Channels.UpdateChannel(ctx, o.ID, c.ID, func(w core.Webhook, _ []byte) (core.Webhook, []byte, error) {
		w.URL = "ignored"
		return w, nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, sealed, _ = s.Webhooks.Webhook(ctx, o.ID, c.ID); string(sealed) != "resealed" || got.URL != up.URL {
		t.Fatalf("a change without a target moved it: %+v, %q", got, sealed)
	}
	noop := func(w core.Webhook, _ []byte) (core.Webhook, []byte, error) { return w, nil, nil }
	_, err = s.Channels.UpdateChannel(ctx, o.ID, hook.ID, noop)
	wantKind(t, err, core.KindNotFound)
	_, err = s.Channels.UpdateChannel(ctx, other.ID, c.ID, noop)
	wantKind(t, err, core.KindNotFound)
	_, err = s.Channels.UpdateChannel(ctx, o.ID, "no-such-channel", noop)
	wantKind(t, err, core.KindNotFound)

	// A webhook's own change leaves the channel's columns as they are.
	if _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, c.ID, func(w core.Webhook) (core.Webhook, error) {
		w.Active = true
		return w, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ = s.Webhooks.Webhook(ctx, o.ID, c.ID); !got.Active || got.Schedule != hourly || got.Kind != core.ChannelSlack {
		t.Fatalf("after UpdateWebhook: %+v", got)
	}

	wantKind(t, s.Channels.CreateChannel(ctx, &core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/w", Active: true},
		core.Limits{WebhooksPerPerson: 100}.CheckNewWebhook, fakeSeal), core.KindInvalid)
	wantKind(t, s.Channels.CreateChannel(ctx, &core.Webhook{OwnerID: "no-such-owner", Kind: core.ChannelNtfy, URL: "ntfy.sh/…abcd", Active: true},
		core.Limits{WebhooksPerPerson: 100}.CheckNewWebhook, fakeSeal), core.KindNotFound)

	if err := s.Webhooks.DeleteWebhook(ctx, o.ID, twin.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Webhooks.Webhook(ctx, o.ID, twin.ID)
	wantKind(t, err, core.KindNotFound)
}

// Channels and webhooks count against one limit, under the owner's lock.
func testChannelSharedLimit(t *testing.T, s Stores) {
	o := newOwner(t, s)
	two := core.Limits{WebhooksPerPerson: 2}
	newWebhook(t, s, o.ID, "https://hooks.example.com/one", 70)
	var seen core.Usage
	ch := core.Webhook{OwnerID: o.ID, Kind: core.ChannelNtfy, URL: "ntfy.sh/…abcd", Active: true, Schedule: atOnce}
	if err := s.Channels.CreateChannel(ctx, &ch, func(u core.Usage) error { seen = u; return two.CheckNewWebhook(u) }, fakeSeal); err != nil || seen.Webhooks != 1 {
		t.Fatalf("the second of two: usage seen %+v, %v", seen, err)
	}
	wantKind(t, s.Channels.CreateChannel(ctx, &core.Webhook{OwnerID: o.ID, Kind: core.ChannelDiscord, URL: "discord.com/…", Active: true},
		two.CheckNewWebhook, fakeSeal), core.KindPlanLimit)
	wantKind(t, s.Webhooks.CreateWebhook(ctx, &core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/three", Active: true},
		two.CheckNewWebhook, fakeSeal), core.KindPlanLimit)
	u, err := s.Phrases.Usage(ctx, o.ID)
	if err != nil || u.Webhooks != 2 {
		t.Fatalf("usage %+v, %v: want the webhook and the channel", u, err)
	}
}

// A score queues a delivery for a channel at once, due as the plan says
// (at the channel's next slot), and none for a channel on a digest; a
// claim hands the channel's kind and sealed target to the sender.
func testChannelQueuedOnScore(t *testing.T, s Stores) {
	o := newOwner(t, s)
	now := newChannel(t, s, o.ID, core.ChannelTelegram, "telegram chat -100 (bot 123456…)", 70, atOnce)
	digest := newChannel(t, s, o.ID, core.ChannelSlack, "hooks.slack.com/…", 0, core.AlertSchedule{Frequency: core.AlertHourly})
	m := scoredMatches(t, s, o.ID, core.X, 1, 80)[0]
	ds := deliveries(t, s, o.ID, now.ID)
	if len(ds) != 1 || ds[0].MatchID != m.ID || ds[0].Event != core.EventMatchCreated || ds[0].Status != core.DeliveryQueued || ds[0].Payload != nil ||
		!ds[0].NextAttemptAt.Equal(core.ChannelSlot(ds[0].CreatedAt)) {
		t.Fatalf("the channel at once has %+v", ds)
	}
	if ds := deliveries(t, s, o.ID, digest.ID); len(ds) != 0 {
		t.Fatalf("the digest channel has %+v queued", ds)
	}
	// Due now, rather than wait for the slot.
	if _, err := s.Webhooks.UpdateDelivery(ctx, o.ID, now.ID, ds[0].ID, func(d core.Delivery) (core.Delivery, error) {
		d.NextAttemptAt = d.CreatedAt
		return d, nil
	}); err != nil {
		t.Fatal(err)
	}
	var mine []ports.DueDelivery
	for _, d := range claimAll(t, s, o.ID, ports.DeliveryClaim{Limit: 50, Lease: time.Hour}) {
		if d.Delivery.WebhookID == now.ID {
			mine = append(mine, d)
		}
	}
	if len(mine) != 1 || mine[0].Webhook.Kind != core.ChannelTelegram || string(mine[0].SealedSecret) != "sealed:"+now.ID ||
		mine[0].Match == nil || mine[0].Match.ID != m.ID {
		t.Fatalf("claimed %+v", mine)
	}
}

// A digest gathers the owner's matches scored in its period, at or above
// the channel's score, on its platforms, strongest first, with the count
// of all; DigestChannels lists the active channels on a digest.
func testDigestMatches(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	hourly := core.AlertSchedule{Frequency: core.AlertHourly}
	ch := newChannel(t, s, o.ID, core.ChannelDiscord, "discord.com/api/webhooks/1122…/…abcd", 70, hourly, core.X)
	daily := newChannel(t, s, o.ID, core.ChannelNtfy, "ntfy.sh/…abcd", 0, core.AlertSchedule{Frequency: core.AlertDaily, Hour: 7})
	atOnceCh := newChannel(t, s, o.ID, core.ChannelSlack, "hooks.slack.com/…", 0, atOnce)
	off := newChannel(t, s, o.ID, core.ChannelSlack, "hooks.slack.com/…", 0, hourly)
	if _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, off.ID, func(w core.Webhook) (core.Webhook, error) { w.Active = false; return w, nil }); err != nil {
		t.Fatal(err)
	}

	before := time.Now().Add(-time.Second)
	weak := scoredMatches(t, s, o.ID, core.X, 1, 60)
	mid := scoredMatches(t, s, o.ID, core.X, 2, 75)
	strong := scoredMatches(t, s, o.ID, core.X, 1, 95)
	reddit := scoredMatches(t, s, o.ID, core.Reddit, 1, 99)
	scoredMatches(t, s, other.ID, core.X, 1, 99)
	after := time.Now().Add(time.Second)
	_ = weak

	ms, n, err := s.Channels.DigestMatches(ctx, ch, before, after, 2)
	if err != nil || n != 3 || len(ms) != 2 || ms[0].ID != strong[0].ID || ms[1].Score.Value != 75 || ms[0].Score == nil {
		t.Fatalf("DigestMatches = %d of %d (%+v), %v; want the 95 then a 75 of 3", len(ms), n, ms, err)
	}
	// Of equal scores the newer comes first.
	if ms[1].ID != mid[1].ID && !ms[1].CreatedAt.After(mid[0].CreatedAt) {
		t.Fatalf("the 75s in order %s, want the newer first", ms[1].ID)
	}
	all, n, err := s.Channels.DigestMatches(ctx, daily, before, after, 10)
	if err != nil || n != 5 || len(all) != 5 || all[0].ID != reddit[0].ID {
		t.Fatalf("every platform from 0: %d of %d, %v", len(all), n, err)
	}
	if ms, n, err := s.Channels.DigestMatches(ctx, ch, after, after.Add(time.Hour), 10); err != nil || n != 0 || len(ms) != 0 {
		t.Fatalf("a later period: %d of %d, %v", len(ms), n, err)
	}
	if ms, n, err := s.Channels.DigestMatches(ctx, ch, before.Add(-time.Hour), before, 10); err != nil || n != 0 || len(ms) != 0 {
		t.Fatalf("an earlier period: %d of %d, %v", len(ms), n, err)
	}

	chans, err := s.Channels.DigestChannels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range chans {
		if c.OwnerID == o.ID {
			ids = append(ids, c.ID)
		}
	}
	want := []string{ch.ID, daily.ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("DigestChannels gave %v, want %v (not the one at once %s nor the one off %s)", ids, want, atOnceCh.ID, off.ID)
	}
}

// AddDigest ends a period once: the delivery stored due at once by the
// store's clock, the period's end kept; a sweep that read the channel
// before is turned away, and a channel off or deleted takes none.
func testAddDigest(t *testing.T, s Stores) {
	o := newOwner(t, s)
	ch := newChannel(t, s, o.ID, core.ChannelSlack, "hooks.slack.com/…", 0, core.AlertSchedule{Frequency: core.AlertHourly})
	at := time.Now().UTC().Truncate(time.Microsecond).Add(time.Hour) // a clock ahead of the store's
	d := &core.Delivery{Event: core.EventDigest, Trigger: core.TriggerScheduled, Payload: []byte(`{"text":"digest"}`), CreatedAt: at, NextAttemptAt: at}
	before := time.Now().Add(-time.Second)
	ok, err := s.Channels.AddDigest(ctx, ch, at, d, core.DeliveryLogSize)
	if err != nil || !ok {
		t.Fatalf("AddDigest = %v, %v", ok, err)
	}
	ds := deliveries(t, s, o.ID, ch.ID)
	if len(ds) != 1 || ds[0].ID == "" || ds[0].Event != core.EventDigest || ds[0].Status != core.DeliveryQueued ||
		string(ds[0].Payload) != `{"text":"digest"}` || ds[0].NextAttemptAt.After(time.Now()) || ds[0].NextAttemptAt.Before(before) || ds[0].MatchID != "" {
		t.Fatalf("stored %+v", ds)
	}
	got, _, _ := s.Webhooks.Webhook(ctx, o.ID, ch.ID)
	if !got.LastDigestAt.Equal(at) {
		t.Fatalf("the period ended at %v, want %v", got.LastDigestAt, at)
	}
	// ch as read before: another sweep ended its period.
	if ok, err := s.Channels.AddDigest(ctx, ch, at.Add(time.Minute), d, core.DeliveryLogSize); err != nil || ok {
		t.Fatalf("a stale AddDigest = %v, %v", ok, err)
	}
	// No delivery: the period ends all the same.
	later := at.Add(time.Hour)
	if ok, err := s.Channels.AddDigest(ctx, got, later, nil, core.DeliveryLogSize); err != nil || !ok {
		t.Fatalf("AddDigest without a delivery = %v, %v", ok, err)
	}
	got, _, _ = s.Webhooks.Webhook(ctx, o.ID, ch.ID)
	if !got.LastDigestAt.Equal(later) || len(deliveries(t, s, o.ID, ch.ID)) != 1 {
		t.Fatalf("after an empty period: %+v, %d deliveries", got, len(deliveries(t, s, o.ID, ch.ID)))
	}
	off, err := s.Webhooks.UpdateWebhook(ctx, o.ID, ch.ID, func(w core.Webhook) (core.Webhook, error) { w.Active = false; return w, nil })
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Channels.AddDigest(ctx, off, later.Add(time.Hour), d, core.DeliveryLogSize); err != nil || ok {
		t.Fatalf("AddDigest of a channel off = %v, %v", ok, err)
	}
	if err := s.Webhooks.DeleteWebhook(ctx, o.ID, ch.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Channels.AddDigest(ctx, got, later.Add(time.Hour), d, core.DeliveryLogSize); err != nil || ok {
		t.Fatalf("AddDigest of a deleted channel = %v, %v", ok, err)
	}
}

// scoredDue is scoredMatches with every delivery queued due at the
// store's time plus offset, whatever the webhook's kind.
func scoredDue(t *testing.T, s Stores, ownerID string, n int, offset time.Duration) []core.Match {
	t.Helper()
	p := newPhrase(t, s, ownerID, "burst "+unique(), "x", "")
	var batch []ports.PostMatches
	for range n {
		batch = append(batch, ports.PostMatches{Post: post(unique()), PhraseIDs: []string{p.ID}})
	}
	res, err := s.Matches.SaveMatches(ctx, ownerID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	var up []ports.ScoreUpdate
	for _, m := range res.Matches {
		up = append(up, ports.ScoreUpdate{Match: m, Score: core.Score{Value: 80, Intent: core.IntentBuying, Reason: "wants one"}})
	}
	plan := func(m core.Match, hooks []core.Webhook, at time.Time) []core.Delivery {
		ds := core.QueueMatchCreated(m, hooks, at)
		for i := range ds {
			ds[i].NextAttemptAt = at.Add(offset)
		}
		return ds
	}
	got, err := s.Matches.SetScores(ctx, up, plan)
	if err != nil || len(got) != n {
		t.Fatalf("SetScores: %d of %d, %v", len(got), n, err)
	}
	return got
}

// ClaimBurst takes the rest of one channel's due match messages without
// a body, earliest due first, up to its limit, each with its match and
// the channel's sealed target: never one another claim holds, one of
// another channel, one not due yet or one with a body (a digest, or a
// message written before), and nothing of a channel switched off.
// Concurrent calls share a channel's deliveries, each taken once.
func testClaimBurst(t *testing.T, s Stores) {
	o := newOwner(t, s)
	ch := newChannel(t, s, o.ID, core.ChannelSlack, "hooks.slack.com/…", 0, atOnce)
	other := newChannel(t, s, o.ID, core.ChannelNtfy, "ntfy.sh/…abcd", 0, atOnce)
	off := newChannel(t, s, o.ID, core.ChannelDiscord, "discord.com/…", 0, atOnce)
	before := time.Now()
	due := scoredDue(t, s, o.ID, 6, -time.Millisecond)
	later := scoredDue(t, s, o.ID, 1, time.Hour)
	if _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, off.ID, func(w core.Webhook) (core.Webhook, error) { w.Active = false; return w, nil }); err != nil {
		t.Fatal(err)
	}
	mine := func(due []ports.DueDelivery, id string) []ports.DueDelivery {
		var out []ports.DueDelivery
		for _, d := range due {
			if d.Delivery.WebhookID == id {
				out = append(out, d)
			}
		}
		return out
	}

	// One of the channel's, claimed as the worker claims, and tried: it
	// is queued again, due, with the body it was sent with.
	held := mine(claimOnce(t, s, o.ID, ports.DeliveryClaim{Limit: 100, PerWebhook: 1, Lease: time.Hour}), ch.ID)
	if len(held) != 1 {
		t.Fatalf("claimed %d of the channel's deliveries, want 1", len(held))
	}
	d := held[0].Delivery
	d.Payload = []byte(`{"text":"sent before"}`)
	d = d.Attempted(core.RetrySchedule{time.Minute}, 500, "http 500", time.Now().UTC(), 0)
	d.NextAttemptAt = time.Now().UTC().Add(-time.Second)
	if _, recorded, err := finish(t, s, held[0], d); err != nil || !recorded {
		t.Fatalf("recording the held one: %v, %v", recorded, err)
	}

	first, err := s.Deliveries.ClaimBurst(ctx, ch.ID, 3, time.Hour)
	if err != nil || len(first) != 3 {
		t.Fatalf("ClaimBurst(3) = %d, %v", len(first), err)
	}
	for i, b := range first {
		x := b.Delivery
		if x.WebhookID != ch.ID || x.ID == d.ID || x.Event != core.EventMatchCreated || x.Status != core.DeliveryQueued || len(x.Payload) != 0 ||
			b.Webhook.ID != ch.ID || b.Webhook.Kind != core.ChannelSlack || string(b.SealedSecret) != "sealed:"+ch.ID ||
			b.Match == nil || b.Match.ID != x.MatchID || b.Match.Score == nil || !slices.ContainsFunc(due, func(m core.Match) bool { return m.ID == x.MatchID }) ||
			b.LeaseUntil.Before(before.Add(50*time.Minute)) {
			t.Fatalf("burst %d: %+v", i, b)
		}
		if i > 0 && (x.NextAttemptAt.Before(first[i-1].Delivery.NextAttemptAt) ||
			x.NextAttemptAt.Equal(first[i-1].Delivery.NextAttemptAt) && x.ID < first[i-1].Delivery.ID) {
			t.Fatalf("burst not earliest due first: %+v after %+v", x, first[i-1].Delivery)
		}
	}
	rest, err := s.Deliveries.ClaimBurst(ctx, ch.ID, 100, time.Hour)
	if err != nil || len(rest) != 2 {
		t.Fatalf("ClaimBurst(100) = %d, %v; want the 2 left of 6 (one has a body, three are held)", len(rest), err)
	}
	for _, b := range rest {
		if slices.ContainsFunc(first, func(f ports.DueDelivery) bool { return f.Delivery.ID == b.Delivery.ID }) ||
			b.Delivery.MatchID == later[0].ID || b.Delivery.ID == d.ID {
			t.Fatalf("taken again or not due: %+v", b.Delivery)
		}
	}
	if again, err := s.Deliveries.ClaimBurst(ctx, ch.ID, 100, time.Hour); err != nil || len(again) != 0 {
		t.Fatalf("a third ClaimBurst took %d, %v", len(again), err)
	}
	if got, err := s.Deliveries.ClaimBurst(ctx, off.ID, 100, time.Hour); err != nil || len(got) != 0 {
		t.Fatalf("ClaimBurst of a channel switched off took %d, %v", len(got), err)
	}
	if got, err := s.Deliveries.ClaimBurst(ctx, "no-such-channel", 100, time.Hour); err != nil || len(got) != 0 {
		t.Fatalf("ClaimBurst of no channel took %d, %v", len(got), err)
	}

	// A lease from ClaimBurst identifies the claim as any other's.
	x := first[0].Delivery.Attempted(nil, 200, "", time.Now().UTC(), 0)
	if _, recorded, err := finish(t, s, first[0], x); err != nil || !recorded {
		t.Fatalf("recording a burst's delivery: %v, %v", recorded, err)
	}

	// Concurrent calls take each of the other channel's five free
	// deliveries once.
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				got, err := s.Deliveries.ClaimBurst(ctx, other.ID, 2, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, b := range got {
					seen[b.Delivery.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 5 {
		t.Fatalf("concurrent bursts took %d of the other channel's 5 free deliveries", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("delivery %s taken %d times", id, n)
		}
	}
}
