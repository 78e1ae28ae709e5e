package legacymock

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzStateFile hands the mock any state file, seeded with the state it
// writes itself from seed.json, an older file without the format marker
// and hostile variants, and checks what loadState promises: a file it
// takes serves every read route without a 5xx, and writes back as
// itself (what it loads re-encodes to what loads to the same).
func FuzzStateFile(f *testing.F) {
	st, err := seedState()
	if err != nil {
		f.Fatal(err)
	}
	good, err := encodeState(st)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"version":1,"accounts":[],"apiKeys":null,"brand":{},"communities":[{}],"keywords":[],"listings":[{"images":null}]}`))
	f.Add([]byte(`{"format":"earshot-mock-state","version":1,"accounts":[{"id":"a","retryAfter":1e400}]}`))
	f.Add([]byte(`{"format":"earshot-mock-state","version":99}`))
	f.Add([]byte(`{"format":"earshot-mock-state","version":1,"listings":[{"id":"l","price":"` + strings.Repeat("9", 400) + `"}],"apiKeys":[{"scopes":{"groupIds":null}}]}`))
	f.Add([]byte(`null`))
	path := filepath.Join(f.TempDir(), "state.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := loadState(path)
		if err != nil || st == nil {
			return
		}
		once, err := encodeState(st)
		if err != nil {
			t.Fatalf("a state loaded does not encode: %v", err)
		}
		if err := os.WriteFile(path, once, 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := loadState(path)
		if err != nil {
			t.Fatalf("the mock's own encoding of a state does not load: %v\n%s", err, once)
		}
		twice, _ := encodeState(again)
		if !bytes.Equal(once, twice) {
			t.Fatalf("a state reads back changed:\n%s\n%s", once, twice)
		}
		s, err := New(Config{StatePath: path})
		if err != nil {
			t.Fatalf("a state loadState takes does not open: %v", err)
		}
		for _, p := range []string{"/api-keys", "/communities", "/brand", "/brand/sources", "/listings", "/accounts", "/keywords", "/feed"} {
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
			if rec.Code >= http.StatusInternalServerError {
				t.Errorf("GET %s on a state loaded: %d %s", p, rec.Code, rec.Body)
			}
		}
	})
}
