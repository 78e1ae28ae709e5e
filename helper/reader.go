package helper

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
)

// Reader reads one platform for one owner's account. Part of every
// reader's contract: it paces its own requests per account (never faster
// than the platform's own web client), reports every platform answer
// about the account through In.Report (a refusal that is one community's
// own, such as reddit's private community, is not the account's and is
// not reported), and stops when Report returns a *Paused.
type Reader interface {
	// Platform is the platform's name as the server knows it: reddit, x,
	// facebook.
	Platform() string
	// Read reads the newest posts for in.Phrases since the checkpoints
	// that in.Since gives, and hands each to emit with the Mark that
	// accepting it moves, oldest first within each checkpoint, so that a
	// checkpoint moved after a batch never passes a post not yet sent.
	// An error from emit or Report ends the read with that error.
	Read(ctx context.Context, in In, emit func(Post, Mark) error) error
}

// Keeper is a Reader whose checkpoints are named after its phrases (and
// their groups). Keeps returns which checkpoints a read of phrases may
// still use; get reads a checkpoint, as In.Since does. Keys of other
// platforms are kept. Once a read of the platform has ended and its
// batches were accepted, the runner drops the others, so the state file,
// written whole at every batch, holds the checkpoints of the phrases
// listened to now rather than of every phrase ever read. A reader whose
// first read of a phrase reads at least as far as one from a checkpoint
// does (x, facebook) loses nothing but a page's posts sent again, which
// the server skips. Reddit's first read of a community goes less far
// than a catch-up from its checkpoint, so it keeps the checkpoints of a
// community left within a while (reddit.ForgetAfter) besides those of
// its phrases' communities.
type Keeper interface {
	Reader
	Keeps(phrases []Phrase, get func(key string) string) func(key string) bool
}

// Unreader is a Reader that can tell, while it reads and after, which
// communities of its phrases the read has not read: those the platform
// refused for their own reason (a private reddit community) and those it
// has not come to yet. Every batch names them (Client.IngestUnread), so
// the server records as read only the phrases actually read so far.
type Unreader interface {
	Reader
	// Unread returns those communities of the current or last read,
	// sorted; nil when every one was read.
	Unread() []string
}

// PhraseUnreader is a Reader that can tell, while it reads and after,
// which of its phrases the read has not searched to the end: those it
// has not come to yet, the one it stopped in (the platform refused it, a
// challenge, a pause, an error) and those it was cut off before. Every
// batch names them (Client.IngestBatch), so the server records as read
// only the phrases actually searched so far.
type PhraseUnreader interface {
	Reader
	// UnreadPhrases returns the texts of those phrases of the current or
	// last read, as In.Phrases gave them, sorted; nil when every one was
	// searched.
	UnreadPhrases() []string
}

// In is what a Reader is given for one read.
type In struct {
	Phrases []Phrase
	// Session is the owner's cookies for the platform; nil reads
	// without a session.
	Session []core.Cookie
	// HTTP is the client every platform request goes through (see
	// PlatformClient); ViaProxy says whether it uses the proxy.
	HTTP     *http.Client
	ViaProxy bool
	// Proxy is the proxy HTTP goes through, with its credentials, for a
	// reader that drives a browser; nil when ViaProxy is false.
	Proxy *url.URL
	// Since returns the checkpoint stored under key, "" for none.
	Since func(key string) string
	// Save stores value under key beside the checkpoints at once, not
	// with a batch: what a reader learns about the account (a list of the
	// account's groups, its place in a rotation), or how far it read where
	// no post waits in a batch (reddit's quiet communities), kept across
	// passes and restarts; Since reads it back. nil keeps nothing.
	Save func(key, value string) error
	// Report sends what the platform answered (see Client.Report) and
	// returns a *Paused when the account must pause; wait is how long
	// the platform itself asked to wait (0 when it named none).
	Report func(ctx context.Context, s Signal, wait time.Duration) error
}

// Mark is a checkpoint a post moves once accepted: Key names a listing
// of the platform (a community's new posts, say), Value how far it got.
type Mark struct{ Key, Value string }

