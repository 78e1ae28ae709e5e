package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Dashboard holds the stores behind the dashboard: sign-in and triage.
type Dashboard struct {
	Sessions ports.SessionStore
	Triage   ports.TriageStore
}

// RunDashboard runs the session and triage cases. s must share d's
// database.
func RunDashboard(t *testing.T, s Stores, d Dashboard) {
	t.Run("LoginLinks", func(t *testing.T) { t.Parallel(); testLoginLinks(t, s, d.Sessions) })
	t.Run("LoginLinkRace", func(t *testing.T) { t.Parallel(); testLoginLinkRace(t, s, d.Sessions) })
	t.Run("LoginLinksOfAnOldAddress", func(t *testing.T) { t.Parallel(); testLoginLinksOfAnOldAddress(t, s, d.Sessions) })
	t.Run("Sessions", func(t *testing.T) { t.Parallel(); testSessions(t, s, d.Sessions) })
	t.Run("SignOutEverywhereVoidsLinks", func(t *testing.T) { t.Parallel(); testSignOutEverywhereVoidsLinks(t, s, d.Sessions) })
	t.Run("Triage", func(t *testing.T) { t.Parallel(); testTriage(t, s, d.Triage) })
	t.Run("InboxFilters", func(t *testing.T) { t.Parallel(); testInboxFilters(t, s, d.Triage) })
	t.Run("TriageIsolation", func(t *testing.T) { t.Parallel(); testTriageIsolation(t, s, d.Triage) })
	t.Run("TriageCounts", func(t *testing.T) { t.Parallel(); testTriageCounts(t, s, d.Triage) })
	t.Run("InboxArchivedRuns", func(t *testing.T) { t.Parallel(); testInboxArchivedRuns(t, s, d.Triage) })
	t.Run("InboxSearch", func(t *testing.T) { t.Parallel(); testInboxSearch(t, s, d.Triage) })
}

func newLink(t *testing.T, st ports.SessionStore, ownerID string, now time.Time) string {
	t.Helper()
	_, hash, err := core.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateLoginLink(ctx, core.LoginLink{Hash: hash, OwnerID: ownerID, CreatedAt: now, ExpiresAt: now.Add(core.LoginLinkTTL)}); err != nil {
		t.Fatalf("CreateLoginLink: %v", err)
	}
	return hash
}

func testLoginLinks(t *testing.T, s Stores, st ports.SessionStore) {
	o := newOwner(t, s)
	got, err := st.OwnerByEmail(ctx, o.Email)
	if err != nil || got.ID != o.ID {
		t.Fatalf("OwnerByEmail = %+v, %v", got, err)
	}
	_, err = st.OwnerByEmail(ctx, "nobody-"+unique()+"@example.com")
	wantKind(t, err, core.KindNotFound)

	now := time.Now().UTC().Truncate(time.Microsecond)
	hash := newLink(t, st, o.ID, now)
	owner, err := st.UseLoginLink(ctx, hash, now.Add(time.Minute))
	if err != nil || owner != o.ID {
		t.Fatalf("UseLoginLink = %q, %v", owner, err)
	}
	_, err = st.UseLoginLink(ctx, hash, now.Add(2*time.Minute))
	wantKind(t, err, core.KindNotFound) // single use

	late := newLink(t, st, o.ID, now)
	_, err = st.UseLoginLink(ctx, late, now.Add(core.LoginLinkTTL+time.Second))
	wantKind(t, err, core.KindNotFound) // expired
	if _, err := st.UseLoginLink(ctx, late, now.Add(core.LoginLinkTTL)); err != nil {
		t.Fatalf("a link at its expiry instant: %v", err)
	}
	_, err = st.UseLoginLink(ctx, core.HashToken("unknown"), now)
	wantKind(t, err, core.KindNotFound)

	_, hash2, _ := core.NewToken()
	err = st.CreateLoginLink(ctx, core.LoginLink{Hash: hash2, OwnerID: "no-such-owner", CreatedAt: now, ExpiresAt: now.Add(time.Minute)})
	wantKind(t, err, core.KindNotFound)
}

func testLoginLinkRace(t *testing.T, s Stores, st ports.SessionStore) {
	o := newOwner(t, s)
	now := time.Now().UTC()
	hash := newLink(t, st, o.ID, now)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := st.UseLoginLink(ctx, hash, now); err == nil {
				wins.Add(1)
			} else if !core.IsKind(err, core.KindNotFound) {
				t.Errorf("UseLoginLink: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d requests used one link, want 1", wins.Load())
	}
}

