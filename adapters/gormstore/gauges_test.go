package gormstore_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// TestGauges: the depths count unscored matches and queued deliveries
// only, the oldest queued delivery is the earliest made, and a database
// that cannot be read says so.
func TestGauges(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://:memory:"}
	if os.Getenv(pgtest.Env) != "" {
		urls["postgres"] = PostgresURL(t)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := open(t, url)
			s := stores(db)
			if g, err := db.Gauges(ctx); err != nil || g != (gormstore.Gauges{}) {
				t.Fatalf("empty: %+v, %v", g, err)
			}
			o, _ := core.NewOwner("gauges@example.com", "")
			if err := s.Owners.CreateOwner(ctx, &o); err != nil {
				t.Fatal(err)
			}
			p, _ := core.NewPhrase(o.ID, "gauge", "x", "")
			if _, err := s.Phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
				t.Fatal(err)
			}
			res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{
				{Post: core.Post{ExternalID: "1", Text: "gauge one"}, PhraseIDs: []string{p.ID}},
				{Post: core.Post{ExternalID: "2", Text: "gauge two"}, PhraseIDs: []string{p.ID}},
				{Post: core.Post{ExternalID: "3", Text: "gauge three"}, PhraseIDs: []string{p.ID}},
			})
			if err != nil || len(res.Matches) != 3 {
				t.Fatalf("SaveMatches: %+v, %v", res, err)
			}
			if _, err := s.Matches.SetScores(ctx, []ports.ScoreUpdate{{Match: res.Matches[0], Score: core.Score{Value: 50, Intent: core.IntentBuying, Reason: "r"}}}, core.QueueMatchCreated); err != nil {
				t.Fatal(err)
			}
			w := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/gauges", Active: true}
			seal := func(id string) ([]byte, error) { return []byte("sealed:" + id), nil }
			if err := s.Webhooks.CreateWebhook(ctx, &w, core.Limits{WebhooksPerPerson: 10}.CheckNewWebhook, seal); err != nil {
				t.Fatal(err)
			}
			first := time.Now().Add(-time.Hour).Truncate(time.Microsecond).UTC()
			for i, st := range []core.DeliveryStatus{core.DeliveryDelivered, core.DeliveryQueued, core.DeliveryQueued} {
				d := core.Delivery{ID: s.Webhooks.NewDeliveryID(), WebhookID: w.ID, OwnerID: o.ID, Event: "ping",
					Trigger: core.TriggerPing, Status: st, Payload: []byte("{}"), CreatedAt: first.Add(time.Duration(i-1) * time.Minute)}
				if err := s.Webhooks.AddDelivery(ctx, d, 0); err != nil {
					t.Fatal(err)
				}
			}
			want := gormstore.Gauges{Unscored: 2, Queued: 2, OldestQueued: first}
			if g, err := db.Gauges(ctx); err != nil || g != want {
				t.Fatalf("Gauges = %+v, %v; want %+v", g, err, want)
			}
			db.Close()
			if _, err := db.Gauges(ctx); err == nil {
				t.Fatal("a closed database read as gauges")
			}
		})
	}
}
