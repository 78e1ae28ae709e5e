package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The key on the command line wins over a key file named in the
// environment, as every flag wins over its variable (docs/operating.md);
// a key file on the command line wins over the key in the environment;
// two keys on one command line are refused.
func TestHelperKeyFlagWinsOverTheVariables(t *testing.T) {
	file := filepath.Join(t.TempDir(), "helper.key")
	if err := os.WriteFile(file, []byte("svc_ingest_fromfile\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"flag key over variable file", []string{"--helper-key", "svc_ingest_fromflag"}, map[string]string{"EARSHOT_HELPER_KEY_FILE": file}, "svc_ingest_fromflag"},
		{"flag file over variable key", []string{"--key-file", file}, map[string]string{"EARSHOT_HELPER_KEY": "svc_ingest_fromenv"}, "svc_ingest_fromfile"},
		{"variable file over variable key", nil, map[string]string{"EARSHOT_HELPER_KEY": "svc_ingest_fromenv", "EARSHOT_HELPER_KEY_FILE": file}, "svc_ingest_fromfile"},
		{"variable key trimmed", nil, map[string]string{"EARSHOT_HELPER_KEY": " svc_ingest_fromenv\n"}, "svc_ingest_fromenv"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.env["EARSHOT_HELPER_SERVER"] = "http://127.0.0.1:1"
			s, err := helperFlags(c.args, func(k string) string { return c.env[k] }, io.Discard)
			if err != nil || s.key != c.want {
				t.Fatalf("key = %q, %v; want %q", s.key, err, c.want)
			}
		})
	}
	env := map[string]string{"EARSHOT_HELPER_SERVER": "http://127.0.0.1:1"}
	if _, err := helperFlags([]string{"--helper-key", "svc_ingest_a", "--key-file", file}, func(k string) string { return env[k] }, io.Discard); err == nil {
		t.Fatal("two keys on one command line were accepted")
	}
}
