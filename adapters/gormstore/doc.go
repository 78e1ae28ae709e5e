// Package gormstore keeps earshot's data in SQLite or Postgres through gorm.
//
// SQLite is the zero-set-up default: one file in WAL mode with a busy
// timeout, so `earshot admin` can write while `earshot serve` runs. Postgres
// is for several replicas. Both run the same versioned SQL migrations and
// pass the same contract suite (testkit/storetest).
//
// Times are stored as integer microseconds since 1970: exact on both
// databases, so a match's createdAt is a paging cursor that never skips or
// repeats a row.
package gormstore
