package gormstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A database made at schema 18 (packed matches and scores, keys packed by
// triggers on SQLite), upgraded in place, answers the stores and the
// HTTP API as it did before the upgrade. testdata/upgrade holds, per
// dialect, the rows of such a database as the build before the upgrade
// made them, the schema it had and what it answered (see its README).
func TestUpgradeFromPackedRows(t *testing.T) {
	for dialect, url := range dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			var want upgradeGolden
			readJSON(t, filepath.Join("testdata", "upgrade", dialect+".json"), &want)
			rows, err := os.ReadFile(filepath.Join("testdata", "upgrade", dialect+".sql"))
			if err != nil {
				t.Fatal(err)
			}
			db := openAt(t, url, 18)
			if got := upgradeSchema(t, db); !reflect.DeepEqual(got, want.Schema) {
				t.Fatalf("the frozen migrations 1 to 18 make\n%s\nthe build before made\n%s", strings.Join(got, "\n"), strings.Join(want.Schema, "\n"))
			}
			if err := db.plain.Exec(string(rows)).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			for _, gone := range []string{"matches.packed", "matches.packed_score", "api_keys.packed"} {
				table, col, _ := strings.Cut(gone, ".")
				if db.gorm.Migrator().HasColumn(table, col) {
					t.Errorf("%s is still there", gone)
				}
			}
			if !db.postgres {
				var n int64
				// Only the packed keys' triggers were on api_keys; later steps add others.
				db.gorm.Raw("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'api_keys'").Scan(&n)
				if n != 0 {
					t.Errorf("%d triggers of packed keys left on SQLite", n)
				}
			}
			got := upgradeAnswers(t, db, want.IDs)
			for name, w := range want.Answers {
				var a, b any
				_ = json.Unmarshal(w, &a)
				_ = json.Unmarshal(got[name], &b)
				if !reflect.DeepEqual(emptyIsNull(a), emptyIsNull(knownOnly(b, a))) {
					t.Errorf("%s after the upgrade:\n%s\nbefore:\n%s", name, got[name], w)
				}
			}
			if len(got) != len(want.Answers) {
				t.Errorf("%d answers, %d recorded", len(got), len(want.Answers))
			}
		})
	}
}

// knownOnly drops from got the object members want lacks: a field a
// later build adds to a record is not a change of what the database held.
func knownOnly(got, want any) any {
	switch g := got.(type) {
	case []any:
		w, _ := want.([]any)
		for i := range g {
			if i < len(w) {
				g[i] = knownOnly(g[i], w[i])
			}
		}
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			return got
		}
		for k := range g {
			if _, known := w[k]; !known {
				delete(g, k)
			} else {
				g[k] = knownOnly(g[k], w[k])
			}
		}
	}
	return got
}

