package app

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/adapters/smtpmail"
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
	t.Parallel()
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
	t.Parallel()
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

// lookupCounter counts the store calls a sign-in request makes.
type lookupCounter struct {
	ports.SessionStore
	mu    sync.Mutex
	calls int
}

func (c *lookupCounter) OwnerByEmail(ctx context.Context, email string) (core.Owner, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.SessionStore.OwnerByEmail(ctx, email)
}

func (c *lookupCounter) CreateLoginLink(ctx context.Context, l core.LoginLink) error {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.SessionStore.CreateLoginLink(ctx, l)
}

// drain does the queued link requests one by one, as a worker would.
func drain(ctx context.Context, s *Sessions) {
	for {
		select {
		case j := <-s.queue:
			s.sendLink(ctx, j)
		default:
			return
		}
	}
}

// firstMail runs the workers of s until an email is sent, stops them, and
// returns the first email mail holds.
func firstMail(t *testing.T, s *Sessions, mail *sentMail) ports.Mail {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	select {
	case <-mail.sent:
	case <-time.After(5 * time.Second):
		t.Fatal("no email was sent")
	}
	mail.mu.Lock()
	defer mail.mu.Unlock()
	return mail.mail[0]
}

func (m *sentMail) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mail)
}

// A request answers before the store is asked anything, the same way
// for a known and an unknown address, so its answer and its timing tell
// nothing of which addresses have an account.
func TestRequestLinkAnswersBeforeLookup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, w, clock, mail := newSessions(t)
	w.owner(t, "ada@example.com")
	store := &lookupCounter{SessionStore: gormstore.NewSessionStore(w.db)}
	s := NewSessions(SessionDeps{Store: store, Mailer: mail, Limiter: ratelimit.NewMemory(clock.Now), Clock: clock, Log: quiet},
		SessionConfig{SiteURL: func() string { return "https://listen.example.com/" }})
	for _, email := range []string{"ada@example.com", "nobody@example.com"} {
		if err := s.RequestLink(ctx, email, "10.0.0.1"); err != nil {
			t.Fatalf("%s: %v", email, err)
		}
	}
	if store.calls != 0 || len(s.queue) != 2 {
		t.Fatalf("before answering: %d store calls, %d requests queued; want 0 and 2", store.calls, len(s.queue))
	}
	drain(ctx, s)
	if n := mail.count(); n != 1 || mail.mail[0].To != "ada@example.com" {
		t.Fatalf("sent %+v, want one mail to ada", mail.mail)
	}
}

func TestRequestLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, w, _, mail := newSessions(t)
	w.owner(t, "ada@example.com")
	if err := s.RequestLink(ctx, " Ada@Example.com ", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	// The workers send it.
	m := firstMail(t, s, mail)
	if m.To != "ada@example.com" || !m.Secret || !strings.Contains(m.Body, "https://listen.example.com/app/login/") {
		t.Fatalf("mail = %+v", m)
	}
	if err := s.RequestLink(ctx, "not an email", "10.0.0.2"); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("not an email: %v", err)
	}
}

// Strangers asking for the owner's link cannot make the owner's own
// request fail, and however many ask, the owner gets at most PerOwner
// emails a minute, one per requesting address.
func TestRequestLinkLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, w, clock, mail := newSessions(t)
	mail.sent = make(chan struct{}, 100)
	w.owner(t, "ada@example.com")
	for i := 1; i <= 3; i++ {
		if err := s.RequestLink(ctx, "ada@example.com", fmt.Sprintf("192.0.2.%d", i)); err != nil {
			t.Fatalf("stranger %d: %v", i, err)
		}
	}
	if err := s.RequestLink(ctx, "ada@example.com", "198.51.100.7"); err != nil {
		t.Fatalf("the owner's own request after three strangers': %v", err)
	}
	drain(ctx, s)
	if n := mail.count(); n != 4 {
		t.Fatalf("%d emails, want 4: the owner's own request sends", n)
	}

	// A flood from many addresses: answered alike, at most 5 emails a
	// minute in all, and one a minute per requesting address.
	for i := 0; i < 30; i++ {
		if err := s.RequestLink(ctx, "ada@example.com", fmt.Sprintf("203.0.113.%d", i%10)); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		drain(ctx, s)
	}
	if n := mail.count(); n != 5 {
		t.Fatalf("%d emails after a flood, want the cap of 5 a minute", n)
	}
	clock.add(time.Minute)
	for i := 0; i < 3; i++ {
		_ = s.RequestLink(ctx, "ada@example.com", "203.0.113.1")
	}
	drain(ctx, s)
	if n := mail.count(); n != 6 {
		t.Fatalf("%d emails, want one more a minute later from one address", n)
	}

	// Per requesting address, 10 requests a minute are answered,
	// whichever email, known or not; then a refusal.
	for i := 0; i < 10; i++ {
		if err := s.RequestLink(ctx, fmt.Sprintf("x%d@example.com", i), "10.0.3.1"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RequestLink(ctx, "new@example.com", "10.0.3.1"); !core.IsKind(err, core.KindRateLimited) {
		t.Fatalf("eleventh request from one address: %v", err)
	}
	drain(ctx, s)
	clock.add(time.Minute)
	if err := s.RequestLink(ctx, "new@example.com", "10.0.3.1"); err != nil {
		t.Fatalf("after a minute: %v", err)
	}
}

// A full queue drops requests, answering the same; nothing waits on it.
func TestRequestLinkQueueFull(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, w, _, _ := newSessions(t)
	w.owner(t, "ada@example.com")
	s.cfg.PerAddress = 10 * linkQueue
	for i := 0; i < linkQueue+5; i++ {
		if err := s.RequestLink(ctx, "ada@example.com", "10.0.0.1"); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.queue) != linkQueue {
		t.Fatalf("%d queued, want the bound %d", len(s.queue), linkQueue)
	}
}

var tokenLike = regexp.MustCompile(`[A-Za-z0-9_-]{43}`)

// Without a mail server the link is not written to the log: whoever
// reads logs must not be able to sign in as an owner.
func TestRequestLinkLogsNoLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, w, clock, _ := newSessions(t)
	o := w.owner(t, "ada@example.com")
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	s := NewSessions(SessionDeps{Store: gormstore.NewSessionStore(w.db), Mailer: smtpmail.NewLogMailer(log), Limiter: ratelimit.NewMemory(clock.Now), Clock: clock, Log: log},
		SessionConfig{SiteURL: func() string { return "https://listen.example.com" }})
	if err := s.RequestLink(ctx, "ada@example.com", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	drain(ctx, s)
	out := buf.String()
	if strings.Contains(out, LoginPath) || tokenLike.MatchString(out) {
		t.Fatalf("the log holds a sign-in link:\n%s", out)
	}
	if !strings.Contains(out, "sign-in link requested") || !strings.Contains(out, o.ID) {
		t.Fatalf("the log does not say a link was requested for %s:\n%s", o.ID, out)
	}
}
