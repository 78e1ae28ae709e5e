// Package gormstore keeps earshot's data in SQLite (the zero-set-up
// default: one file in WAL mode, so `earshot admin` can write while
// `earshot serve` runs) or Postgres (for several replicas), through one
// gorm handle. Both run the frozen SQL migrations of their dialect
// (migrations/, migrate.go) and pass testkit/storetest.
//
// Each table's rows, reads and writes are in one file: owner.go (owners,
// email_changes), key.go (api_keys), phrase.go (phrases,
// idempotency_keys), match.go (posts, matches; the scorer's side in
// score.go, the owner's flags in triage.go, the alerts' in alert.go),
// webhook.go (webhooks, webhook_deliveries), account.go, notification.go,
// session.go (dashboard_sessions, login_links), reddit.go, lease.go,
// ratelimit.go (rate_windows), phrasefilters.go (a phrase's filters
// column), search.go (match_search, the matches' text index),
// trends.go (match_day_counts), channel.go (the channel columns of
// webhooks). db.go opens the database and holds the
// helpers every file shares. Times are integer microseconds since 1970,
// exact on both databases, so a match's createdAt is a paging cursor
// that never skips or repeats a row.
package gormstore
