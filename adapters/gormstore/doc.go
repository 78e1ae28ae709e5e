// Package gormstore keeps earshot's data in SQLite or Postgres through gorm.
//
// SQLite is the zero-set-up default: one file in WAL mode with a busy
// timeout, so `earshot admin` can write while `earshot serve` runs. Postgres
// is for several replicas. Both run the SQL migrations of their dialect
// (migrations/, frozen once shipped) and pass the same contract suite
// (testkit/storetest).
//
// Each table's row type, reads and writes are in the file named for it
// (match.go, webhook.go, ...); every statement goes through one gorm
// handle (db.go), with SQL written out where a statement needs it.
//
// Times are stored as integer microseconds since 1970: exact on both
// databases, so a match's createdAt is a paging cursor that never skips or
// repeats a row.
package gormstore
