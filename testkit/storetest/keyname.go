package storetest

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// testKeyNames: a key name with a NUL, bytes that are not UTF-8 or a
// control character is refused the same way on every database, as
// invalid_parameter about the key name, before the store is asked, and
// leaves the owner's keys as they were; a name core accepts is stored
// as it was given, trimmed.
func testKeyNames(t *testing.T, s Stores) {
	keys := app.NewKeys(s.Keys, s.Owners, ports.SystemClock{})
	o := newOwner(t, s)
	for _, name := range []string{"a\x00b", "a\xffb", "\xc3", "a\x1bb", "a\tb", "line\nbreak", "a\u0085b", strings.Repeat("n", core.MaxKeyNameLen+1)} {
		_, _, err := keys.CreateAPIKey(ctx, o.ID, name, nil)
		if !core.IsKind(err, core.KindInvalid) || !strings.HasPrefix(core.Message(err), "key name ") {
			t.Errorf("API key named %q: %v; want invalid_parameter about the key name", name, err)
		}
		_, _, err = keys.CreateIngestKey(ctx, o.ID, name)
		if !core.IsKind(err, core.KindInvalid) || !strings.HasPrefix(core.Message(err), "key name ") {
			t.Errorf("ingest key named %q: %v; want invalid_parameter about the key name", name, err)
		}
	}
	for _, kind := range []core.KeyKind{core.APIKey, core.IngestKey} {
		if list, err := s.Keys.Keys(ctx, o.ID, kind); err != nil || len(list) != 0 {
			t.Fatalf("%s keys after refused names: %+v, %v", kind, list, err)
		}
	}
	want := "  café ☕ " + strings.Repeat("é", core.MaxKeyNameLen-7) + " "
	if _, _, err := keys.CreateAPIKey(ctx, o.ID, want, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := keys.CreateIngestKey(ctx, o.ID, " "); err != nil {
		t.Fatalf("an ingest key without a name: %v", err)
	}
	api, _ := s.Keys.Keys(ctx, o.ID, core.APIKey)
	ingest, _ := s.Keys.Keys(ctx, o.ID, core.IngestKey)
	if len(api) != 1 || api[0].Name != strings.TrimSpace(want) || len(ingest) != 1 || ingest[0].Name != "" {
		t.Fatalf("stored names: %+v, %+v", api, ingest)
	}
}