// Paused is the error that stops reading an account until the account's
// view allows it again: Until for a wait (a rate limit), or, when
// NeedsOwner, until the owner acts (signs in again, solves a challenge)
// and the session stored on the server changes.
type Paused struct {
	Platform   string
	Issue      string
	Action     string
	NeedsOwner bool
	Until      time.Time
}

func (p *Paused) Error() string {
	if p.NeedsOwner {
		return fmt.Sprintf("%s: the account needs its owner (%s, action %s): reading waits for a new session from the dashboard", p.Platform, p.Issue, p.Action)
	}
	return fmt.Sprintf("%s: the account is paused until %s (%s)", p.Platform, p.Until.UTC().Format(time.RFC3339), p.Issue)
}

// MinPause is the shortest pause after a platform answer that is not
// normal while the account's view says to wait.
const MinPause = time.Minute

// MaxPause is the longest: a day, as the server bounds the wait a
// platform names (the account's retryAfter), so that one answer naming
// years does not keep the account from being read until a restart.
const MaxPause = 24 * time.Hour

// ProxyPause is the first pause after the platform blocked the address
// the account is read from (action use_proxy: proxy_blocked, ip_blocked).
// The remedy is the operator's proxy, or the platform lifting its block,
// not a new session: the Runner reads again when GET /proxy names
// another proxy, or after this wait, doubled for each block in a row
// through the same proxy up to MaxPause, so that a proxy whose exit
// address changes behind the same name, or a block that lifts, is
// found without asking the platform every pass.
const ProxyPause = 15 * time.Minute

// actionUseProxy is the action of an address block (core/health's
// UseProxy).
const actionUseProxy = "use_proxy"

// issueRateLimited is the issue of a rate limit (core/health's
// RateLimited). One that names no wait is paused for the server's wait
// (the view's retryAfter), doubled by the Runner for each one in a row
// up to MaxPause: facebook's "temporarily blocked" (code 368) lasts
// hours and says nothing of when it lifts, and asking again at every
// pass only prolongs it.
const issueRateLimited = "rate_limited"

// PauseFor returns the pause the view asks for after signal s, wait
// being how long the platform itself asked to wait (0 when it named
// none); nil when reading goes on.
func PauseFor(v AccountView, s Signal, wait time.Duration, now time.Time) *Paused {
	issue := ""
	if v.Issue != nil {
		issue = *v.Issue
	}
	switch {
	case v.RequiresAction && v.Action == actionUseProxy:
		// Nothing the owner uploads lifts it: a wait, which the Runner
		// ends early when the proxy changes.
		return &Paused{Platform: s.Platform, Issue: issue, Action: v.Action, Until: now.Add(min(max(wait, ProxyPause), MaxPause))}
	case v.RequiresAction:
		return &Paused{Platform: s.Platform, Issue: issue, Action: v.Action, NeedsOwner: true}
	case !s.OK() && (v.Action == "wait" || issue != ""):
		if wait <= 0 {
			// The server's wait when the platform named none: 15 minutes
			// for a rate limit (x's window), a minute after a network
			// error. A view given again for the same answer (Report sends
			// a signal once) gives it again from now.
			wait = time.Duration(min(max(v.RetryAfter, 0), int(MaxPause/time.Second))) * time.Second
		}
		return &Paused{Platform: s.Platform, Issue: issue, Action: v.Action, Until: now.Add(min(max(wait, MinPause), MaxPause))}
	}
	return nil
}

// CookieHeader returns the Cookie header of the cookies set for domain
// or its subdomains (".reddit.com" and "www.reddit.com" for
// "reddit.com"), "" for none.
func CookieHeader(jar []core.Cookie, domain string) string {
	var b strings.Builder
	for _, c := range jar {
		d := strings.ToLower(strings.TrimPrefix(c.Domain, "."))
		if d != domain && !strings.HasSuffix(d, "."+domain) {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.Name + "=" + c.Value)
	}
	return b.String()
}
