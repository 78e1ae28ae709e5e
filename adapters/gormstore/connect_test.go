package gormstore

import (
	"net/url"
	"strings"
	"testing"
)

// A URL the driver cannot parse is shown as the operator wrote it
// (password masked): not with the parameters Open adds.
func TestOpenShowsTheURLAsWritten(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"postgres://u:pw-secret@127.0.0.1/db?sslmode=bogus",
		"postgresql://u:pw-secret@127.0.0.1/db?connect_timeout=soon",
		"postgres://u:pw-secret@127.0.0.1/db?plan_cache_mode=auto&sslmode=bogus",
	} {
		_, err := Open(raw)
		if err == nil {
			t.Fatalf("%s: Open succeeded", raw)
		}
		u, _ := url.Parse(raw)
		u.User = url.UserPassword("u", "xxxxx")
		if msg := err.Error(); !strings.Contains(msg, "`"+u.String()+"`") || strings.Contains(msg, "pw-secret") {
			t.Errorf("%s: %v, want the URL as written, password masked", raw, msg)
		}
	}
}
