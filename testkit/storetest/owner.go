package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// testOwnerList: Owners lists every owner oldest first, these among them.
func testOwnerList(t *testing.T, s Stores) {
	a := newOwner(t, s)
	b := newOwner(t, s)
	all, err := s.Owners.Owners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ia := slices.IndexFunc(all, func(o core.Owner) bool { return o.ID == a.ID })
	ib := slices.IndexFunc(all, func(o core.Owner) bool { return o.ID == b.ID })
	if ia < 0 || ib < 0 || ia > ib {
		t.Fatalf("Owners: %s at %d, %s at %d in %d owners", a.ID, ia, b.ID, ib, len(all))
	}
	if got := all[ia]; got.Email != a.Email || got.Name != a.Name || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("listed %+v, want %+v", got, a)
	}
	for i := 1; i < len(all); i++ {
		if all[i].CreatedAt.Before(all[i-1].CreatedAt) {
			t.Fatalf("Owners not oldest first at %d: %v before %v", i, all[i-1].CreatedAt, all[i].CreatedAt)
		}
	}
	u, err := s.Phrases.Usage(ctx, a.ID)
	if err != nil || u.Owners < 2 {
		t.Fatalf("Usage counts %d owners, %v; want 2 at least", u.Owners, err)
	}
}

// testOwnerUpdate: UpdateOwner changes the address and the name, refuses
// an address another owner has and an unknown owner.
func testOwnerUpdate(t *testing.T, s Stores) {
	a := newOwner(t, s)
	b := newOwner(t, s)
	a.Email, a.Name = "renamed-"+unique()+"@example.com", "Ada"
	if err := s.Owners.UpdateOwner(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.Owners.Owner(ctx, a.ID)
	if err != nil || got.Email != a.Email || got.Name != "Ada" || !got.CreatedAt.Equal(a.CreatedAt) {
		t.Fatalf("after UpdateOwner: %+v, %v; want %+v", got, err, a)
	}
	taken := a
	taken.Email = b.Email
	wantKind(t, s.Owners.UpdateOwner(ctx, taken), core.KindConflict)
	if got, _ := s.Owners.Owner(ctx, a.ID); got.Email != a.Email {
		t.Fatalf("a refused update changed the address to %q", got.Email)
	}
	ghost := core.Owner{ID: "no-such-owner", Email: "ghost-" + unique() + "@example.com"}
	wantKind(t, s.Owners.UpdateOwner(ctx, ghost), core.KindNotFound)
}

func newEmailChange(t *testing.T, s Stores, ownerID, email string, now time.Time) string {
	t.Helper()
	_, hash, err := core.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	c := core.EmailChange{Hash: hash, OwnerID: ownerID, Email: email, CreatedAt: now, ExpiresAt: now.Add(core.EmailChangeTTL)}
	if err := s.Owners.CreateEmailChange(ctx, c); err != nil {
		t.Fatalf("CreateEmailChange: %v", err)
	}
	return hash
}

// testEmailChange: a change applies once, within its time, and not to an
// address another owner took meanwhile.
func testEmailChange(t *testing.T, s Stores) {
	o := newOwner(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	to := "new-" + unique() + "@example.com"
	hash := newEmailChange(t, s, o.ID, to, now)
	got, old, err := s.Owners.UseEmailChange(ctx, hash, now.Add(time.Minute))
	if err != nil || got.ID != o.ID || got.Email != to || old != o.Email {
		t.Fatalf("UseEmailChange = %+v, %q, %v", got, old, err)
	}
	if stored, _ := s.Owners.Owner(ctx, o.ID); stored.Email != to {
		t.Fatalf("stored address %q, want %q", stored.Email, to)
	}
	_, _, err = s.Owners.UseEmailChange(ctx, hash, now.Add(2*time.Minute))
	wantKind(t, err, core.KindNotFound) // single use

	expired := newEmailChange(t, s, o.ID, "late-"+unique()+"@example.com", now)
	_, _, err = s.Owners.UseEmailChange(ctx, expired, now.Add(core.EmailChangeTTL+time.Second))
	wantKind(t, err, core.KindNotFound)
	_, _, err = s.Owners.UseEmailChange(ctx, "unknown", now)
	wantKind(t, err, core.KindNotFound)

	// Another owner took the address after the link was sent: refused,
	// and the link still works once that address is free again.
	other := newOwner(t, s)
	taken := newEmailChange(t, s, o.ID, other.Email, now)
	_, _, err = s.Owners.UseEmailChange(ctx, taken, now.Add(time.Minute))
	wantKind(t, err, core.KindConflict)
	if stored, _ := s.Owners.Owner(ctx, o.ID); stored.Email != to {
		t.Fatalf("a refused change left the address %q, want %q", stored.Email, to)
	}

	wantKind(t, s.Owners.CreateEmailChange(ctx, core.EmailChange{Hash: "h" + unique(), OwnerID: "no-such-owner",
		Email: "x-" + unique() + "@example.com", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}), core.KindNotFound)
}

// testEmailChangeRace: of two requests racing for one link, one wins.
func testEmailChangeRace(t *testing.T, s Stores) {
	o := newOwner(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	hash := newEmailChange(t, s, o.ID, "race-"+unique()+"@example.com", now)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			_, _, err := s.Owners.UseEmailChange(ctx, hash, now.Add(time.Second))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	won := 0
	for err := range errs {
		switch {
		case err == nil:
			won++
		case !core.IsKind(err, core.KindNotFound):
			t.Fatalf("racing use: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d uses of one link won, want 1", won)
	}
}
