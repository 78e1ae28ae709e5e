package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// SessionConfig is the dashboard sign-in's part of the settings.
type SessionConfig struct {
	// Idle is how long a session lasts unused; 0 means
	// core.DefaultSessionIdle.
	Idle time.Duration
	// SiteURL returns the public address links are made under. It is a
	// func because the address may be known only once the server listens.
	SiteURL func() string
	// PerAddress bounds the link requests one address may make a minute,
	// known email or not; past it the request is refused. 0 means 10.
	PerAddress int
	// PerOwner bounds the sign-in emails an owner gets a minute, and
	// PerOwnerAddress those one requesting address can cause; requests
	// past them are answered alike and send nothing. 0 means 5 and 1.
	PerOwner, PerOwnerAddress int
}

// touchEvery is how stale a session's last-seen time may get before a
// request writes it again: one write a minute per session at most,
// instead of one per request.
const touchEvery = time.Minute

// Link requests wait in a queue of linkQueue for linkWorkers workers
// that look the address up, store a link and send it. Requests past a
// full queue are logged and dropped, so a flood cannot pile up work
// behind a slow mail server or database.
const (
	linkQueue   = 256
	linkWorkers = 2
)

// linkRequest is one queued request for a sign-in link.
type linkRequest struct {
	email, addr string
}

// Sessions signs owners in to the dashboard without passwords: a
// single-use link, then a session cookie. Only hashes of either token
// are stored.
type Sessions struct {
	store   ports.SessionStore
	mailer  ports.Mailer
	limiter ports.RateLimiter
	clock   ports.Clock
	log     *slog.Logger
	cfg     SessionConfig
	queue   chan linkRequest
}

// SessionDeps are the ports the sign-in service uses.
type SessionDeps struct {
	Store   ports.SessionStore
	Mailer  ports.Mailer      // sends sign-in links
	Limiter ports.RateLimiter // bounds link requests per address and emails per owner
	Clock   ports.Clock       // nil means the system clock
	Log     *slog.Logger      // nil means slog.Default
}

// NewSessions returns the sign-in service.
func NewSessions(d SessionDeps, cfg SessionConfig) *Sessions {
	if cfg.Idle <= 0 {
		cfg.Idle = core.DefaultSessionIdle
	}
	if cfg.PerAddress <= 0 {
		cfg.PerAddress = 10
	}
	if cfg.PerOwner <= 0 {
		cfg.PerOwner = 5
	}
	if cfg.PerOwnerAddress <= 0 {
		cfg.PerOwnerAddress = 1
	}
	if cfg.SiteURL == nil {
		cfg.SiteURL = func() string { return "http://127.0.0.1:8080" }
	}
	return &Sessions{store: d.Store, mailer: d.Mailer, limiter: d.Limiter, clock: orSystemClock(d.Clock), log: orDefaultLog(d.Log), cfg: cfg,
		queue: make(chan linkRequest, linkQueue)}
}

// Idle is how long a session lasts unused.
func (s *Sessions) Idle() time.Duration { return s.cfg.Idle }

// LoginPath is where sign-in links point, under the site address.
const LoginPath = "/app/login/"

// LoginLink makes a sign-in link for the owner and returns its full
// address. KindNotFound for an unknown owner.
func (s *Sessions) LoginLink(ctx context.Context, ownerID string) (string, error) {
	token, hash, err := core.NewToken()
	if err != nil {
		return "", err
	}
	now := s.clock.Now()
	if err := s.store.CreateLoginLink(ctx, core.LoginLink{Hash: hash, OwnerID: ownerID, CreatedAt: now, ExpiresAt: now.Add(core.LoginLinkTTL)}); err != nil {
		return "", err
	}
	return strings.TrimSuffix(s.cfg.SiteURL(), "/") + LoginPath + token, nil
}

// RequestLink queues a sign-in link for the owner with the address, to
// be sent by Run. It answers before the address is looked up, doing the
// same work whether it is known or not, so neither the answer nor its
// timing tells which addresses have an account. KindInvalid for
// something that is not an email address; KindRateLimited past the
// requests one address may make a minute.
func (s *Sessions) RequestLink(ctx context.Context, email, addr string) error {
	o, err := core.NewOwner(email, "")
	if err != nil {
		return core.Errorf(core.KindInvalid, "enter an email address such as ada@example.com")
	}
	q, err := s.limiter.Take(ctx, "login-addr:"+addr, s.cfg.PerAddress)
	if err != nil {
		return err
	}
	if !q.Allowed {
		return core.Errorf(core.KindRateLimited, "too many sign-in requests: wait a minute and try again")
	}
	select {
	case s.queue <- linkRequest{email: o.Email, addr: addr}:
	default:
		s.log.WarnContext(ctx, "sign-in request dropped: too many waiting to be sent")
	}
	return nil
}

// Run sends the queued sign-in links until ctx ends.
func (s *Sessions) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range linkWorkers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-s.queue:
					s.sendLink(ctx, j)
				}
			}
		})
	}
	wg.Wait()
}

