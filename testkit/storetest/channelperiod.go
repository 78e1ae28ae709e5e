package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// periodEnds is a ports.PeriodEnd that ends the period at, reads the
// period from the channel's LastDigestAt and queues a digest naming how
// many matches it had; each call is kept.
type periodEnds struct {
	at    time.Time
	calls []core.Webhook
	read  []core.Match
	total int
	then  func() // run once the period is read
}

func (p *periodEnds) end(ch core.Webhook, read ports.DigestRead) (time.Time, *core.Delivery, error) {
	p.calls = append(p.calls, ch)
	ms, total, err := read(ch.LastDigestAt, p.at, 10)
	if err != nil {
		return time.Time{}, nil, err
	}
	p.read, p.total = ms, total
	if p.then != nil {
		p.then()
	}
	if total == 0 {
		return p.at, nil, nil
	}
	return p.at, &core.Delivery{Event: core.EventDigest, Trigger: core.TriggerScheduled, Payload: []byte(`{"text":"period"}`)}, nil
}

// digestsOf are the channel's digest deliveries.
func digestsOf(t *testing.T, s Stores, ownerID, id string) []core.Delivery {
	t.Helper()
	var out []core.Delivery
	for _, d := range deliveries(t, s, ownerID, id) {
		if d.Event == core.EventDigest {
			out = append(out, d)
		}
	}
	return out
}

// onDigest moves a channel to hourly with its period begun at start.
func onDigest(t *testing.T, s Stores, ownerID, id string, start time.Time) {
	t.Helper()
	if _, err := s.Channels.UpdateChannel(ctx, ownerID, id, func(w core.Webhook, _ []byte) (core.Webhook, []byte, error) {
		w.Schedule, w.LastDigestAt = core.AlertSchedule{Frequency: core.AlertHourly}, start
		return w, nil, nil
	}); err != nil {
		t.Fatal(err)
	}
}

