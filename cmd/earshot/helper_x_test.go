package main

import (
	"io"
	"slices"
	"testing"
)

func TestHelperPlatformsAcceptX(t *testing.T) {
	env := map[string]string{
		"EARSHOT_HELPER_SERVER":    "https://earshot.example",
		"EARSHOT_HELPER_KEY":       "svc_ingest_test",
		"EARSHOT_HELPER_PLATFORMS": "reddit, x",
		"EARSHOT_HELPER_STATE":     t.TempDir() + "/state.json",
	}
	s, err := helperFlags(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("reddit, x refused: %v", err)
	}
	if !slices.Equal(s.platforms, []string{"reddit", "x"}) || s.browserPath != "/usr/bin/chromium" {
		t.Errorf("platforms %v, browser %q", s.platforms, s.browserPath)
	}
	env["EARSHOT_HELPER_PLATFORMS"] = "myspace"
	if _, err := helperFlags(nil, func(k string) string { return env[k] }, io.Discard); err == nil {
		t.Errorf("myspace accepted by a helper that does not read it")
	}
}
