package gormstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// The schema's steps are SQL files per dialect, numbered from 1 and run
// once each; a shipped one is never edited. The first line names the
// step (in schema_migrations); the comment lines under it say why.
//
//go:embed migrations
var migrationFiles embed.FS

type step struct {
	version   int
	name, sql string // sql: the statements, run as one Exec; none in a step for the other dialect
}

var steps = map[bool][]step{false: mustSteps("sqlite"), true: mustSteps("postgres")}

func mustSteps(dialect string) []step {
	s, err := loadSteps(migrationFiles, dialect)
	if err != nil {
		panic(err) // the files are part of the build; TestMigrationFiles reads them
	}
	return s
}

// loadSteps reads migrations/<dialect>/NNNN_name.sql in version order.
func loadSteps(fsys fs.FS, dialect string) ([]step, error) {
	files, err := fs.Glob(fsys, path.Join("migrations", dialect, "*.sql"))
	if err != nil {
		return nil, err
	}
	var out []step
	for _, f := range files {
		num, _, _ := strings.Cut(path.Base(f), "_")
		if v, err := strconv.Atoi(num); err != nil || v != len(out)+1 {
			return nil, fmt.Errorf("%s: want migration %d", f, len(out)+1)
		}
		text, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		lines := strings.SplitAfter(string(text), "\n")
		if !strings.HasPrefix(lines[0], "-- ") {
			return nil, fmt.Errorf("%s: the first line names the step, as a comment", f)
		}
		name := strings.TrimSpace(lines[0][3:])
		for len(lines) > 0 && (strings.HasPrefix(lines[0], "--") || strings.TrimSpace(lines[0]) == "") {
			lines = lines[1:]
		}
		out = append(out, step{version: len(out) + 1, name: name, sql: strings.Join(lines, "")})
	}
	return out, nil
}

// Latest is the schema version this build expects.
func Latest() int { return len(steps[false]) }

// Migrate brings the schema to the latest version: every pending step in
// one transaction under a lock (advisory on Postgres, the write lock on
// SQLite), so processes starting together apply each step once.
func (db *DB) Migrate(ctx context.Context) error { return db.migrate(ctx, Latest()) }

// migrate brings the schema to version to, never past the latest.
func (db *DB) migrate(ctx context.Context, to int) error {
	return db.plain.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if db.postgres { // the key is arbitrary but fixed: every earshot process agrees
			if err := tx.Exec("SELECT pg_advisory_xact_lock(8442201)").Error; err != nil {
				return err
			}
		}
		err := tx.Exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)").Error
		if err != nil {
			return err
		}
		current, err := version(tx)
		if err != nil {
			return err
		}
		if current > Latest() {
			return fmt.Errorf("database schema is version %d, newer than this build (%d): upgrade earshot", current, Latest())
		}
		for _, s := range steps[db.postgres] {
			if s.version <= current || s.version > to {
				continue
			}
			if s.sql != "" {
				if err := tx.Exec(s.sql).Error; err != nil {
					return fmt.Errorf("migration %d (%s): %w", s.version, s.name, err)
				}
			}
			if err := tx.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
				s.version, s.name, tx.NowFunc().UnixMicro()).Error; err != nil {
				return err
			}
		}
		return nil
	})
}

func version(tx *gorm.DB) (int, error) {
	var v int
	err := tx.Raw("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&v).Error
	return v, err
}

// Version returns the schema version the database is at (0 when new).
func (db *DB) Version(ctx context.Context) (int, error) {
	if !db.gorm.Migrator().HasTable("schema_migrations") {
		return 0, nil
	}
	return version(db.with(ctx))
}
