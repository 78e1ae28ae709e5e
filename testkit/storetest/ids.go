package storetest

import (
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// impossibleIDs are ids no store hands out and some databases cannot
// even compare (Postgres text refuses NUL and bytes that are not UTF-8):
// a path such as /keywords/%00 brings them to the store.
var impossibleIDs = []string{"\x00", "a\x00b", "\xff", "t3_\xc3", "\xed\xa0\x80"}

// testImpossibleIDs: every lookup by such an id, whether as the thing's
// id or as its owner's, answers KindNotFound, as for any unknown id.
func testImpossibleIDs(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "impossible ids", "x", "")
	m := saveMatches(t, s, o.ID, p, 1)[0]
	w := newWebhook(t, s, o.ID, "https://hooks.example.com/"+unique(), 0)
	keep := func(v core.Webhook) (core.Webhook, error) { return v, nil }
	keepDelivery := func(d core.Delivery) (core.Delivery, error) { return d, nil }
	for _, bad := range impossibleIDs {
		for name, err := range map[string]error{
			"Owner":              func() error { _, err := s.Owners.Owner(ctx, bad); return err }(),
			"RevokeKey":          s.Keys.RevokeKey(ctx, o.ID, bad, time.Now()),
			"RevokeKey owner":    s.Keys.RevokeKey(ctx, bad, "k", time.Now()),
			"Phrase":             func() error { _, err := s.Phrases.Phrase(ctx, o.ID, bad); return err }(),
			"Phrase owner":       func() error { _, err := s.Phrases.Phrase(ctx, bad, p.ID); return err }(),
			"SetPhraseStatus":    func() error { _, err := s.Phrases.SetPhraseStatus(ctx, o.ID, bad, core.Paused); return err }(),
			"DeletePhrase":       s.Phrases.DeletePhrase(ctx, o.ID, bad),
			"DeletePhrase owner": s.Phrases.DeletePhrase(ctx, bad, p.ID),
			"Match":              func() error { _, err := s.Matches.Match(ctx, o.ID, bad); return err }(),
			"Match owner":        func() error { _, err := s.Matches.Match(ctx, bad, bad); return err }(),
			"PhraseVersion":      func() error { _, err := s.Listening.PhraseVersion(ctx, bad); return err }(),
			"Webhook":            func() error { _, _, err := s.Webhooks.Webhook(ctx, o.ID, bad); return err }(),
			"Webhook owner":      func() error { _, _, err := s.Webhooks.Webhook(ctx, bad, w.ID); return err }(),
			"UpdateWebhook":      func() error { _, err := s.Webhooks.UpdateWebhook(ctx, o.ID, bad, keep); return err }(),
			"DeleteWebhook":      s.Webhooks.DeleteWebhook(ctx, o.ID, bad),
			"Deliveries":         func() error { _, err := s.Webhooks.Deliveries(ctx, o.ID, bad, 10); return err }(),
			"UpdateDelivery":     func() error { _, err := s.Webhooks.UpdateDelivery(ctx, o.ID, w.ID, bad, keepDelivery); return err }(),
			"UpdateDelivery webhook": func() error {
				_, err := s.Webhooks.UpdateDelivery(ctx, o.ID, bad, bad, keepDelivery)
				return err
			}(),
		} {
			if !core.IsKind(err, core.KindNotFound) {
				t.Errorf("%s(%q) = %v, want KindNotFound", name, bad, err)
			}
		}
		// SetScores passes over a match it does not find rather than
		// fail, so such an id is passed over too, and the rest of its
		// batch is scored.
		sc := core.Score{Value: 1, Intent: core.IntentQuestion, Reason: "r"}
		got, err := s.Matches.SetScores(ctx, []ports.ScoreUpdate{
			{Match: core.Match{OwnerID: o.ID, ID: bad}, Score: sc},
			{Match: core.Match{OwnerID: bad, ID: m.ID}, Score: sc},
		}, core.QueueMatchCreated)
		if err != nil || len(got) != 0 {
			t.Errorf("SetScores(%q) = %+v, %v, want nothing scored and no error", bad, got, err)
		}
	}
	// One batch: the impossible ids passed over, the real match scored.
	var batch []ports.ScoreUpdate
	for _, bad := range impossibleIDs {
		batch = append(batch, ports.ScoreUpdate{Match: core.Match{OwnerID: o.ID, ID: bad}, Score: core.Score{Value: 2}})
	}
	batch = append(batch, ports.ScoreUpdate{Match: m, Score: core.Score{Value: 3, Intent: core.IntentQuestion, Reason: "r"}})
	if got, err := s.Matches.SetScores(ctx, batch, core.QueueMatchCreated); err != nil || len(got) != 1 || got[0].ID != m.ID {
		t.Fatalf("SetScores of impossible ids and a real match = %+v, %v", got, err)
	}
	// Nothing real was touched.
	if got, err := s.Phrases.Phrase(ctx, o.ID, p.ID); err != nil || got.Status != core.Listening {
		t.Fatalf("the owner's phrase after the lookups: %+v, %v", got, err)
	}
	if _, _, err := s.Webhooks.Webhook(ctx, o.ID, w.ID); err != nil {
		t.Fatalf("the owner's webhook after the lookups: %v", err)
	}
}
