// Package pgtest gives each test its own Postgres schema on the database
// named by EARSHOT_TEST_POSTGRES_URL, so runs never see each other's rows.
package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Env is the variable that names the test database.
const Env = "EARSHOT_TEST_POSTGRES_URL"

var unsafeChars = regexp.MustCompile(`[^a-z0-9_]+`)

// URL returns the URL of a fresh schema, dropped when the test ends, or
// skips the test when EARSHOT_TEST_POSTGRES_URL is unset.
func URL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(Env)
	if base == "" {
		t.Skip(Env + " is unset: Postgres case skipped")
	}
	u, drop, err := Schema(base, t.Name())
	if err != nil {
		t.Fatalf("Postgres at %s: %v", Env, err)
	}
	t.Cleanup(drop)
	return u
}

// Schema creates a fresh schema on the database at base and returns a URL
// whose connections use it, with a function that drops it.
func Schema(base, name string) (string, func(), error) {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	schema := "t_" + unsafeChars.ReplaceAllString(strings.ToLower(name), "_")
	if len(schema) > 40 {
		schema = schema[:40]
	}
	schema += "_" + hex.EncodeToString(b)
	admin, err := gorm.Open(postgres.Open(base), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return "", nil, err
	}
	sqlDB, err := admin.DB()
	if err != nil {
		return "", nil, err
	}
	if err := admin.Exec("CREATE SCHEMA " + schema).Error; err != nil {
		sqlDB.Close()
		return "", nil, fmt.Errorf("create schema: %w", err)
	}
	u, err := url.Parse(base)
	if err != nil {
		sqlDB.Close()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop := func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		sqlDB.Close()
	}
	return u.String(), drop, nil
}
