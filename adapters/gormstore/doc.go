// Package gormstore keeps earshot's data in SQLite (the zero-set-up
// default: one file in WAL mode, so `earshot admin` can write while
// `earshot serve` runs) or Postgres (for several replicas), through
// gorm. Both run the frozen SQL migrations of their dialect
// (migrations/, migrate.go) and pass testkit/storetest.
//
// Each table's rows, reads and writes are in one file named for the
// table or what it serves (api_keys in key.go, email_changes in
// owner.go); a match's score, flags, alerts, text index and day counts
// have files of their own. db.go opens the database and holds the
// helpers every file shares. Times are integer microseconds since 1970,
// exact on both databases, so a match's createdAt is a paging cursor
// that never skips or repeats a row.
package gormstore
