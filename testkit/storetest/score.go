package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// scoreMatch stores sc as m's first score through SetScores, with the
// plan the application hands in (core.QueueMatchCreated), as the scoring
// sweep stores its verdicts, and returns m as SetScores returns it, its
// score set.
func scoreMatch(t *testing.T, s Stores, m core.Match, sc core.Score) core.Match {
	t.Helper()
	got, err := s.Matches.SetScores(ctx, []ports.ScoreUpdate{{Match: m, Score: sc}}, core.QueueMatchCreated)
	if err != nil || len(got) != 1 {
		t.Fatalf("SetScores of match %s: %d scored, %v", m.ID, len(got), err)
	}
	return got[0]
}

// testSetScores checks the batched score write: many verdicts in one
// call, first score wins, other owners' and unknown matches passed over,
// and the deliveries queued exactly as the plan says (the store applies
// no rule of its own), atomically with the scores.
func testSetScores(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	p := newPhrase(t, s, o.ID, "batch "+unique(), "x", "")
	op := newPhrase(t, s, other.ID, "batch "+unique(), "x", "")
	save := func(ownerID, phraseID string, n int) []core.Match {
		var batch []ports.PostMatches
		for range n {
			batch = append(batch, ports.PostMatches{Post: post(unique()), PhraseIDs: []string{phraseID}})
		}
		res, err := s.Matches.SaveMatches(ctx, ownerID, core.X, batch)
		if err != nil || len(res.Matches) != n {
			t.Fatalf("SaveMatches: %d matches, %v", len(res.Matches), err)
		}
		return res.Matches
	}
	mine, theirs := save(o.ID, p.ID, 120), save(other.ID, op.ID, 1)
	wanted := newWebhook(t, s, o.ID, "https://hooks.example.com/"+unique(), 0)
	off := newWebhook(t, s, o.ID, "https://hooks.example.com/"+unique(), 0)
	if _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, off.ID, func(w core.Webhook) (core.Webhook, error) {
		w.Active = false
		return w, nil
	}); err != nil {
		t.Fatal(err)
	}
	newWebhook(t, s, other.ID, "https://hooks.example.com/"+unique(), 0)

	// A plan unlike core's rule: scores of 50 and more go to the first
	// webhook only. It sees every webhook of the owner, inactive too.
	var mu sync.Mutex
	planned := map[string]int{}
	plan := func(m core.Match, hooks []core.Webhook, at time.Time) []core.Delivery {
		mu.Lock()
		planned[m.ID]++
		mu.Unlock()
		if m.Score == nil || len(hooks) != 2 || hooks[0].ID != wanted.ID || hooks[1].ID != off.ID || hooks[1].Active {
			t.Errorf("plan for %+v got webhooks %+v", m, hooks)
			return nil
		}
		if m.Score.Value < 50 {
			return nil
		}
		return []core.Delivery{{WebhookID: wanted.ID, OwnerID: m.OwnerID, Event: core.EventMatchCreated,
			Trigger: core.TriggerScheduled, Status: core.DeliveryQueued, CreatedAt: at, NextAttemptAt: at}}
	}
	// Named first with another owner: not that owner's, and no reason to
	// pass over the match's own update after it.
	updates := []ports.ScoreUpdate{{Match: core.Match{OwnerID: other.ID, ID: mine[5].ID}, Score: core.Score{Value: 97}}}
	for i, m := range mine {
		updates = append(updates, ports.ScoreUpdate{Match: m,
			Score: core.Score{Value: i % 100, Intent: core.IntentQuestion, Reason: "asks"}})
	}
	updates = append(updates,
		ports.ScoreUpdate{Match: core.Match{OwnerID: o.ID, ID: theirs[0].ID}, Score: core.Score{Value: 99}},    // not o's
		ports.ScoreUpdate{Match: core.Match{OwnerID: o.ID, ID: "no-such-match"}, Score: core.Score{Value: 99}}, // gone
		ports.ScoreUpdate{Match: mine[0], Score: core.Score{Value: 98}},                                        // twice in one batch
	)
	got, err := s.Matches.SetScores(ctx, updates, plan)
	if err != nil {
		t.Fatalf("SetScores: %v", err)
	}
	if len(got) != len(mine) {
		t.Fatalf("SetScores scored %d matches, want %d", len(got), len(mine))
	}
	for i, m := range got {
		if m.ID != mine[i].ID || m.Score == nil || m.Score.Value != i%100 || m.Score.Intent != core.IntentQuestion ||
			m.Score.Reason != "asks" || m.Post.Text != mine[i].Post.Text {
			t.Fatalf("scored match %d = %+v", i, m)
		}
		if planned[m.ID] != 1 {
			t.Fatalf("plan ran %d times for match %d", planned[m.ID], i)
		}
	}
	for _, i := range []int{1, 57, len(mine) - 1} {
		stored, err := s.Matches.Match(ctx, o.ID, mine[i].ID)
		if err != nil || stored.Score == nil || stored.Score.Value != i%100 || stored.Score.Reason != "asks" {
			t.Fatalf("stored match %d = %+v, %v", i, stored, err)
		}
	}
	if len(planned) != len(mine) {
		t.Fatalf("plan ran for %d matches, want %d", len(planned), len(mine))
	}
	ds := deliveries(t, s, o.ID, wanted.ID)
	if want := 50; len(ds) != want {
		t.Fatalf("%d deliveries queued, want %d", len(ds), want)
	}
	for _, d := range ds {
		if d.ID == "" || d.Status != core.DeliveryQueued || d.Event != core.EventMatchCreated {
			t.Fatalf("queued %+v", d)
		}
	}
	if n := len(deliveries(t, s, o.ID, off.ID)); n != 0 {
		t.Fatalf("%d deliveries for the webhook the plan left out", n)
	}
	if m, err := s.Matches.Match(ctx, other.ID, theirs[0].ID); err != nil || m.Score != nil {
		t.Fatalf("another owner's match: %+v %v", m, err)
	}

	// Scored already: nothing stored, no plan, no delivery.
	clear(planned)
	if again, err := s.Matches.SetScores(ctx, updates[:10], plan); err != nil || len(again) != 0 || len(planned) != 0 {
		t.Fatalf("second SetScores = %d matches, %d plans, %v", len(again), len(planned), err)
	}
	if n := len(deliveries(t, s, o.ID, wanted.ID)); n != 50 {
		t.Fatalf("%d deliveries after scoring again, want 50", n)
	}

	// A delivery that cannot be stored takes the scores of its batch
	// with it.
	fresh := save(o.ID, p.ID, 3)
	bad := func(m core.Match, _ []core.Webhook, at time.Time) []core.Delivery {
		return []core.Delivery{{WebhookID: "no-such-webhook", OwnerID: m.OwnerID, Event: core.EventMatchCreated,
			Trigger: core.TriggerScheduled, Status: core.DeliveryQueued, CreatedAt: at, NextAttemptAt: at}}
	}
	var batch []ports.ScoreUpdate
	for _, m := range fresh {
		batch = append(batch, ports.ScoreUpdate{Match: m, Score: core.Score{Value: 90}})
	}
	if _, err := s.Matches.SetScores(ctx, batch, bad); err == nil {
		t.Fatal("SetScores stored a delivery of an unknown webhook")
	}
	for _, m := range fresh {
		if got, err := s.Matches.Match(ctx, o.ID, m.ID); err != nil || got.Score != nil {
			t.Fatalf("a failed batch left a score: %+v %v", got, err)
		}
	}
	// Without a plan the scores are stored and nothing is queued.
	if got, err := s.Matches.SetScores(ctx, batch, nil); err != nil || len(got) != len(fresh) {
		t.Fatalf("SetScores without a plan: %d, %v", len(got), err)
	}
	if n := len(deliveries(t, s, o.ID, wanted.ID)); n != 50 {
		t.Fatalf("%d deliveries after scoring without a plan, want 50", n)
	}
	if got, err := s.Matches.SetScores(ctx, nil, plan); err != nil || len(got) != 0 {
		t.Fatalf("SetScores of nothing: %v %v", got, err)
	}
}
