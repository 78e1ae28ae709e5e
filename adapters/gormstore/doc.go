// Package gormstore keeps earshot's data in SQLite (the zero-set-up
// default: one file in WAL mode, so `earshot admin` can write while
// `earshot serve` runs) or Postgres (for several replicas), through
// gorm. Both run the frozen SQL migrations of their dialect
// (migrations/, migrate.go) and pass testkit/storetest.
//
// Each table's rows, reads and writes are in one file:
//
//	owners, email_changes             owner.go
//	api_keys                          key.go
//	phrases, idempotency_keys         phrase.go (a phrase's filters: phrasefilters.go)
//	posts, matches                    match.go (scores: score.go; alerts: alert.go)
//	match_triage                      triage.go
//	match_search, match_search_owners search.go
//	match_day_counts                  trends.go
//	webhooks, webhook_deliveries      webhook.go (channels and their digests: channel.go)
//	accounts                          account.go
//	notifications                     notification.go
//	dashboard_sessions, login_links   session.go
//	reddit_checkpoints                reddit.go
//	leases                            lease.go
//	rate_windows                      ratelimit.go
//	recent_posts, recent_words,       recent.go
//	recent_index, recent_backfills
//	filter_archives,                  filterarchive.go
//	filter_archive_matches
//
// db.go opens the database and holds the helpers every file shares.
// Times are integer microseconds since 1970, exact on both databases, so
// a match's createdAt is a paging cursor that never skips or repeats a
// row.
package gormstore