// emptyIsNull reads an empty list as null: a store may answer either
// for nothing.
func emptyIsNull(v any) any {
	switch v := v.(type) {
	case []any:
		if len(v) == 0 {
			return nil
		}
		for i := range v {
			v[i] = emptyIsNull(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = emptyIsNull(v[k])
		}
	}
	return v
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// upgradeGolden is a dialect's file of testdata/upgrade: the ids the
// reads name, the schema at 18 and the answers.
type upgradeGolden struct {
	IDs     map[string]string
	Schema  []string
	Answers map[string]json.RawMessage
}

// upgradeSchema describes the schema: every object and its definition,
// the test schema's name taken out on Postgres.
func upgradeSchema(t testing.TB, db *DB) []string {
	t.Helper()
	qs := []string{"SELECT type || ' ' || name || ' ' || tbl_name || ': ' || COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name"}
	if db.Postgres() {
		qs = []string{
			`SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || COALESCE(column_default, '')
				FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`,
			"SELECT 'index ' || indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname",
			`SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ': ' || pg_get_constraintdef(oid)
				FROM pg_constraint WHERE connamespace = current_schema()::regnamespace ORDER BY 1`,
			`SELECT 'trigger ' || tgname || ': ' || pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal
				AND tgrelid IN (SELECT oid FROM pg_class WHERE relnamespace = current_schema()::regnamespace) ORDER BY 1`,
			"SELECT 'function ' || proname || ': ' || prosrc FROM pg_proc WHERE pronamespace = current_schema()::regnamespace ORDER BY 1",
			"SELECT 'table ' || relname || ' ' || relpersistence::text FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r' ORDER BY 1",
		}
	}
	var schema string
	if db.Postgres() {
		if err := db.SQL().QueryRow("SELECT current_schema()").Scan(&schema); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for _, q := range qs {
		rows, err := db.SQL().Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			if schema != "" {
				s = strings.ReplaceAll(s, schema, "SCHEMA")
			}
			if !strings.Contains(s, "schema_migrations") {
				out = append(out, s)
			}
		}
		rows.Close()
	}
	return out
}

// upgradeAnswers reads everything the fixture holds through the stores
// and the HTTP API, as JSON by name.
func upgradeAnswers(t testing.TB, db *DB, ids map[string]string) map[string]json.RawMessage {
	t.Helper()
	ctx := context.Background()
	out := map[string]json.RawMessage{}
	put := func(name string, v any, err error) {
		if err != nil {
			v = "error: " + err.Error()
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	owners, keys, phrases := NewOwnerStore(db), NewKeyStore(db), NewPhraseStore(db)
	ms, triage, hooks := NewMatchStore(db), NewTriageStore(db), NewWebhookStore(db)
	a, b := ids["ownerA"], ids["ownerB"]
	for _, o := range []string{a, b} {
		v, err := owners.Owner(ctx, o)
		put("owner "+o, v, err)
		ks, err := keys.Keys(ctx, o, core.APIKey)
		put("api keys "+o, ks, err)
		ks, err = keys.Keys(ctx, o, core.IngestKey)
		put("ingest keys "+o, ks, err)
		ps, err := phrases.Phrases(ctx, o, ports.PhraseFilter{})
		put("phrases "+o, ps, err)
		u, err := phrases.Usage(ctx, o)
		put("usage "+o, u, err)
		all, more, err := ms.Matches(ctx, o, ports.MatchFilter{MinScore: -1, Limit: 100})
		put("matches "+o, []any{all, more}, err)
		hs, err := hooks.Webhooks(ctx, o)
		put("webhooks "+o, hs, err)
		for _, h := range hs {
			w, secret, err := hooks.Webhook(ctx, o, h.ID)
			put("webhook "+h.ID, []any{w, secret}, err)
			ds, err := hooks.Deliveries(ctx, o, h.ID, 100)
			put("deliveries "+h.ID, ds, err)
		}
		acc, sealed, err := NewAccountStore(db).Session(ctx, o, core.X)
		put("account x "+o, []any{acc, sealed}, err)
		health, err := NewAccountHealthStore(db).AccountHealth(ctx, o)
		put("account health "+o, health, err)
		ns, unread, err := NewNotificationStore(db).Notifications(ctx, o, 100)
		put("notifications "+o, []any{ns, unread}, err)
		alerts, err := NewAlertStore(db).PendingAlerts(ctx, o, 0, 100)
		put("pending alerts "+o, alerts, err)
	}
	list, err := owners.Owners(ctx)
	put("owners", list, err)
	for _, name := range []string{"apiKeyHash", "ingestKeyHash", "revokedKeyHash"} {
		k, err := keys.KeyByHash(ctx, ids[name])
		put("key by hash "+name, k, err)
	}
	sess, err := NewSessionStore(db).Session(ctx, ids["sessionHash"])
	put("dashboard session", sess, err)
	byEmail, err := NewSessionStore(db).OwnerByEmail(ctx, "owner.a@example.com")
	put("owner by email", byEmail, err)
	min50, hundred := 50, 100
	pages := map[string]ports.MatchFilter{
		"page 3":          {MinScore: -1, Limit: 3},
		"page reddit":     {Platform: core.Reddit, MinScore: -1, Limit: 100},
		"page scored 50+": {MinScore: min50, Limit: 100},
		"page scored 0+":  {MinScore: 0, Limit: 100},
		"page empty":      {Platform: core.Platform("facebook"), MinScore: hundred, Limit: 5},
	}
	for name, f := range pages {
		m, more, err := ms.Matches(ctx, a, f)
		put(name, []any{m, more}, err)
		if len(m) > 0 {
			f.Before = m[len(m)-1].CreatedAt
			m, more, err = ms.Matches(ctx, a, f)
			put(name+" next", []any{m, more}, err)
		}
	}
	all, _, _ := ms.Matches(ctx, a, ports.MatchFilter{MinScore: -1, Limit: 100})
	for _, m := range all {
		one, err := ms.Match(ctx, a, m.ID)
		put("match "+m.ID, one, err)
		tr, err := triage.Triage(ctx, a, m.ID)
		put("triage "+m.ID, tr, err)
	}
	yes, no := true, false
	inbox := map[string]ports.InboxFilter{
		"inbox":          {MinScore: -1, Archived: &no, Limit: 100},
		"inbox all":      {MinScore: -1, Limit: 100},
		"inbox unread":   {MinScore: -1, Read: &no, Limit: 100},
		"inbox read":     {MinScore: -1, Read: &yes, Limit: 100},
		"inbox starred":  {MinScore: -1, Starred: &yes, Limit: 100},
		"inbox archived": {MinScore: -1, Archived: &yes, Limit: 100},
		"inbox question": {MinScore: 0, Intent: core.IntentQuestion, Limit: 100},
		"inbox reddit 2": {Platform: core.Reddit, MinScore: -1, Limit: 2},
		"inbox scored":   {MinScore: -1, ScoredAfter: time.UnixMicro(1), Limit: 100},
	}
	for name, f := range inbox {
		items, more, err := triage.Inbox(ctx, a, f)
		if !f.ScoredAfter.IsZero() {
			// Matches scored together come in no set order (the plan
			// decides): the newest first, as recorded.
			slices.SortStableFunc(items, func(x, y ports.InboxItem) int {
				if c := y.ScoredAt.Compare(x.ScoredAt); c != 0 {
					return c
				}
				return y.Match.CreatedAt.Compare(x.Match.CreatedAt)
			})
		}
		put(name, []any{items, more}, err)
	}

	// The HTTP API with the owner's key, as a client reads it.
	limits := core.Limits{PhrasesPerPlatform: 10, AccountsPerPlatform: 1, WebhooksPerPerson: 5}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	api := httptest.NewServer(httpapi.New(httpapi.Config{RateLimit: 1 << 30, Logger: quiet}, httpapi.Deps{
		Keys:     app.NewKeys(keys, owners, ports.SystemClock{}),
		Phrases:  app.NewPhrases(phrases, limits, ports.SystemClock{}),
		Matches:  app.NewMatches(ms),
		Limiter:  ratelimit.NewMemory(nil),
		Webhooks: app.NewWebhooks(app.WebhookDeps{Store: hooks, Clock: ports.SystemClock{}, Log: quiet}, app.WebhookConfig{Limits: limits}),
		Triage:   app.NewInbox(triage),
	}))
	defer api.Close()
	get := func(path string) {
		req, _ := http.NewRequest("GET", api.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+ids["apiKey"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var v any
		if json.Unmarshal(body, &v) != nil {
			v = string(body)
		}
		put("GET "+path, []any{resp.StatusCode, v}, nil)
	}
	for _, p := range []string{"/api/v1/me", "/api/v1/keywords", "/api/v1/matches", "/api/v1/matches?limit=2",
		"/api/v1/matches?platform=reddit", "/api/v1/matches?minScore=50", "/api/v1/webhooks"} {
		get(p)
	}
	var first struct{ Next *float64 }
	if raw, ok := out["GET /api/v1/matches?limit=2"]; ok {
		var pair []json.RawMessage
		if json.Unmarshal(raw, &pair) == nil && len(pair) == 2 {
			_ = json.Unmarshal(pair[1], &first)
		}
	}
	if first.Next != nil {
		get(fmt.Sprintf("/api/v1/matches?limit=2&before=%v", *first.Next))
	}
	for _, m := range all {
		get("/api/v1/matches/" + m.ID)
		get("/api/v1/matches/" + m.ID + "/triage")
	}
	hs, _ := hooks.Webhooks(ctx, a)
	for _, h := range hs {
		get("/api/v1/webhooks/" + h.ID + "/deliveries")
	}
	return out
}