// UpdateChannelPeriod ends the open period of a channel its change takes
// off its digest in the change's transaction: end is given the channel
// as it stood and reads the period's matches, its digest is queued and
// its end kept. A change that keeps the digest, or a channel not on one,
// ends nothing; an error from end stores nothing. Scoring begun while
// the period ends reads the channel as changed.
func testUpdateChannelPeriod(t *testing.T, s Stores) {
	o := newOwner(t, s)
	ch := newChannel(t, s, o.ID, core.ChannelSlack, "hooks.slack.com/…", 0, atOnce)
	start := time.Now().UTC().Truncate(time.Microsecond).Add(-time.Second)
	onDigest(t, s, o.ID, ch.ID, start)
	in := scoredMatches(t, s, o.ID, core.X, 2, 80)
	p := &periodEnds{at: time.Now().UTC().Truncate(time.Microsecond).Add(time.Second)}
	change := func(f func(*core.Webhook)) func(core.Webhook, []byte) (core.Webhook, []byte, error) {
		return func(w core.Webhook, _ []byte) (core.Webhook, []byte, error) { f(&w); return w, nil, nil }
	}

	daily := change(func(w *core.Webhook) { w.Schedule = core.AlertSchedule{Frequency: core.AlertDaily, Hour: 9} })
	if got, err := s.Channels.UpdateChannelPeriod(ctx, o.ID, ch.ID, daily, p.end, core.DeliveryLogSize); err != nil ||
		len(p.calls) != 0 || !got.LastDigestAt.Equal(start) {
		t.Fatalf("hourly to daily: %+v, %v, %d ends; want the period kept", got, err, len(p.calls))
	}
	refused := errors.New("refused")
	toOnce := change(func(w *core.Webhook) { w.Schedule = atOnce })
	if _, err := s.Channels.UpdateChannelPeriod(ctx, o.ID, ch.ID, toOnce, func(core.Webhook, ports.DigestRead) (time.Time, *core.Delivery, error) {
		return time.Time{}, nil, refused
	}, core.DeliveryLogSize); !errors.Is(err, refused) {
		t.Fatalf("an end that fails: %v", err)
	}
	if got, _, _ := s.Webhooks.Webhook(ctx, o.ID, ch.ID); !got.Schedule.Digest() || !got.LastDigestAt.Equal(start) || len(digestsOf(t, s, o.ID, ch.ID)) != 0 {
		t.Fatalf("after an end that failed: %+v, %+v", got, digestsOf(t, s, o.ID, ch.ID))
	}

	// Saved before: on SQLite the save would wait for the change too.
	ph := newPhrase(t, s, o.ID, "meanwhile "+unique(), "x", "")
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: post(unique()), PhraseIDs: []string{ph.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	scored := make(chan error, 1)
	p.then = func() {
		go func() {
			_, err := s.Matches.SetScores(ctx, []ports.ScoreUpdate{{Match: res.Matches[0], Score: core.Score{Value: 80, Intent: core.IntentBuying}}},
				core.QueueMatchCreated)
			scored <- err
		}()
	}
	got, err := s.Channels.UpdateChannelPeriod(ctx, o.ID, ch.ID, toOnce, p.end, core.DeliveryLogSize)
	if err != nil || got.Schedule.Digest() || !got.LastDigestAt.Equal(p.at) {
		t.Fatalf("to at once: %+v, %v; want the period ended at %v", got, err, p.at)
	}
	if len(p.calls) != 1 || p.calls[0].Schedule.Frequency != core.AlertDaily || !p.calls[0].LastDigestAt.Equal(start) || p.total != 2 ||
		len(p.read) != 2 || p.read[0].ID != in[0].ID && p.read[0].ID != in[1].ID {
		t.Fatalf("end given %+v, read %d of %d", p.calls, len(p.read), p.total)
	}
	ds := digestsOf(t, s, o.ID, ch.ID)
	if len(ds) != 1 || ds[0].Status != core.DeliveryQueued || string(ds[0].Payload) != `{"text":"period"}` || ds[0].NextAttemptAt.After(time.Now()) {
		t.Fatalf("digests %+v", ds)
	}
	if err := <-scored; err != nil {
		t.Fatal(err)
	}
	var atOnceOf int
	for _, d := range deliveries(t, s, o.ID, ch.ID) {
		if d.MatchID == res.Matches[0].ID {
			atOnceOf++
		}
	}
	if atOnceOf != 1 {
		t.Fatalf("the match scored while the period ended has %d deliveries at once, want 1", atOnceOf)
	}

	// At once, and off: nothing to end.
	off := change(func(w *core.Webhook) { w.Active = false })
	if _, err := s.Channels.UpdateChannelPeriod(ctx, o.ID, ch.ID, off, p.end, core.DeliveryLogSize); err != nil || len(p.calls) != 1 {
		t.Fatalf("an at-once channel switched off: %v, %d ends", err, len(p.calls))
	}
}

// FinishAttempts ends the open period of a channel on a digest that its
// rules switch off, in the same transaction: the period's digest is
// queued, the end kept, and the result says so. Nothing is ended for a
// switch-off without EndPeriod.
func testSwitchOffEndsPeriod(t *testing.T, s Stores) {
	o := newOwner(t, s)
	ch := newChannel(t, s, o.ID, core.ChannelSlack, "hooks.slack.com/…", 0, atOnce)
	scoredDue(t, s, o.ID, 1, -time.Millisecond) // a message queued at once, before the digest
	start := time.Now().UTC().Truncate(time.Microsecond)
	onDigest(t, s, o.ID, ch.ID, start)
	in := scoredMatches(t, s, o.ID, core.X, 1, 80)
	held, err := s.Deliveries.ClaimBurst(ctx, ch.ID, 10, time.Hour)
	if err != nil || len(held) != 1 {
		t.Fatalf("ClaimBurst = %d, %v", len(held), err)
	}
	p := &periodEnds{at: time.Now().UTC().Truncate(time.Microsecond).Add(time.Second)}
	rules := ports.AttemptRules{
		Webhook:   func(w core.Webhook, d core.Delivery) core.Webhook { w.Active = false; return w },
		KeepLog:   core.DeliveryLogSize,
		EndPeriod: p.end,
	}
	a := ports.Attempt{Due: held[0], Delivery: held[0].Delivery.Attempted(nil, 500, "http 500", time.Now().UTC(), 0)}
	res, err := s.Deliveries.FinishAttempts(ctx, []ports.Attempt{a}, rules)
	if err != nil || len(res) != 1 || !res[0].SwitchedOff || res[0].Webhook.Active || !res[0].Webhook.LastDigestAt.Equal(p.at) {
		t.Fatalf("FinishAttempts = %+v, %v", res, err)
	}
	if len(p.calls) != 1 || !p.calls[0].LastDigestAt.Equal(start) || p.total != 1 || p.read[0].ID != in[0].ID {
		t.Fatalf("end given %+v, read %+v of %d", p.calls, p.read, p.total)
	}
	got, _, _ := s.Webhooks.Webhook(ctx, o.ID, ch.ID)
	ds := digestsOf(t, s, o.ID, ch.ID)
	if got.Active || !got.LastDigestAt.Equal(p.at) || len(ds) != 1 || ds[0].Status != core.DeliveryQueued {
		t.Fatalf("after the switch-off: %+v, digests %+v", got, ds)
	}
	if again, err := s.Deliveries.ClaimBurst(ctx, ch.ID, 10, time.Hour); err != nil || len(again) != 0 {
		t.Fatalf("claimed %d of a channel off, %v", len(again), err)
	}

	// Without EndPeriod the period stays open.
	other := newChannel(t, s, o.ID, core.ChannelNtfy, "ntfy.sh/…", 0, atOnce)
	scoredDue(t, s, o.ID, 1, -time.Millisecond)
	onDigest(t, s, o.ID, other.ID, start)
	held, err = s.Deliveries.ClaimBurst(ctx, other.ID, 10, time.Hour)
	if err != nil || len(held) != 1 {
		t.Fatalf("ClaimBurst = %d, %v", len(held), err)
	}
	rules.EndPeriod = nil
	a = ports.Attempt{Due: held[0], Delivery: held[0].Delivery.Attempted(nil, 500, "http 500", time.Now().UTC(), 0)}
	if res, err := s.Deliveries.FinishAttempts(ctx, []ports.Attempt{a}, rules); err != nil || !res[0].SwitchedOff || !res[0].Webhook.LastDigestAt.Equal(start) ||
		len(digestsOf(t, s, o.ID, other.ID)) != 0 {
		t.Fatalf("FinishAttempts without EndPeriod = %+v, %v", res, err)
	}
}
