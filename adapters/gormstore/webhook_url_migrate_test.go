package gormstore

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/core"
)

// Migration 31 brings the webhooks stored before to core.CheckWebhookURL's
// normal form (an empty path "/", escaped unreserved characters of the path
// decoded), so a new spelling of an old address is refused as a second
// webhook; rows whose normal form another of the owner's webhooks has or
// would get stay as they were, and channels are not touched.
func TestMigrationNormalisesStoredWebhookURLs(t *testing.T) {
	// Addresses as the build before stored them (its CheckWebhookURL's
	// output), and what each must be after the step.
	rows := []webhookURLRow{
		{"w1", "o1", "webhook", "https://a.example.com", "https://a.example.com/"},
		{"w2", "o1", "webhook", "https://b.example.com?x=%7E", "https://b.example.com/?x=%7E"},
		// Its %2e upper-cased by step 32.
		{"w3", "o1", "webhook", "https://c.example.com/%7Eu/%41%2F%2E%2e%20%5f?q=%41", "https://c.example.com/~u/A%2F%2E%2E%20_?q=%41"},
		{"w4", "o1", "webhook", "https://d.example.com", "https://d.example.com"},           // w5 has the normal form
		{"w5", "o1", "webhook", "https://d.example.com/", "https://d.example.com/"},         // already normal
		{"w6", "o1", "webhook", "https://e.example.com/%7Ea", "https://e.example.com/%7Ea"}, // w7 would get it too
		{"w7", "o1", "webhook", "https://e.example.com/%7ea", "https://e.example.com/%7ea"},
		{"w8", "o2", "webhook", "https://d.example.com", "https://d.example.com/"}, // another owner's
		{"w9", "o1", "webhook", "https://f.example.com/x", "https://f.example.com/x"},
		{"c1", "o1", "slack", "https://hooks.slack.com", "https://hooks.slack.com"}, // a channel's label
	}
	// A new spelling of a migrated address is the same webhook.
	again := []string{"https://A.example.com", "https://c.example.com/~u/%41%2F%2E%2e%20_?q=%41"}
	checkWebhookURLStep(t, 30, rows, again)
}

// webhookURLRow is a webhook or channel row as a build before a step
// stored it (url), and the url it must have after the step (want).
type webhookURLRow struct{ id, owner, kind, url, want string }

// checkWebhookURLStep brings a database to schema version before, stores
// rows as that build did, migrates to the newest version and checks each
// row's url became its want, as core.CheckWebhookURL would make it where
// the step changed it; then each address in again, once checked, is
// refused as a second webhook of o1. It runs on SQLite, and on Postgres
// where the test env names one.
func checkWebhookURLStep(t *testing.T, before int, rows []webhookURLRow, again []string) {
	t.Helper()
	for dialect, url := range dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := openAt(t, url, before)
			for _, o := range []string{"o1", "o2"} {
				if err := db.plain.Exec(`INSERT INTO owners (id, email, created_at) VALUES (?, ?, 0)`, o, o+"@example.com").Error; err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range rows {
				if err := db.plain.Exec(`INSERT INTO webhooks (id, owner_id, url, min_score, active, secret, created_at, kind) VALUES (?, ?, ?, 0, true, ?, 0, ?)`,
					r.id, r.owner, r.url, []byte{0}, r.kind).Error; err != nil {
					t.Fatal(err)
				}
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				var got string
				if err := db.plain.Raw(`SELECT url FROM webhooks WHERE id = ?`, r.id).Scan(&got).Error; err != nil {
					t.Fatal(err)
				}
				if got != r.want {
					t.Errorf("%s %q became %q, want %q", r.id, r.url, got, r.want)
				}
				// The step and core agree on the normal form.
				if norm, err := core.CheckWebhookURL(r.url, false); r.kind == "webhook" && got != r.url && (err != nil || norm != got) {
					t.Errorf("%s: the step made %q, core makes %q (%v)", r.id, got, norm, err)
				}
			}
			store := NewWebhookStore(db)
			for _, spelling := range again {
				norm, err := core.CheckWebhookURL(spelling, false)
				if err != nil {
					t.Fatal(err)
				}
				w := core.Webhook{OwnerID: "o1", URL: norm, Active: true}
				err = store.CreateWebhook(ctx, &w, func(core.Usage) error { return nil }, func(string) ([]byte, error) { return []byte{0}, nil })
				if !core.IsKind(err, core.KindConflict) {
					t.Errorf("%q stored as %q beside the migrated webhook: %v", spelling, w.URL, err)
				}
			}
		})
	}
}
