package app

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/core"
)

// "Sign out everywhere" is what an owner presses who fears their mail
// is read: a sign-in link left unused in that mailbox must not open a
// new session afterwards. Another owner's links keep working.
func TestSignOutEverywhereVoidsUnusedLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, w, _, _ := newSessions(t)
	o, other := w.owner(t, "ada@example.com"), w.owner(t, "bo@example.com")
	unused, err := s.LoginLink(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	others, err := s.LoginLink(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SignOutEverywhere(ctx, o.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SignIn(ctx, linkToken(t, unused)); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("a link sent before signing out everywhere still signs in: %v", err)
	}
	if _, _, err := s.SignIn(ctx, linkToken(t, others)); err != nil {
		t.Fatalf("another owner's link stopped working: %v", err)
	}
}
