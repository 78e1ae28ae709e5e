package main

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper/browser"
	"github.com/earshothq/earshot/helper/x"
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

// EARSHOT_HELPER_X_PAGES caps the pages read per search (3 by default);
// EARSHOT_HELPER_X_PACE goes under x's 20 s only against a mirror or a
// test server; both reach the x reader.
func TestHelperXPagesAndPace(t *testing.T) {
	env := map[string]string{
		"EARSHOT_HELPER_SERVER": "https://earshot.example",
		"EARSHOT_HELPER_KEY":    "svc_ingest_test",
		"EARSHOT_HELPER_STATE":  t.TempDir() + "/state.json",
	}
	get := func(k string) string { return env[k] }
	s, err := helperFlags(nil, get, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.xPages != x.DefaultPages || s.xPace != x.DefaultPace {
		t.Errorf("defaults: %d pages, pace %s", s.xPages, s.xPace)
	}
	for _, bad := range []map[string]string{
		{"EARSHOT_HELPER_X_PAGES": "0"}, {"EARSHOT_HELPER_X_PAGES": "21"}, {"EARSHOT_HELPER_X_PAGES": "many"},
		{"EARSHOT_HELPER_X_PACE": "1s"}, {"EARSHOT_HELPER_X_PACE": "-1s"},
	} {
		for k, v := range bad {
			env[k] = v
		}
		if _, err := helperFlags(nil, get, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
		for k := range bad {
			delete(env, k)
		}
	}
	env["EARSHOT_HELPER_X_PAGES"], env["EARSHOT_HELPER_X_PACE"], env["EARSHOT_HELPER_X_URL"] = "5", "100ms", "http://127.0.0.1:9"
	if s, err = helperFlags(nil, get, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, rd := range helperReaders(s, &browser.Shared{}, nil) {
		if xr, ok := rd.(*x.Reader); ok && (xr.Pages != 5 || xr.Pace != 100*time.Millisecond) {
			t.Errorf("the x reader reads %d pages at a pace of %s", xr.Pages, xr.Pace)
		}
	}
}
