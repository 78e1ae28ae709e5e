package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
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
	// PerAddress and PerEmail bound link requests a minute; 0 means 10
	// and 3.
	PerAddress, PerEmail int
}

// touchEvery is how stale a session's last-seen time may get before a
// request writes it again: one write a minute per session at most,
// instead of one per request.
const touchEvery = time.Minute

// maxMailing bounds the link emails being sent at once; requests past it
// are logged and dropped, so a flood of requests cannot pile up
// goroutines waiting on a slow mail server.
const maxMailing = 4

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
	mailing chan struct{}
}

// SessionDeps are the ports the sign-in service uses.
type SessionDeps struct {
	Store   ports.SessionStore
	Mailer  ports.Mailer      // sends sign-in links
	Limiter ports.RateLimiter // bounds link requests per address and per email
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
	if cfg.PerEmail <= 0 {
		cfg.PerEmail = 3
	}
	if cfg.SiteURL == nil {
		cfg.SiteURL = func() string { return "http://127.0.0.1:8080" }
	}
	return &Sessions{store: d.Store, mailer: d.Mailer, limiter: d.Limiter, clock: orSystemClock(d.Clock), log: orDefaultLog(d.Log), cfg: cfg,
		mailing: make(chan struct{}, maxMailing)}
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

// RequestLink emails a sign-in link to the owner with the address. The
// answer is the same whether the address is known or not, and so is its
// timing, since the email leaves in the background. KindInvalid for
// something that is not an email address; KindRateLimited past the limits
// per requesting address and per email.
func (s *Sessions) RequestLink(ctx context.Context, email, addr string) error {
	o, err := core.NewOwner(email, "")
	if err != nil {
		return core.Errorf(core.KindInvalid, "enter an email address such as ada@example.com")
	}
	email = o.Email
	for _, l := range []struct {
		key   string
		limit int
	}{{"login-addr:" + addr, s.cfg.PerAddress}, {"login-email:" + email, s.cfg.PerEmail}} {
		q, err := s.limiter.Take(ctx, l.key, l.limit)
		if err != nil {
			return err
		}
		if !q.Allowed {
			return core.Errorf(core.KindRateLimited, "too many sign-in requests: wait a minute and try again")
		}
	}
	owner, err := s.store.OwnerByEmail(ctx, email)
	if core.IsKind(err, core.KindNotFound) {
		s.log.InfoContext(ctx, "sign-in link requested for an unknown address")
		return nil
	}
	if err != nil {
		return err
	}
	link, err := s.LoginLink(ctx, owner.ID)
	if err != nil {
		return err
	}
	select {
	case s.mailing <- struct{}{}:
	default:
		s.log.WarnContext(ctx, "sign-in email dropped: too many being sent at once", "owner", owner.ID)
		return nil
	}
	go func() {
		defer func() { <-s.mailing }()
		mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		err := s.mailer.Send(mctx, ports.Mail{
			To:      owner.Email,
			Subject: "Your earshot sign-in link",
			Body: fmt.Sprintf("Open this link to sign in to earshot:\n\n%s\n\nIt works once, for %d minutes. If you did not ask for it, ignore this email.\n",
				link, int(core.LoginLinkTTL/time.Minute)),
		})
		if err != nil {
			s.log.Warn("sign-in email not sent", "owner", owner.ID, "err", err)
		}
	}()
	return nil
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

// SignOutEverywhere ends every session of the owner and returns how many
// there were.
func (s *Sessions) SignOutEverywhere(ctx context.Context, ownerID string) (int, error) {
	return s.store.DeleteSessions(ctx, ownerID)
}

// Sweep removes sessions unused past the idle time and expired links.
func (s *Sessions) Sweep(ctx context.Context) (int, error) {
	return s.store.DeleteIdleSessions(ctx, s.clock.Now().Add(-s.cfg.Idle))
}
