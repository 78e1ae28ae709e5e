package gormstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"
)

// migration is one step of the schema. Steps are only ever appended; a
// step that has run never changes. The SQL is written once for both
// databases; {{bytes}} stands for the binary column type, which differs.
type migration struct {
	version int
	name    string
	sql     string
}

var migrations = []migration{
	{1, "owners, keys, phrases, posts, matches", `
CREATE TABLE owners (
	id            TEXT PRIMARY KEY,
	email         TEXT NOT NULL UNIQUE,
	name          TEXT NOT NULL DEFAULT '',
	last_match_us BIGINT NOT NULL DEFAULT 0,
	created_at    BIGINT NOT NULL
);
CREATE TABLE api_keys (
	id         TEXT PRIMARY KEY,
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	kind       TEXT NOT NULL,
	name       TEXT NOT NULL DEFAULT '',
	hash       TEXT NOT NULL UNIQUE,
	scopes     TEXT NOT NULL DEFAULT '',
	created_at BIGINT NOT NULL,
	revoked_at BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX api_keys_owner ON api_keys(owner_id, kind);
CREATE TABLE phrases (
	id              TEXT PRIMARY KEY,
	owner_id        TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	phrase          TEXT NOT NULL,
	fold            TEXT NOT NULL,
	platform        TEXT NOT NULL,
	community       TEXT NOT NULL DEFAULT '',
	status          TEXT NOT NULL,
	matches         BIGINT NOT NULL DEFAULT 0,
	last_checked_at BIGINT NOT NULL,
	last_source     TEXT NOT NULL,
	created_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX phrases_unique ON phrases(owner_id, platform, community, fold);
CREATE INDEX phrases_listening ON phrases(platform, status, community);
CREATE TABLE idempotency_keys (
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	key        TEXT NOT NULL,
	phrase_id  TEXT NOT NULL REFERENCES phrases(id) ON DELETE CASCADE,
	created_at BIGINT NOT NULL,
	PRIMARY KEY (owner_id, key)
);
CREATE TABLE posts (
	owner_id    TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	platform    TEXT NOT NULL,
	external_id TEXT NOT NULL,
	created_at  BIGINT NOT NULL,
	PRIMARY KEY (owner_id, platform, external_id)
);
CREATE TABLE matches (
	id          TEXT PRIMARY KEY,
	owner_id    TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	phrase_id   TEXT NOT NULL REFERENCES phrases(id) ON DELETE CASCADE,
	phrase      TEXT NOT NULL,
	platform    TEXT NOT NULL,
	created_us  BIGINT NOT NULL,
	score       INTEGER,
	intent      TEXT,
	reason      TEXT,
	scored_at   BIGINT NOT NULL DEFAULT 0,
	external_id TEXT NOT NULL,
	author      TEXT NOT NULL DEFAULT '',
	title       TEXT,
	body        TEXT NOT NULL DEFAULT '',
	url         TEXT NOT NULL DEFAULT '',
	likes       BIGINT NOT NULL DEFAULT 0,
	comments    BIGINT NOT NULL DEFAULT 0,
	posted_at   BIGINT NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX matches_owner_created ON matches(owner_id, created_us);
CREATE INDEX matches_owner_platform_created ON matches(owner_id, platform, created_us);
CREATE UNIQUE INDEX matches_post ON matches(owner_id, phrase_id, platform, external_id);
CREATE INDEX matches_phrase ON matches(phrase_id);
CREATE TABLE accounts (
	id         TEXT PRIMARY KEY,
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	platform   TEXT NOT NULL,
	label      TEXT NOT NULL DEFAULT '',
	session    {{bytes}},
	created_at BIGINT NOT NULL
);
CREATE INDEX accounts_owner ON accounts(owner_id, platform);
`},
	{2, "phrase versions, scoring leases", `
ALTER TABLE owners ADD COLUMN phrase_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE matches ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
CREATE INDEX matches_unscored ON matches(created_us) WHERE score IS NULL;
CREATE UNIQUE INDEX accounts_owner_platform_id ON accounts(owner_id, platform, id);
`},
	{3, "webhooks, deliveries", `
CREATE TABLE webhooks (
	id                   TEXT PRIMARY KEY,
	owner_id             TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	url                  TEXT NOT NULL,
	min_score            INTEGER NOT NULL,
	platforms            TEXT NOT NULL DEFAULT '',
	active               BOOLEAN NOT NULL,
	disabled_reason      TEXT NOT NULL DEFAULT '',
	consecutive_failures INTEGER NOT NULL DEFAULT 0,
	secret               {{bytes}} NOT NULL,
	created_at           BIGINT NOT NULL
);
CREATE UNIQUE INDEX webhooks_owner_url ON webhooks(owner_id, url);
CREATE TABLE webhook_deliveries (
	id              TEXT PRIMARY KEY,
	webhook_id      TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
	owner_id        TEXT NOT NULL,
	match_id        TEXT NOT NULL DEFAULT '',
	event           TEXT NOT NULL,
	trigger_kind    TEXT NOT NULL,
	status          TEXT NOT NULL,
	tries           INTEGER NOT NULL DEFAULT 0,
	response_status INTEGER NOT NULL DEFAULT 0,
	last_error      TEXT NOT NULL DEFAULT '',
	payload         {{bytes}},
	created_at      BIGINT NOT NULL,
	last_attempt_at BIGINT NOT NULL DEFAULT 0,
	next_attempt_at BIGINT NOT NULL DEFAULT 0,
	lease_until     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX webhook_deliveries_log ON webhook_deliveries(webhook_id, created_at);
CREATE INDEX webhook_deliveries_status ON webhook_deliveries(webhook_id, status);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE status = 'queued';
`},
	{4, "leases, email alerts", `
CREATE TABLE leases (
	name   TEXT PRIMARY KEY,
	holder TEXT NOT NULL,
	until  BIGINT NOT NULL
);
ALTER TABLE matches ADD COLUMN emailed_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX matches_alerts ON matches(owner_id, score) WHERE emailed_at = 0 AND score IS NOT NULL;
`},
	{5, "shared rate limit windows", `
CREATE TABLE rate_windows (
	key     TEXT PRIMARY KEY,
	started BIGINT NOT NULL,
	count   BIGINT NOT NULL
);
`},
	// Every API request updates its window, and a durable commit each
	// time made Postgres wait for a WAL flush per request. The counts
	// only matter for a minute: losing them in a crash is harmless.
	{6, "rate limit windows kept out of the write-ahead log", `
DROP TABLE rate_windows;
CREATE {{unlogged}} TABLE rate_windows (
	key     TEXT PRIMARY KEY,
	started BIGINT NOT NULL,
	count   BIGINT NOT NULL
);
`},
	{7, "reddit checkpoints and source health", redditCheckpointsSQL},
	{8, "account health, notifications", healthSQL},
	{9, "when each key was last used", `
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT NOT NULL DEFAULT 0;
`},
	{10, "dashboard sign-in links, sessions, triage", `
CREATE TABLE login_links (
	hash       TEXT PRIMARY KEY,
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	used_at    BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX login_links_owner ON login_links(owner_id, expires_at);
CREATE TABLE dashboard_sessions (
	id           TEXT PRIMARY KEY,
	hash         TEXT NOT NULL UNIQUE,
	owner_id     TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	created_at   BIGINT NOT NULL,
	last_seen_at BIGINT NOT NULL
);
CREATE INDEX dashboard_sessions_owner ON dashboard_sessions(owner_id);
CREATE INDEX dashboard_sessions_seen ON dashboard_sessions(last_seen_at);
CREATE TABLE match_triage (
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	match_id   TEXT NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
	created_us BIGINT NOT NULL,
	is_read    INTEGER NOT NULL DEFAULT 0,
	starred    INTEGER NOT NULL DEFAULT 0,
	archived   INTEGER NOT NULL DEFAULT 0,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (owner_id, match_id)
);
CREATE INDEX match_triage_match ON match_triage(match_id);
CREATE INDEX match_triage_created ON match_triage(owner_id, created_us);
CREATE INDEX match_triage_read ON match_triage(owner_id, is_read, created_us);
CREATE INDEX match_triage_starred ON match_triage(owner_id, starred, created_us);
CREATE INDEX match_triage_archived ON match_triage(owner_id, archived, created_us);
CREATE INDEX matches_owner_scored ON matches(owner_id, scored_at);
`},
	// SQLite reads a match as one packed text value; the columns a match
	// never changes are packed once, when it is stored (see packedRead).
	// Postgres packs them too, in the insert's SQL, and reads a page of
	// the API through them (packedColumnsPostgres; migration 15 packs the
	// rows stored before).
	// A claim reads the due deliveries in (next_attempt_at, id) order.
	// On an index of next_attempt_at alone Postgres sorted them and
	// chose a bitmap scan, which visits the heap for every entry the
	// partial index still holds for deliveries no longer queued (tens of
	// thousands between two autovacuum runs at 1,000 deliveries a
	// second: 15 ms a claim). In the claim's own order it walks the index
	// and stops at the limit, marking dead entries as it passes so the
	// next claim skips them.
	{12, "deliveries due in claim order", `
DROP INDEX webhook_deliveries_due;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, id) WHERE status = 'queued'
`},
	// Postgres announces every change to a key but its last use on
	// keysChannel when the change commits, so that each process can keep
	// keys in memory (keycache.go). The trigger sees every writer: this
	// process, another replica, the admin console, an owner's deletion.
	{13, "key changes announced on Postgres", `
{{postgres}}CREATE FUNCTION earshot_key_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('` + keysChannel + `', OLD.hash){{semicolon}}
	RETURN NULL{{semicolon}}
END $$;
{{postgres}}CREATE TRIGGER api_keys_changed
	AFTER UPDATE OF id, owner_id, kind, name, hash, scopes, created_at, revoked_at OR DELETE ON api_keys
	FOR EACH ROW EXECUTE FUNCTION earshot_key_changed()
`},
	// A rate window keeps the limit it is counted against (lim), and
	// Postgres announces a window on windowsChannel when its count
	// reaches it, so that each process knows which windows are used up
	// without reading them on every request (listen.go). Old rows count
	// against no limit (0) and are never announced; they end within a
	// minute.
	{14, "used-up rate windows announced on Postgres", `
ALTER TABLE rate_windows ADD COLUMN lim BIGINT NOT NULL DEFAULT 0;
{{postgres}}CREATE FUNCTION earshot_window_used() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('` + windowsChannel + `', NEW.started || ' ' || NEW.key){{semicolon}}
	RETURN NULL{{semicolon}}
END $$;
{{postgres}}CREATE TRIGGER rate_windows_used_new AFTER INSERT ON rate_windows
	FOR EACH ROW WHEN (NEW.lim > 0 AND NEW.count >= NEW.lim) EXECUTE FUNCTION earshot_window_used();
{{postgres}}CREATE TRIGGER rate_windows_used AFTER UPDATE ON rate_windows
	FOR EACH ROW WHEN (NEW.lim > 0 AND NEW.count >= NEW.lim AND (OLD.count < NEW.lim OR OLD.started <> NEW.started))
	EXECUTE FUNCTION earshot_window_used()
`},
	{11, "matches packed for reading on SQLite", `
ALTER TABLE matches ADD COLUMN packed TEXT;
{{sqlite}}UPDATE matches SET packed = {{packedFixed}}
`},
	// Postgres read a row without its packed column (stored before its
	// insert wrote one) by packing it on the fly; the page now relies on
	// the column (see packedColumnsPostgres). A replica of a build that
	// does not write it fails to store matches from here on, loudly,
	// rather than storing rows the pages cannot read.
	{15, "every match packed on Postgres", `
{{postgres}}UPDATE matches SET packed = {{packedFixed}} WHERE packed IS NULL;
{{postgres}}ALTER TABLE matches ALTER COLUMN packed SET NOT NULL
`},
	// A score is packed when it is stored (see packScore), not on every
	// read. On Postgres a replica of a build that does not write it fails
	// to store scores from here on (the check), rather than leaving
	// scored matches that read as unscored; the sweep scores them again.
	{16, "scores packed for reading", `
ALTER TABLE matches ADD COLUMN packed_score TEXT NOT NULL DEFAULT '---';
UPDATE matches SET packed_score = {{packedScore}} WHERE score IS NOT NULL;
{{postgres}}ALTER TABLE matches ADD CONSTRAINT matches_packed_score CHECK ((score IS NULL) = (packed_score = '---'))
`},
	// Every API request reads its key; on SQLite the key is read as one
	// packed value (see packedKey), and packing its nine columns on every
	// read cost as much as the rest of the lookup. SQLite keeps it packed
	// itself, whichever process writes the key (the admin console is
	// another process). Postgres keeps keys in memory instead.
	{17, "keys packed for reading on SQLite", `
{{sqlite}}ALTER TABLE api_keys ADD COLUMN packed TEXT;
{{sqlite}}UPDATE api_keys SET packed = {{packedKey}};
{{sqlite}}CREATE TRIGGER api_keys_packed_new AFTER INSERT ON api_keys BEGIN
	UPDATE api_keys SET packed = {{packedNewKey}} WHERE id = NEW.id{{semicolon}}
END;
{{sqlite}}CREATE TRIGGER api_keys_packed AFTER UPDATE OF ` + strings.Join(keyColumns, ", ") + ` ON api_keys BEGIN
	UPDATE api_keys SET packed = {{packedNewKey}} WHERE id = NEW.id{{semicolon}}
END
`},
	{18, "owners' pending changes of address", `
CREATE TABLE email_changes (
	hash       TEXT PRIMARY KEY,
	owner_id   TEXT NOT NULL REFERENCES owners(id) ON DELETE CASCADE,
	email      TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	used_at    BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX email_changes_owner ON email_changes(owner_id, expires_at)
`},
}

