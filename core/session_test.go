package core

import (
	"testing"
	"time"
)

func TestNewToken(t *testing.T) {
	a, ha, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, hb, _ := NewToken()
	if a == b || ha == hb {
		t.Fatal("two tokens are the same")
	}
	if HashToken(a) != ha || ha == a {
		t.Fatalf("hash %q does not belong to token %q", ha, a)
	}
	if !WellFormedToken(a) {
		t.Fatalf("WellFormedToken(%q) = false", a)
	}
	for _, bad := range []string{"", a[:len(a)-1], a + "x", a[:len(a)-1] + "=", a[:len(a)-1] + "/"} {
		if WellFormedToken(bad) {
			t.Errorf("WellFormedToken(%q) = true", bad)
		}
	}
}

func TestSessionExpired(t *testing.T) {
	now := time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)
	s := Session{LastSeenAt: now.Add(-DefaultSessionIdle)}
	if s.Expired(now, DefaultSessionIdle) {
		t.Fatal("a session used exactly the idle time ago expired")
	}
	if !s.Expired(now.Add(time.Second), DefaultSessionIdle) {
		t.Fatal("an idle session did not expire")
	}
}

func TestTriageChange(t *testing.T) {
	yes, no := true, false
	if !(TriageChange{}).Empty() || (TriageChange{Starred: &no}).Empty() {
		t.Fatal("Empty is wrong")
	}
	got := TriageChange{Read: &yes, Archived: &no}.Apply(Triage{Starred: true, Archived: true})
	if got != (Triage{Read: true, Starred: true}) {
		t.Fatalf("Apply = %+v", got)
	}
}