// testLoginLinksOfAnOldAddress: a confirmed change of address voids the
// owner's unused sign-in links, which went to the old address; a refused
// one voids nothing, nor does it touch another owner's links. A link made
// after the change works.
func testLoginLinksOfAnOldAddress(t *testing.T, s Stores, st ports.SessionStore) {
	o := newOwner(t, s)
	other := newOwner(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	sent := newLink(t, st, o.ID, now)
	kept := newLink(t, st, o.ID, now)
	theirs := newLink(t, st, other.ID, now)

	taken := newEmailChange(t, s, o.ID, other.Email, now)
	_, _, err := s.Owners.UseEmailChange(ctx, taken, now.Add(time.Second))
	wantKind(t, err, core.KindConflict)
	if id, err := st.UseLoginLink(ctx, kept, now.Add(time.Second)); err != nil || id != o.ID {
		t.Fatalf("a link after a refused change = %q, %v", id, err)
	}

	change := newEmailChange(t, s, o.ID, "moved-"+unique()+"@example.com", now)
	if _, _, err := s.Owners.UseEmailChange(ctx, change, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	_, err = st.UseLoginLink(ctx, sent, now.Add(2*time.Second))
	wantKind(t, err, core.KindNotFound)
	if id, err := st.UseLoginLink(ctx, theirs, now.Add(2*time.Second)); err != nil || id != other.ID {
		t.Fatalf("another owner's link after the change = %q, %v", id, err)
	}
	after := newLink(t, st, o.ID, now.Add(2*time.Second))
	if id, err := st.UseLoginLink(ctx, after, now.Add(3*time.Second)); err != nil || id != o.ID {
		t.Fatalf("a link made after the change = %q, %v", id, err)
	}
}

// testSignOutEverywhereVoidsLinks: an owner who signs out everywhere may
// fear their mail is read, so a sign-in link left unused there opens no
// session afterwards; another owner's links keep working, and a link
// made after works.
func testSignOutEverywhereVoidsLinks(t *testing.T, s Stores, st ports.SessionStore) {
	o := newOwner(t, s)
	other := newOwner(t, s)
	now := time.Now().UTC().Truncate(time.Microsecond)
	sent := newLink(t, st, o.ID, now)
	theirs := newLink(t, st, other.ID, now)
	if _, err := st.DeleteSessions(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	_, err := st.UseLoginLink(ctx, sent, now.Add(time.Second))
	wantKind(t, err, core.KindNotFound)
	if id, err := st.UseLoginLink(ctx, theirs, now.Add(time.Second)); err != nil || id != other.ID {
		t.Fatalf("another owner's link after signing one out everywhere = %q, %v", id, err)
	}
	after := newLink(t, st, o.ID, now.Add(time.Second))
	if id, err := st.UseLoginLink(ctx, after, now.Add(2*time.Second)); err != nil || id != o.ID {
		t.Fatalf("a link made after = %q, %v", id, err)
	}
}

func testSessions(t *testing.T, s Stores, st ports.SessionStore) {
	o, other := newOwner(t, s), newOwner(t, s)
	// A month back: DeleteIdleSessions below also drops login links that
	// expired before its time, and the links other cases make in
	// parallel must not be among them.
	now := time.Now().UTC().Add(-30 * 24 * time.Hour).Truncate(time.Microsecond)
	mk := func(owner string) core.Session {
		_, hash, _ := core.NewToken()
		ss := core.Session{Hash: hash, OwnerID: owner, CreatedAt: now, LastSeenAt: now}
		if err := st.CreateSession(ctx, &ss); err != nil || ss.ID == "" {
			t.Fatalf("CreateSession = %+v, %v", ss, err)
		}
		return ss
	}
	a, b, c := mk(o.ID), mk(o.ID), mk(other.ID)
	got, err := st.Session(ctx, a.Hash)
	if err != nil || got.ID != a.ID || got.OwnerID != o.ID || !got.CreatedAt.Equal(now) || !got.LastSeenAt.Equal(now) {
		t.Fatalf("Session = %+v, %v; want %+v", got, err, a)
	}
	_, err = st.Session(ctx, core.HashToken("unknown"))
	wantKind(t, err, core.KindNotFound)

	later := now.Add(time.Hour)
	if err := st.TouchSession(ctx, a.ID, later); err != nil {
		t.Fatal(err)
	}
	if err := st.TouchSession(ctx, a.ID, now); err != nil { // never moves back
		t.Fatal(err)
	}
	if got, _ := st.Session(ctx, a.Hash); !got.LastSeenAt.Equal(later) {
		t.Fatalf("LastSeenAt = %v, want %v", got.LastSeenAt, later)
	}

	if err := st.DeleteSession(ctx, b.Hash); err != nil {
		t.Fatal(err)
	}
	_, err = st.Session(ctx, b.Hash)
	wantKind(t, err, core.KindNotFound)
	if err := st.DeleteSession(ctx, b.Hash); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}

	b = mk(o.ID)
	n, err := st.DeleteSessions(ctx, o.ID)
	if err != nil || n != 2 {
		t.Fatalf("DeleteSessions = %d, %v; want 2", n, err)
	}
	for _, h := range []string{a.Hash, b.Hash} {
		_, err = st.Session(ctx, h)
		wantKind(t, err, core.KindNotFound)
	}
	if _, err := st.Session(ctx, c.Hash); err != nil {
		t.Fatalf("signing one owner out everywhere ended another's session: %v", err)
	}

	// Idle sessions go; the ones used since stay.
	idle := mk(other.ID)
	if err := st.TouchSession(ctx, c.ID, now.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteIdleSessions(ctx, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	_, err = st.Session(ctx, idle.Hash)
	wantKind(t, err, core.KindNotFound)
	if _, err := st.Session(ctx, c.Hash); err != nil {
		t.Fatalf("DeleteIdleSessions removed a session in use: %v", err)
	}

	_, hash, _ := core.NewToken()
	ghost := core.Session{Hash: hash, OwnerID: "no-such-owner", CreatedAt: now, LastSeenAt: now}
	wantKind(t, st.CreateSession(ctx, &ghost), core.KindNotFound)
}
