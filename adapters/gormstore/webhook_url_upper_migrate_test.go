package gormstore

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/core"
)

// Migration 32 upper-cases the hex digits of the escapes of the webhooks
// stored before, as core.CheckWebhookURL now does, so an old address given
// again, in its old spelling or another, is refused as a second webhook;
// rows whose new form another of the owner's webhooks has or would get
// stay as they were, and channels are not touched.
func TestMigrationUpperCasesStoredWebhookEscapes(t *testing.T) {
	for dialect, url := range dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := openAt(t, url, 31)
			// Addresses as the build before stored them (its CheckWebhookURL's
			// output, which kept the hex case given), and what each must be
			// after the step.
			rows := []struct{ id, owner, kind, url, want string }{
				{"w1", "o1", "webhook", "https://a.example.com/a%2fb", "https://a.example.com/a%2Fb"},
				{"w2", "o1", "webhook", "https://b.example.com/%2e%2E/%c3%a9%20x?q=%2f&r=%e2%82%AC", "https://b.example.com/%2E%2E/%C3%A9%20x?q=%2F&r=%E2%82%AC"},
				{"w3", "o1", "webhook", "https://c.example.com/x?q=%zz%2%ab%a", "https://c.example.com/x?q=%zz%2%AB%a"},
				{"w4", "o1", "webhook", "https://d.example.com/a%2fb", "https://d.example.com/a%2fb"}, // w5 has the new form
				{"w5", "o1", "webhook", "https://d.example.com/a%2Fb", "https://d.example.com/a%2Fb"},
				{"w6", "o1", "webhook", "https://e.example.com/%3a%3A", "https://e.example.com/%3a%3A"}, // w7 would get it too
				{"w7", "o1", "webhook", "https://e.example.com/%3A%3a", "https://e.example.com/%3A%3a"},
				{"w8", "o2", "webhook", "https://d.example.com/a%2fb", "https://d.example.com/a%2Fb"}, // another owner's
				{"w9", "o1", "webhook", "https://f.example.com/abcdef", "https://f.example.com/abcdef"},
				{"c1", "o1", "slack", "https://hooks.slack.com/a%2fb", "https://hooks.slack.com/a%2fb"}, // a channel's label
			}
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
			// An old address given again is the same webhook, in its old
			// spelling as in another.
			store := NewWebhookStore(db)
			for _, spelling := range []string{"https://a.example.com/a%2fb", "https://a.example.com/a%2Fb", "https://b.example.com/%2E%2e/%C3%A9%20x?q=%2f&r=%e2%82%ac"} {
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
