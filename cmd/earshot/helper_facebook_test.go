package main

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper/browser"
	"github.com/earshothq/earshot/helper/facebook"
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

// EARSHOT_HELPER_FACEBOOK_GROUPS caps the joined groups searched (10 by
// default), 0 turns group reading off; EARSHOT_HELPER_FACEBOOK_PACE goes
// under facebook's 30 s only against a mirror or a test server.
func TestHelperFacebookGroupsAndPace(t *testing.T) {
	env := map[string]string{
		"EARSHOT_HELPER_SERVER": "https://earshot.example",
		"EARSHOT_HELPER_KEY":    "svc_ingest_test",
		"EARSHOT_HELPER_STATE":  t.TempDir() + "/state.json",
	}
	get := func(k string) string { return env[k] }
	reader := func() *facebook.Reader {
		t.Helper()
		s, err := helperFlags(nil, get, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for _, rd := range helperReaders(s, &browser.Shared{}, nil) {
			if fb, ok := rd.(*facebook.Reader); ok {
				return fb
			}
		}
		t.Fatal("no facebook reader")
		return nil
	}
	if fb := reader(); fb.Groups != facebook.DefaultGroups || fb.Pace != facebook.DefaultPace {
		t.Errorf("defaults: %d groups, pace %s", fb.Groups, fb.Pace)
	}
	env["EARSHOT_HELPER_FACEBOOK_GROUPS"] = "0"
	if fb := reader(); fb.Groups >= 0 {
		t.Errorf("0 groups reads %d", fb.Groups)
	}
	env["EARSHOT_HELPER_FACEBOOK_GROUPS"], env["EARSHOT_HELPER_FACEBOOK_PACE"], env["EARSHOT_HELPER_FACEBOOK_URL"] = "3", "50ms", "http://127.0.0.1:9"
	if fb := reader(); fb.Groups != 3 || fb.Pace != 50*time.Millisecond {
		t.Errorf("%d groups, pace %s", fb.Groups, fb.Pace)
	}
	for _, bad := range []map[string]string{
		{"EARSHOT_HELPER_FACEBOOK_GROUPS": "-1"}, {"EARSHOT_HELPER_FACEBOOK_GROUPS": "101"},
		{"EARSHOT_HELPER_FACEBOOK_PACE": "1s", "EARSHOT_HELPER_FACEBOOK_URL": ""},
	} {
		saved := map[string]string{}
		for k, v := range bad {
			saved[k], env[k] = env[k], v
		}
		if _, err := helperFlags(nil, get, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
		for k, v := range saved {
			env[k] = v
		}
	}
}
