package app

import (
	"context"
	"strings"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
)

// SetSession, the one path of the dashboard upload and of
// `earshot admin session set`, stores any accepted export in the canonical
// form, so GET /session hands helpers one shape; a jar without the
// platform's session cookies is refused before an account is made.
func TestSetSessionStoresCanonicalJar(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	o := w.owner(t, "jar@example.com")
	sealer, err := core.NewSealer(strings.Repeat("k", 32))
	if err != nil {
		t.Fatal(err)
	}
	store := gormstore.NewAccountStore(w.db)
	s := NewAccounts(store, sealer, core.Limits{AccountsPerPlatform: 1})
	ctx := context.Background()

	// Netscape cookies.txt as curl writes it, with a foreign cookie.
	txt := "# Netscape HTTP Cookie File\n" +
		"#HttpOnly_.x.com\tTRUE\t/\tTRUE\t1798761600\tauth_token\tSECRET-a\n" +
		".x.com\tTRUE\t/\tTRUE\t1798761600\tct0\tSECRET-c\n" +
		".example.org\tTRUE\t/\tFALSE\t0\tother\tSECRET-o\n"
	acc, kept, err := s.SetSession(ctx, o.ID, "x", []byte(txt))
	if err != nil {
		t.Fatal(err)
	}
	if !acc.HasSession || acc.Platform != core.X || kept != 2 {
		t.Fatalf("account %+v, %d cookies kept", acc, kept)
	}
	got, err := s.Session(ctx, o.ID, "x")
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"domain":".x.com","name":"auth_token","value":"SECRET-a","path":"/","expires":1798761600,"secure":true,"httpOnly":true},` +
		`{"domain":".x.com","name":"ct0","value":"SECRET-c","path":"/","expires":1798761600,"secure":true,"httpOnly":false}]`
	if string(got) != want {
		t.Fatalf("stored %s\nwant   %s", got, want)
	}

	// A jar without the session cookies is refused, quoting no value, and
	// makes no account on the platform.
	_, _, err = s.SetSession(ctx, o.ID, "facebook", []byte(`[{"domain":".facebook.com","name":"c_user","value":"SECRET-u"}]`))
	if !core.IsKind(err, core.KindInvalid) || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "xs") {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := store.Session(ctx, o.ID, core.Facebook); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("a refused jar left an account: %v", err)
	}
}

// A jar stored before the canonical form (any JSON the admin console
// took) is handed back as it was stored.
func TestSessionReturnsOlderJarsAsStored(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	o := w.owner(t, "old@example.com")
	sealer, err := core.NewSealer(strings.Repeat("k", 32))
	if err != nil {
		t.Fatal(err)
	}
	store := gormstore.NewAccountStore(w.db)
	ctx := context.Background()
	acc, err := store.EnsureAccount(ctx, o.ID, core.Facebook, core.Limits{AccountsPerPlatform: 1})
	if err != nil {
		t.Fatal(err)
	}
	old := `[{"name":"c_user","value":"v","domain":".facebook.com"}]`
	sealed, err := sealer.Seal([]byte(old), []byte(acc.ID))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SetSession(ctx, o.ID, acc.ID, sealed); err != nil {
		t.Fatal(err)
	}
	got, err := NewAccounts(store, sealer, core.Limits{AccountsPerPlatform: 1}).Session(ctx, o.ID, "facebook")
	if err != nil || string(got) != old {
		t.Fatalf("Session = %s, %v", got, err)
	}
}