func init() {
	// Steps run in version order whatever order they are listed in.
	slices.SortFunc(migrations, func(a, b migration) int { return a.version - b.version })
}

// Latest is the schema version this build expects.
func Latest() int { return migrations[len(migrations)-1].version }

// Migrate brings the schema to the latest version. It runs every pending
// step in one transaction under a lock (an advisory lock on Postgres, the
// write lock on SQLite), so running it twice, or from two processes at
// once, applies each step exactly once.
func (db *DB) Migrate(ctx context.Context) error {
	return db.gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if db.postgres {
			// The key is arbitrary but fixed: every earshot process agrees.
			if err := tx.Exec("SELECT pg_advisory_xact_lock(8442201)").Error; err != nil {
				return err
			}
		}
		if err := tx.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT NOT NULL,
			applied_at BIGINT NOT NULL
		)`).Error; err != nil {
			return err
		}
		var current int
		if err := tx.Raw("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&current).Error; err != nil {
			return err
		}
		if current > Latest() {
			return fmt.Errorf("database schema is version %d, newer than this build (%d): upgrade earshot", current, Latest())
		}
		for _, m := range migrations {
			if m.version <= current {
				continue
			}
			for _, stmt := range splitSQL(db.render(m.sql)) {
				if err := tx.Exec(stmt).Error; err != nil {
					return fmt.Errorf("migration %d (%s): %w", m.version, m.name, err)
				}
			}
			if err := tx.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				m.version, m.name, tx.NowFunc().UnixMicro()).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

// Version returns the schema version the database is at (0 when new).
func (db *DB) Version(ctx context.Context) (int, error) {
	var v int
	err := db.gorm.WithContext(ctx).Raw("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v).Error
	if err != nil && !db.gorm.Migrator().HasTable("schema_migrations") {
		return 0, nil
	}
	return v, err
}

// render fills a migration's placeholders for db's dialect. A statement
// marked {{sqlite}} runs on SQLite only, one marked {{postgres}} on
// Postgres only.
func (db *DB) render(sql string) string {
	bytes, unlogged, other := "BLOB", "", "{{postgres}}"
	if db.postgres {
		bytes, unlogged, other = "BYTEA", "UNLOGGED", "{{sqlite}}"
	}
	var kept []string
	for _, stmt := range strings.Split(sql, ";") {
		if !strings.HasPrefix(strings.TrimSpace(stmt), other) {
			kept = append(kept, stmt)
		}
	}
	return strings.NewReplacer("{{bytes}}", bytes, "{{unlogged}}", unlogged, "{{sqlite}}", "", "{{postgres}}", "",
		"{{packedFixed}}", packedExprOf(db.postgres, "", fixedColumns),
		"{{packedScore}}", packedExprOf(db.postgres, "", scoredColumns),
		"{{packedKey}}", packedKey, "{{packedNewKey}}", packedExpr("NEW.", keyColumns)).Replace(strings.Join(kept, ";"))
}

// splitSQL splits a migration into statements. Migrations hold no
// semicolons inside literals, so a plain split is enough; a semicolon
// within a statement (a function's body) is written {{semicolon}}.
func splitSQL(sql string) []string {
	var out []string
	for _, s := range strings.Split(sql, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, strings.ReplaceAll(s, "{{semicolon}}", ";"))
		}
	}
	return out
}
