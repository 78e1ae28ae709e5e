package app

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type handClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *handClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *handClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type sentMail struct {
	mu   sync.Mutex
	mail []ports.Mail
	sent chan struct{}
}

func (m *sentMail) Send(_ context.Context, mm ports.Mail) error {
	m.mu.Lock()
	m.mail = append(m.mail, mm)
	m.mu.Unlock()
	m.sent <- struct{}{}
	return nil
}

func newSessions(t *testing.T) (*Sessions, world, *handClock, *sentMail) {
	w := newWorld(t)
	clock := &handClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	mail := &sentMail{sent: make(chan struct{}, 10)}
	s := NewSessions(SessionDeps{Store: gormstore.NewSessionStore(w.db), Mailer: mail, Limiter: ratelimit.NewMemory(clock.Now), Clock: clock, Log: quiet},
		SessionConfig{SiteURL: func() string { return "https://listen.example.com/" }, Idle: time.Hour})
	return s, w, clock, mail
}

func linkToken(t *testing.T, link string) string {
	t.Helper()
	tok, ok := strings.CutPrefix(link, "https://listen.example.com/app/login/")
	if !ok || !core.WellFormedToken(tok) {
		t.Fatalf("link %q is not under the site address", link)
	}
	return tok
}

func TestSignInFlow(t *testing.T) {
	ctx := context.Background()
	s, w, clock, _ := newSessions(t)
	o := w.owner(t, "ada@example.com")
	link, err := s.LoginLink(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	tok := linkToken(t, link)
	cookie, ss, err := s.SignIn(ctx, tok)
	if err != nil || ss.OwnerID != o.ID || !core.WellFormedToken(cookie) {
		t.Fatalf("SignIn = %q, %+v, %v", cookie, ss, err)
	}
	if _, _, err := s.SignIn(ctx, tok); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("second use of a link: %v", err)
	}
	got, err := s.Authenticate(ctx, cookie)
	if err != nil || got.OwnerID != o.ID {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	// Used within the idle time, the session lives on past it.
	clock.add(50 * time.Minute)
	if _, err := s.Authenticate(ctx, cookie); err != nil {
		t.Fatal(err)
	}
	clock.add(50 * time.Minute)
	if _, err := s.Authenticate(ctx, cookie); err != nil {
		t.Fatalf("a session in use expired: %v", err)
	}
	clock.add(61 * time.Minute)
	if _, err := s.Authenticate(ctx, cookie); !core.IsKind(err, core.KindUnauthorized) {
		t.Fatalf("idle session: %v", err)
	}
	for _, bad := range []string{"", "x", strings.Repeat("A", 43)} {
		if _, err := s.Authenticate(ctx, bad); !core.IsKind(err, core.KindUnauthorized) {
			t.Fatalf("Authenticate(%q): %v", bad, err)
		}
	}

	// A link expires after 15 minutes.
	link, _ = s.LoginLink(ctx, o.ID)
	clock.add(core.LoginLinkTTL + time.Second)
	if _, _, err := s.SignIn(ctx, linkToken(t, link)); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("expired link: %v", err)
	}
	if _, err := s.LoginLink(ctx, "no-such-owner"); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("link for an unknown owner: %v", err)
	}
}

func TestSignOut(t *testing.T) {
	ctx := context.Background()
	s, w, _, _ := newSessions(t)
	o, other := w.owner(t, "ada@example.com"), w.owner(t, "bo@example.com")
	open := func(owner string) string {
		link, _ := s.LoginLink(ctx, owner)
		c, _, err := s.SignIn(ctx, linkToken(t, link))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b, c := open(o.ID), open(o.ID), open(other.ID)
	if err := s.SignOut(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, a); !core.IsKind(err, core.KindUnauthorized) {
		t.Fatalf("signed-out session still works: %v", err)
	}
	if _, err := s.Authenticate(ctx, b); err != nil {
		t.Fatalf("signing out one browser ended another: %v", err)
	}
	a = open(o.ID)
	if n, err := s.SignOutEverywhere(ctx, o.ID); err != nil || n != 2 {
		t.Fatalf("SignOutEverywhere = %d, %v", n, err)
	}
	for _, tok := range []string{a, b} {
		if _, err := s.Authenticate(ctx, tok); !core.IsKind(err, core.KindUnauthorized) {
			t.Fatalf("session survived signing out everywhere: %v", err)
		}
	}
	if _, err := s.Authenticate(ctx, c); err != nil {
		t.Fatalf("another owner's session ended: %v", err)
	}
}

func TestRequestLink(t *testing.T) {
	ctx := context.Background()
	s, w, clock, mail := newSessions(t)
	w.owner(t, "ada@example.com")
	if err := s.RequestLink(ctx, " Ada@Example.com ", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-mail.sent:
	case <-time.After(5 * time.Second):
		t.Fatal("no email was sent")
	}
	mail.mu.Lock()
	m := mail.mail[0]
	mail.mu.Unlock()
	if m.To != "ada@example.com" || !strings.Contains(m.Body, "https://listen.example.com/app/login/") {
		t.Fatalf("mail = %+v", m)
	}
	// An unknown address answers the same and sends nothing.
	if err := s.RequestLink(ctx, "nobody@example.com", "10.0.0.2"); err != nil {
		t.Fatalf("unknown address: %v", err)
	}
	if err := s.RequestLink(ctx, "not an email", "10.0.0.2"); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("not an email: %v", err)
	}
	// Per email: 3 a minute, whichever address asks.
	for i := 0; i < 2; i++ {
		if err := s.RequestLink(ctx, "ada@example.com", "10.0.1."+string(rune('0'+i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RequestLink(ctx, "ada@example.com", "10.0.2.1"); !core.IsKind(err, core.KindRateLimited) {
		t.Fatalf("fourth request for one email: %v", err)
	}
	// Per address: 10 a minute, whichever email, known or not.
	for i := 0; i < 10; i++ {
		if err := s.RequestLink(ctx, "x"+string(rune('a'+i))+"@example.com", "10.0.3.1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RequestLink(ctx, "new@example.com", "10.0.3.1"); !core.IsKind(err, core.KindRateLimited) {
		t.Fatalf("eleventh request from one address: %v", err)
	}
	clock.add(time.Minute)
	if err := s.RequestLink(ctx, "new@example.com", "10.0.3.1"); err != nil {
		t.Fatalf("after a minute: %v", err)
	}
}
