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

// testEmailChangeReplaced: an owner has one pending change, the last
// asked for; a link to an address asked for before it no longer applies,
// before or after the last one is confirmed. Another owner's change
// stays.
func testEmailChangeReplaced(t *testing.T, s Stores) {
	o := newOwner(t, s)
	other := newOwner(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	theirs := newEmailChange(t, s, other.ID, "theirs-"+unique()+"@example.com", now)
	typo := newEmailChange(t, s, o.ID, "typo-"+unique()+"@exmaple.com", now)
	right := "right-" + unique() + "@example.com"
	hash := newEmailChange(t, s, o.ID, right, now.Add(time.Second))
	_, _, err := s.Owners.UseEmailChange(ctx, typo, now.Add(time.Minute))
	wantKind(t, err, core.KindNotFound)
	if got, _, err := s.Owners.UseEmailChange(ctx, hash, now.Add(time.Minute)); err != nil || got.Email != right {
		t.Fatalf("the last change asked for: %+v, %v", got, err)
	}
	_, _, err = s.Owners.UseEmailChange(ctx, typo, now.Add(time.Minute))
	wantKind(t, err, core.KindNotFound)
	if got, _, err := s.Owners.UseEmailChange(ctx, theirs, now.Add(time.Minute)); err != nil || got.ID != other.ID {
		t.Fatalf("another owner's change: %+v, %v", got, err)
	}
}

// testEmailChangeRequestRace: requests racing a confirmation of the same
// owner end without error, the confirmation with none other than
// KindNotFound, and the owner's last change stored is the one that
// applies.
func testEmailChangeRequestRace(t *testing.T, s Stores) {
	o := newOwner(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	for round := range 8 {
		first := newEmailChange(t, s, o.ID, "first-"+unique()+"@example.com", now)
		var later []string
		var wg sync.WaitGroup
		wg.Go(func() {
			for range 4 {
				_, hash, err := core.NewToken()
				if err != nil {
					t.Error(err)
					return
				}
				c := core.EmailChange{Hash: hash, OwnerID: o.ID, Email: "later-" + unique() + "@example.com", CreatedAt: now, ExpiresAt: now.Add(core.EmailChangeTTL)}
				if err := s.Owners.CreateEmailChange(ctx, c); err != nil {
					t.Errorf("round %d: CreateEmailChange beside a confirmation: %v", round, err)
					return
				}
				later = append(later, hash)
			}
		})
		wg.Go(func() {
			if _, _, err := s.Owners.UseEmailChange(ctx, first, now.Add(time.Second)); err != nil && !core.IsKind(err, core.KindNotFound) {
				t.Errorf("round %d: UseEmailChange beside requests: %v", round, err)
			}
		})
		wg.Wait()
		if t.Failed() {
			return
		}
		// A confirmation either ran before every request, or found its
		// change replaced: the last change stored applies either way,
		// and none before it.
		for i, hash := range later[:len(later)-1] {
			_, _, err := s.Owners.UseEmailChange(ctx, hash, now.Add(time.Second))
			if !core.IsKind(err, core.KindNotFound) {
				t.Fatalf("round %d: change %d of 4 still applies after a later one: %v", round, i+1, err)
			}
		}
		if _, _, err := s.Owners.UseEmailChange(ctx, later[len(later)-1], now.Add(time.Second)); err != nil {
			t.Fatalf("round %d: the last change stored: %v", round, err)
		}
	}
}
