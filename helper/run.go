package helper

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/earshothq/earshot/core"
)

// maxBatchBytes keeps a batch's body under the server's 1 MB body limit,
// with room to spare: a hundred long posts can weigh more than that, and
// the unread lists a batch names count too (see batcher.flush).
const maxBatchBytes = 900 << 10

// batchEnvelope bounds what a body holds beside its posts and lists: the
// platform's name and the members' names, brackets and commas.
const batchEnvelope = 256

// Runner makes a helper's passes over its readers' platforms.
type Runner struct {
	Client  *Client
	Readers []Reader
	State   *State
	// Direct reads without the proxy: allowed only when the deployment
	// answers required: false (see PlatformClient).
	Direct bool
	Log    *slog.Logger
	Now    func() time.Time // nil: time.Now

	paused map[string]pause
}

type pause struct {
	*Paused
	jar   [32]byte // the session when it paused
	proxy [32]byte // the proxy it read through ("" when direct)
	// blocks counts the address blocks in a row through proxy, the one
	// this pause is included (see ProxyPause).
	blocks int
	// limits counts the rate limits in a row that named no wait, this
	// one included (see issueRateLimited).
	limits int
}

// Pass reads every platform once and sends what it found. It returns
// ErrNoProxy or ErrUnauthorized (wrapped) at once, as a helper must stop
// on them; otherwise the failures of the platforms joined (a *Paused
// among them for an account that waits), nil when every batch of every
// platform was accepted.
func (r *Runner) Pass(ctx context.Context) error {
	if r.paused == nil {
		r.paused = map[string]pause{}
	}
	px, err := r.Client.Proxy(ctx)
	if err != nil {
		return err
	}
	hc, via, err := PlatformClient(px, r.Direct)
	if err != nil {
		return err
	}
	var pu *url.URL
	if via {
		// PlatformClient has checked the address.
		pu, _ = url.Parse(px.Proxy.Server)
		if px.Proxy.Username != "" || px.Proxy.Password != "" {
			pu.User = url.UserPassword(px.Proxy.Username, px.Proxy.Password)
		}
	}
	defer hc.CloseIdleConnections()
	var errs []error
	for _, rd := range r.Readers {
		err := r.read(ctx, rd, hc, via, pu)
		if errors.Is(err, ErrUnauthorized) || ctx.Err() != nil {
			return err
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

func (r *Runner) read(ctx context.Context, rd Reader, hc *http.Client, via bool, proxy *url.URL) error {
	platform := rd.Platform()
	log := r.log().With("platform", platform)
	phrases, err := r.Client.Phrases(ctx, platform)
	if err != nil {
		return fmt.Errorf("%s: the phrases: %w", platform, err)
	}
	if len(phrases) == 0 {
		log.Info("no listening phrases: nothing to read")
		return nil
	}
	raw, err := r.Client.Session(ctx, platform)
	var jar []core.Cookie
	switch {
	case errors.Is(err, ErrNoSession):
		raw = nil
	case err != nil:
		return fmt.Errorf("%s: the session: %w", platform, err)
	default:
		// The jar is in the canonical form the server stores (see
		// core.EncodeCookieJar); core reads it and keeps the platform's cookies.
		if jar, err = core.ParseCookieJar(core.Platform(platform), raw); err != nil {
			return fmt.Errorf("%s: the stored session is not usable: %s; upload a new cookie jar in the dashboard", platform, core.Message(err))
		}
	}
	sum := sha256.Sum256(raw)
	var psum [32]byte
	if proxy != nil {
		psum = sha256.Sum256([]byte(proxy.String()))
	}
	blocks, limits := 0, 0
	if p, ok := r.paused[platform]; ok {
		// An address block waits for another proxy, not for its time.
		moved := p.Action == actionUseProxy && p.proxy != psum
		switch {
		case p.NeedsOwner && p.jar == sum:
			log.Warn("not read: the account needs its owner; upload a new session in the dashboard", "issue", p.Issue, "action", p.Action)
			return p.Paused
		case !p.NeedsOwner && !moved && r.now().Before(p.Until):
			log.Info("not read: the account waits", "issue", p.Issue, "until", p.Until)
			return p.Paused
		}
		if p.Action == actionUseProxy && !moved {
			blocks = p.blocks
		}
		limits = p.limits
		delete(r.paused, platform)
		// The server's view may have moved meanwhile (the owner marked a
		// challenge resolved, a rate limit's retryAfter ran out): the
		// first answer of the read is reported even when it is the one
		// that paused it.
		r.Client.forget(platform)
	}
	b := &batcher{ctx: ctx, r: r, platform: platform, marks: map[string]string{}, unread: func() []string { return nil },
		unreadPhrases: func() []string { return nil }, given: make(map[Phrase]bool, len(phrases))}
	for _, p := range phrases {
		b.given[p] = true
	}
	if u, ok := rd.(Unreader); ok {
		b.unread = u.Unread
	}
	if u, ok := rd.(PhraseUnreader); ok {
		b.unreadPhrases = u.UnreadPhrases
	}
	in := In{
		Phrases:  phrases,
		Session:  jar,
		HTTP:     hc,
		ViaProxy: via,
		Proxy:    proxy,
		Since:    r.State.Get,
		Save:     func(k, v string) error { return r.State.Set(map[string]string{k: v}) },
		Report: func(ctx context.Context, s Signal, wait time.Duration) error {
			s.Platform, s.ViaProxy = platform, via
			if !s.OK() && wait > 0 {
				s.RetryAfter = int(wait.Round(time.Second) / time.Second)
			}
			v, sent, err := r.Client.Report(ctx, s)
			if err != nil {
				return fmt.Errorf("%s: reporting the account's state: %w", platform, err)
			}
			if sent {
				log.Info("account state reported", "status", s.Status, "state", v.State, "action", v.Action)
			}
			if s.OK() {
				limits = 0 // the platform answered: the limit has lifted
			}
			now := r.now()
			p := PauseFor(v, s, wait, now)
			switch {
			case p == nil:
				return nil
			case p.Issue == issueRateLimited && !p.NeedsOwner && wait <= 0:
				// Doubled for each one in a row, as an address block is.
				if until := now.Add(min(p.Until.Sub(now)<<min(limits, 11), MaxPause)); until.After(p.Until) {
					p.Until = until
				}
				limits++
			default:
				limits = 0
			}
			return p
		},
	}
	readErr := rd.Read(ctx, in, b.add)
	// What was found before a failure is sent all the same: the posts
	// come oldest first, so their checkpoints never pass a post unsent.
	// A read that found nothing sends an empty batch, which records the
	// read of the phrases on the server. The last batch names what the
	// whole read left unread: a batch is sent only once a post follows it
	// (batcher.add), so after a batch there is always one more.
	if !b.failed && (len(b.posts) > 0 || (readErr == nil && b.sent == 0)) {
		if err := b.flush(ctx); err != nil {
			return errors.Join(readErr, err)
		}
	}
	if k, ok := rd.(Keeper); ok && readErr == nil && !b.failed {
		if err := r.State.Prune(k.Keeps(phrases, r.State.Get)); err != nil {
			log.Warn("dropping the checkpoints of phrases no longer listened to failed; the next pass tries again", "err", err)
		}
	}
	var p *Paused
	if errors.As(readErr, &p) {
		ps := pause{Paused: p, jar: sum, proxy: psum, limits: limits}
		if p.Action == actionUseProxy {
			ps.blocks = blocks + 1
			if until := r.now().Add(min(ProxyPause<<min(blocks, 7), MaxPause)); until.After(p.Until) {
				p.Until = until
			}
		}
		r.paused[platform] = ps
		log.Warn("reading paused", "issue", p.Issue, "action", p.Action, "needsOwner", p.NeedsOwner, "until", p.Until)
	}
	if readErr != nil {
		return readErr
	}
	log.Info("read", "phrases", len(phrases), "batches", b.sent, "ingested", b.ingested, "skipped", b.skipped)
	return nil
}

// batcher holds one batch of a platform's posts, and the checkpoints its
// acceptance moves.
type batcher struct {
	ctx      context.Context
	r        *Runner
	platform string
	posts    []Post
	sizes    []int // each post's share of the body, encoded
	size     int
	marks    map[string]string
	sent     int
	ingested int
	skipped  int
	// unread returns the communities the read has not read yet (see
	// Unreader), unreadPhrases the phrases it has not searched to the end
	// (see PhraseUnreader), named by each batch as it is sent.
	unread, unreadPhrases func() []string
	// failed: a flush gave up after the client's tries; the batch waits
	// for the next pass rather than a second round of tries now.
	failed bool
	// given are the phrases the read was given: a batch names the others
	// the server lists when it is sent (see added).
	given map[Phrase]bool
}

func (b *batcher) add(p Post, m Mark) error {
	enc, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if len(b.posts) == MaxBatch || (len(b.posts) > 0 && b.size+len(enc) > maxBatchBytes) {
		if err := b.flush(b.ctx); err != nil {
			return err
		}
	}
	b.posts = append(b.posts, p)
	b.sizes = append(b.sizes, len(enc)+1)
	b.size += len(enc) + 1
	if m.Key != "" {
		b.marks[m.Key] = m.Value
	}
	return nil
}

// flush sends the batch and, once it is accepted, moves its checkpoints.
// The unread lists are learnt only now and can weigh over half a
// megabyte (a thousand phrases of `<`, each written as six bytes): when
// posts and lists together pass maxBatchBytes, the posts go in parts,
// each naming the lists whole, since the server records as read every
// phrase a batch does not name. The checkpoints move once every part is
// accepted; a part that fails leaves them, and the parts already sent
// are skipped by the server when the next pass sends them again.
func (b *batcher) flush(ctx context.Context) error {
	added, err := b.added(ctx)
	if err != nil {
		b.failed = true
		return fmt.Errorf("%s: the phrases before sending %d posts: %w", b.platform, len(b.posts), err)
	}
	u := Unread{Communities: b.unread(), Phrases: append(added, b.unreadPhrases()...)}
	u.Communities = u.Communities[:min(len(u.Communities), core.MaxUnreadCommunities)]
	u.Phrases = u.Phrases[:min(len(u.Phrases), core.MaxUnreadPhrases)]
	room := maxBatchBytes - batchEnvelope - encodedLen(u.Communities) - encodedLen(u.Phrases)
	for start := 0; ; {
		// At least one post a part: the lists alone are at most some
		// 630 KB (a thousand phrases of core.MaxPhraseLen characters, a
		// thousand subreddit names) and one post a few tens of KB.
		end, size := start, 0
		for end < len(b.posts) && (end == start || size+b.sizes[end] <= room) {
			size += b.sizes[end]
			end++
		}
		part := b.posts[start:end]
		res, err := b.r.Client.IngestBatch(ctx, b.platform, part, u)
		if err != nil {
			b.failed = true
			return fmt.Errorf("%s: sending %d posts: %w", b.platform, len(part), err)
		}
		b.sent++
		b.ingested += res.Ingested
		b.skipped += res.Skipped
		if start = end; start >= len(b.posts) {
			break // an empty batch (a read that found nothing) is one part
		}
	}
	if err := b.r.State.Set(b.marks); err != nil {
		return fmt.Errorf("%s: the batch was accepted but its checkpoints were not saved (it will be sent again): %w", b.platform, err)
	}
	clear(b.marks)
	b.posts, b.sizes, b.size = b.posts[:0], b.sizes[:0], 0
	return nil
}

// encodedLen is the length of texts as the body writes them: json.Marshal
// escapes `<`, `>` and `&` as six bytes and writes CJK as three.
func encodedLen(texts []string) int {
	if len(texts) == 0 {
		return 0
	}
	enc, err := json.Marshal(texts)
	if err != nil {
		return maxBatchBytes // strings always encode; never reached
	}
	return len(enc)
}

// added returns the texts of the phrases the server lists now that the
// read was not given: added, resumed, or moved to another community
// while the pass read. The server records as read every listening
// phrase a batch does not name, so unnamed they would show a read that
// never happened. A text names the phrase in every community, so a
// phrase moved to another one keeps its lastCheckedAt in its old one
// too, until the next pass.
func (b *batcher) added(ctx context.Context) ([]string, error) {
	now, err := b.r.Client.Phrases(ctx, b.platform)
	if err != nil {
		return nil, err
	}
	var out []string
	named := map[string]bool{}
	for _, p := range now {
		if !b.given[p] && !named[p.Phrase] {
			named[p.Phrase] = true
			out = append(out, p.Phrase)
		}
	}
	return out, nil
}