// sendLink looks up the owner of a queued request and emails a link,
// within the emails the owner and the requesting address may cause.
// Every email goes to the owner and any of its links works, so strangers
// asking cannot keep the owner out: the owner has a link in their inbox
// for each email sent.
func (s *Sessions) sendLink(ctx context.Context, j linkRequest) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	owner, err := s.store.OwnerByEmail(ctx, j.email)
	if core.IsKind(err, core.KindNotFound) {
		s.log.InfoContext(ctx, "sign-in link requested for an unknown address")
		return
	}
	if err != nil {
		s.log.WarnContext(ctx, "sign-in request not handled", "err", err)
		return
	}
	for _, l := range []struct {
		key   string
		limit int
	}{{"login-mail:" + owner.ID + ":" + j.addr, s.cfg.PerOwnerAddress}, {"login-mail:" + owner.ID, s.cfg.PerOwner}} {
		q, err := s.limiter.Take(ctx, l.key, l.limit)
		if err != nil {
			s.log.WarnContext(ctx, "sign-in request not handled", "owner", owner.ID, "err", err)
			return
		}
		if !q.Allowed {
			s.log.InfoContext(ctx, "sign-in link requested, none sent: the owner had enough this minute", "owner", owner.ID)
			return
		}
	}
	link, err := s.LoginLink(ctx, owner.ID)
	if err != nil {
		s.log.WarnContext(ctx, "sign-in request not handled", "owner", owner.ID, "err", err)
		return
	}
	s.log.InfoContext(ctx, "sign-in link requested", "owner", owner.ID)
	err = s.mailer.Send(ctx, ports.Mail{
		To:      owner.Email,
		Subject: "Your earshot sign-in link",
		Body: fmt.Sprintf("Open this link to sign in to earshot:\n\n%s\n\nIt works once, for %d minutes. If you did not ask for it, ignore this email.\n",
			link, int(core.LoginLinkTTL/time.Minute)),
		Secret: true,
	})
	if err != nil {
		s.log.WarnContext(ctx, "sign-in email not sent", "owner", owner.ID, "err", err)
	}
}

// SignIn consumes a sign-in link's token and opens a session; it returns
// the session's token for the cookie. KindNotFound when the link was
// used, has expired or is unknown.
func (s *Sessions) SignIn(ctx context.Context, linkToken string) (string, core.Session, error) {
	if !core.WellFormedToken(linkToken) {
		return "", core.Session{}, core.Errorf(core.KindNotFound, "this sign-in link is not valid")
	}
	now := s.clock.Now()
	ownerID, err := s.store.UseLoginLink(ctx, core.HashToken(linkToken), now)
	if err != nil {
		return "", core.Session{}, err
	}
	token, hash, err := core.NewToken()
	if err != nil {
		return "", core.Session{}, err
	}
	ss := core.Session{Hash: hash, OwnerID: ownerID, CreatedAt: now, LastSeenAt: now}
	if err := s.store.CreateSession(ctx, &ss); err != nil {
		return "", core.Session{}, err
	}
	return token, ss, nil
}

// Authenticate returns the live session of a cookie's token and notes
// its use. KindUnauthorized when the token is malformed, unknown, or the
// session went unused past the idle time.
func (s *Sessions) Authenticate(ctx context.Context, token string) (core.Session, error) {
	if !core.WellFormedToken(token) {
		return core.Session{}, core.Errorf(core.KindUnauthorized, "not signed in")
	}
	ss, err := s.store.Session(ctx, core.HashToken(token))
	if core.IsKind(err, core.KindNotFound) {
		return core.Session{}, core.Errorf(core.KindUnauthorized, "not signed in")
	}
	if err != nil {
		return core.Session{}, err
	}
	now := s.clock.Now()
	if ss.Expired(now, s.cfg.Idle) {
		_ = s.store.DeleteSession(ctx, ss.Hash)
		return core.Session{}, core.Errorf(core.KindUnauthorized, "the session expired: sign in again")
	}
	if now.Sub(ss.LastSeenAt) > touchEvery {
		if err := s.store.TouchSession(ctx, ss.ID, now); err != nil {
			return core.Session{}, err
		}
		ss.LastSeenAt = now
	}
	return ss, nil
}

// SignOut ends the session of the token, if any.
func (s *Sessions) SignOut(ctx context.Context, token string) error {
	if !core.WellFormedToken(token) {
		return nil
	}
	return s.store.DeleteSession(ctx, core.HashToken(token))
}

// SignOutEverywhere ends every session of the owner and voids its unused
// sign-in links, and returns how many sessions there were.
func (s *Sessions) SignOutEverywhere(ctx context.Context, ownerID string) (int, error) {
	return s.store.DeleteSessions(ctx, ownerID)
}

// Sweep removes sessions unused past the idle time and expired links.
func (s *Sessions) Sweep(ctx context.Context) (int, error) {
	return s.store.DeleteIdleSessions(ctx, s.clock.Now().Add(-s.cfg.Idle))
}
