package main

import (
	"io"
	"testing"
)

// TestHelperFlagsOfTheContract: the operator contract names every
// setting's flag after its variable in kebab case, so --helper-server
// and --helper-key work beside the shorter --server.
func TestHelperFlagsOfTheContract(t *testing.T) {
	none := func(string) string { return "" }
	s, err := helperFlags([]string{"--helper-server", "https://earshot.example", "--helper-key", "svc_ingest_abc",
		"--helper-platforms", "x", "--helper-interval", "15m"}, none, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.server != "https://earshot.example" || s.key != "svc_ingest_abc" || len(s.platforms) != 1 || s.platforms[0] != "x" || s.interval.String() != "15m0s" {
		t.Fatalf("settings %+v", s)
	}
	s, err = helperFlags([]string{"--server", "https://other.example"}, func(k string) string {
		return map[string]string{"EARSHOT_HELPER_KEY": "svc_ingest_env"}[k]
	}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.server != "https://other.example" || s.key != "svc_ingest_env" {
		t.Fatalf("short flags and the variable: %+v", s)
	}
}
