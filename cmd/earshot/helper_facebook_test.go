package main

import (
	"io"
	"slices"
	"testing"
)

func TestHelperPlatformsAcceptFacebook(t *testing.T) {
	env := map[string]string{
		"EARSHOT_HELPER_SERVER":       "https://earshot.example",
		"EARSHOT_HELPER_KEY":          "svc_ingest_test",
		"EARSHOT_HELPER_PLATFORMS":    "facebook",
		"EARSHOT_HELPER_FACEBOOK_URL": "http://127.0.0.1:9",
		"EARSHOT_HELPER_STATE":        t.TempDir() + "/state.json",
	}
	s, err := helperFlags(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatalf("facebook refused: %v", err)
	}
	if !slices.Equal(s.platforms, []string{"facebook"}) || s.facebookURL != "http://127.0.0.1:9" {
		t.Errorf("platforms %v, facebook at %q", s.platforms, s.facebookURL)
	}
}
