package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
	"github.com/earshothq/earshot/ports"
)

// The window's defaults and bounds.
const (
	DefaultRecentDays  = 7
	DefaultRecentPosts = 1_000_000 // per owner
	// DefaultWindowSweep is how often the window is indexed and trimmed,
	// and phrases waiting to be filled from it are looked for; a phrase
	// added wakes the sweep at once.
	DefaultWindowSweep = 10 * time.Second
	// MaxWindowReads bounds the posts of the window one preview or one
	// backfill reads, and MaxMatchReads the matches of a phrase one
	// preview or one application of its filters reads.
	MaxWindowReads = 20_000
	MaxMatchReads  = 50_000
	// PreviewShown is how many posts or matches a preview shows.
	PreviewShown = 20
	// MaxBackfill is the most matches a phrase is filled with.
	MaxBackfill = 1000
	// DefaultBackfillsPerMinute is how many phrases of one owner are
	// filled in a minute; more wait for the next minutes.
	DefaultBackfillsPerMinute = 10

	trimBatch  = 1000 // posts one trim statement deletes at most
	indexBatch = 2000 // posts one index step adds
	// indexSteps bounds the index steps of one sweep, so a backlog of
	// posts to index does not hold up the phrases waiting to be filled.
	indexSteps = 25
)

// WindowConfig bounds the window of recent posts. Either bound 0 turns
// the window off: nothing is kept, previewed or filled from it.
type WindowConfig struct {
	Days  int // how long a post is kept
	Posts int // the most posts kept per owner
	Sweep time.Duration
	// BackfillsPerMinute bounds the phrases of one owner filled in a
	// minute; 0 means DefaultBackfillsPerMinute.
	BackfillsPerMinute int
	// Reads bounds the posts of the window a preview or backfill reads;
	// 0 means MaxWindowReads.
	Reads int
	// MatchReads bounds the matches of a phrase a preview or an
	// application of its filters reads; 0 means MaxMatchReads.
	MatchReads int
}

// On reports whether the window keeps posts.
func (c WindowConfig) On() bool { return c.Days > 0 && c.Posts > 0 }

// WindowDeps are the ports the window uses.
type WindowDeps struct {
	Recent   ports.RecentStore
	Archives ports.FilterArchiveStore
	Phrases  ports.PhraseStore
	// Publisher announces the matches a backfill stores, for scoring; nil
	// leaves them to the scoring sweep.
	Publisher ports.Publisher
	// Limiter counts each owner's backfills; nil counts none.
	Limiter ports.RateLimiter
	// Leases let one replica at a time index and trim the window, and
	// fill a phrase; nil: this process does all whenever it sweeps.
	Leases  ports.LeaseStore
	Holder  string
	Clock   ports.Clock
	Log     *slog.Logger
	Metrics ports.Metrics
}

// Window keeps each owner's recent posts for a bounded time and number,
// and uses them: to preview what a phrase or a change of its filters
// would match, to fill a new phrase with what it would have matched, and
// to archive the matches a phrase's filters now drop.
type Window struct {
	d    WindowDeps
	cfg  WindowConfig
	wake chan struct{}
	// applying holds the phrases whose filters this process is applying:
	// a second application at once would replace the first's set with
	// the empty one it archives, leaving the first's matches no undo.
	applying sync.Map
}

// NewWindow returns the window service.
func NewWindow(d WindowDeps, cfg WindowConfig) *Window {
	d.Clock, d.Log, d.Metrics = orSystemClock(d.Clock), orDefaultLog(d.Log), orNoMetrics(d.Metrics)
	if cfg.Sweep <= 0 {
		cfg.Sweep = DefaultWindowSweep
	}
	if cfg.BackfillsPerMinute <= 0 {
		cfg.BackfillsPerMinute = DefaultBackfillsPerMinute
	}
	if cfg.Reads <= 0 {
		cfg.Reads = MaxWindowReads
	}
	if cfg.MatchReads <= 0 {
		cfg.MatchReads = MaxMatchReads
	}
	return &Window{d: d, cfg: cfg, wake: make(chan struct{}, 1)}
}

// Bounds returns how many days and how many posts per owner the window
// keeps; both 0 when it is off.
func (w *Window) Bounds() (days, posts int) {
	if !w.cfg.On() {
		return 0, 0
	}
	return w.cfg.Days, w.cfg.Posts
}

// keeper returns what a batch keeps of each of its posts, seen on the
// owner's behalf now, by the post's community: nil for every post when
// the window is off (w may be nil). Ingest writes the posts alone, one
// statement for the posts of a community seen at one time; their words
// join the text index at the next sweep (Index).
func (w *Window) keeper() func(community string) *ports.RecentKeep {
	if w == nil || !w.cfg.On() {
		return func(string) *ports.RecentKeep { return nil }
	}
	now := w.d.Clock.Now()
	var last *ports.RecentKeep
	return func(community string) *ports.RecentKeep {
		if last == nil || last.Community != community {
			last = &ports.RecentKeep{Community: community, SeenAt: now}
		}
		return last
	}
}

// withBounds is k for a helper's post of several body parts, with where
// they begin, so the window's readers search them apart as matching did;
// k itself when the window is off (nil) or the post has one part.
func withBounds(k *ports.RecentKeep, ip core.IngestPost) *ports.RecentKeep {
	if k == nil {
		return nil
	}
	b := ip.Bounds()
	if b == "" {
		return k
	}
	c := *k
	c.Bounds = b
	return &c
}

// wordsOf are the words of a kept post as the text index holds them:
// its title's and its text's as kept, as the matcher cuts them. Its
// parts' words run on from one to the next, so the index may pass a post
// whose phrase runs across two; find then matches part by part.
func wordsOf(p core.Post) string {
	return string(match.AppendWords(match.AppendWords(nil, p.Title), p.Text))
}

// Added asks for p, a phrase just added, to be filled from its owner's
// window, and wakes the sweep. The request is kept in the database, so a
// restart, or a sweep on another replica, fills it too. A failure is
// logged: the phrase listens from now on all the same.
func (w *Window) Added(ctx context.Context, p core.Phrase) {
	if !w.cfg.On() {
		return
	}
	// The phrase is stored: a caller that goes away now must not cost it
	// its fill, which a replay of the request would not ask for again.
	if err := w.d.Recent.RequestBackfill(context.WithoutCancel(ctx), p.ID, w.d.Clock.Now()); err != nil {
		w.d.Log.WarnContext(ctx, "asking to fill a new phrase from the window failed", "phrase", p.ID, "err", err)
		return
	}
	w.Poke()
}

// Poke wakes the sweep.
func (w *Window) Poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run sweeps at start, every cfg.Sweep, and whenever a phrase is added,
// until ctx ends.
func (w *Window) Run(ctx context.Context) {
	if !w.cfg.On() {
		return
	}
	sweep := func() {
		if err := w.Sweep(ctx); err != nil && ctx.Err() == nil {
			w.d.Log.WarnContext(ctx, "sweeping the window of recent posts failed", "err", err)
		}
	}
	sweep()
	every(ctx, w.cfg.Sweep, w.wake, sweep)
}

// Sweep fills the phrases waiting for it, then indexes the posts kept
// since the last sweep, then trims the window: the posts seen more than
// cfg.Days ago, and each owner's oldest beyond cfg.Posts.
func (w *Window) Sweep(ctx context.Context) error {
	if err := w.Backfill(ctx); err != nil {
		return err
	}
	if _, err := w.Index(ctx); err != nil {
		return err
	}
	_, err := w.Trim(ctx)
	return err
}

// upkeep reports whether this process indexes and trims the window now:
// of several replicas, the one holding the lease does.
func (w *Window) upkeep(ctx context.Context) (bool, error) {
	if w.d.Leases == nil {
		return true, nil
	}
	return w.d.Leases.Acquire(ctx, "window:upkeep", w.d.Holder, w.cfg.Sweep)
}

// Index adds the posts kept since the last sweep to the text index, a
// batch at a time, at most indexSteps batches, and returns how many.
func (w *Window) Index(ctx context.Context) (int, error) {
	if ok, err := w.upkeep(ctx); err != nil || !ok {
		return 0, err
	}
	total := 0
	for range indexSteps {
		ps, err := w.d.Recent.Unindexed(ctx, indexBatch)
		if err != nil || len(ps) == 0 {
			return total, err
		}
		words := make([]ports.RecentWords, len(ps))
		for i, p := range ps {
			words[i] = ports.RecentWords{Seq: p.Seq, Words: wordsOf(p.Post)}
		}
		if err := w.d.Recent.IndexRecent(ctx, words); err != nil {
			return total, err
		}
		total += len(ps)
		if len(ps) < indexBatch {
			break
		}
	}
	return total, nil
}

// Trim deletes what the window holds beyond its bounds, a batch at a
// time, and returns how many posts it deleted.
func (w *Window) Trim(ctx context.Context) (int, error) {
	if ok, err := w.upkeep(ctx); err != nil || !ok {
		return 0, err
	}
	before := w.d.Clock.Now().Add(-time.Duration(w.cfg.Days) * 24 * time.Hour)
	total := 0
	for ctx.Err() == nil {
		n, err := w.d.Recent.TrimRecent(ctx, before, w.cfg.Posts, trimBatch)
		total += n
		if err != nil || n < trimBatch {
			return total, err
		}
	}
	return total, ctx.Err()
}

// Backfill fills the phrases waiting for it, each owner's within its
// rate: a phrase over it waits for a later sweep. It reads no more of an
// owner's than its rate lets fill, so one owner's many waiting phrases
// do not crowd another's out of the read.
func (w *Window) Backfill(ctx context.Context) error {
	ps, err := w.d.Recent.Backfills(ctx, w.cfg.BackfillsPerMinute, 50)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p.Status != core.Listening {
			if err := w.d.Recent.EndBackfill(ctx, p.ID); err != nil {
				return err
			}
			continue
		}
		if err := w.fillOnce(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// fillOnce fills p unless another replica is filling it or its owner's
// backfills are over their rate. A fill that fails is logged and left
// for the next sweep.
func (w *Window) fillOnce(ctx context.Context, p core.Phrase) error {
	if w.d.Leases != nil {
		lease := "backfill:" + p.ID
		ok, err := w.d.Leases.Acquire(ctx, lease, w.d.Holder, time.Minute)
		if err != nil || !ok {
			return err
		}
		defer func() { _ = w.d.Leases.Release(context.WithoutCancel(ctx), lease, w.d.Holder) }()
	}
	if w.d.Limiter != nil {
		q, err := w.d.Limiter.Take(ctx, "backfill:"+p.OwnerID, w.cfg.BackfillsPerMinute)
		if err != nil || !q.Allowed {
			return err
		}
	}
	if err := w.fill(ctx, p); err != nil {
		w.d.Log.WarnContext(ctx, "filling a phrase from the window failed; the next sweep tries again", "phrase", p.ID, "err", err)
	}
	return nil
}

// fill stores p's matches among its owner's window, the newest
// MaxBackfill it does not hold yet, and announces them for scoring.
// The posts p matched live since its add are passed over as they are
// read: SaveBackfill would drop them, and counted among the newest they
// would leave older matches of the window out. p holds nothing but
// those, so its newest cfg.Reads matches, as many as the window's posts
// read, cover them; any missed SaveBackfill still drops.
func (w *Window) fill(ctx context.Context, p core.Phrase) error {
	held := map[string]bool{}
	if _, err := w.d.Archives.PhraseMatches(ctx, p.OwnerID, p.ID, w.cfg.Reads, false, func(m core.Match, _ bool) bool {
		held[m.Post.ExternalID] = true
		return true
	}); err != nil {
		return err
	}
	var posts []core.RecentPost
	if _, err := w.find(ctx, p, func(rp core.RecentPost) bool {
		if held[rp.Post.ExternalID] {
			return true
		}
		posts = append(posts, rp)
		return len(posts) < MaxBackfill
	}); err != nil {
		return err
	}
	ms, err := w.d.Recent.SaveBackfill(ctx, p, posts)
	if err != nil {
		return err
	}
	announce(ctx, w.d.Publisher, w.d.Log, ms)
	w.d.Metrics.Count(ports.EventMatchesCreated, len(ms))
	if len(ms) > 0 {
		w.d.Log.InfoContext(ctx, "a new phrase was filled from the window", "phrase", p.ID, "matches", len(ms))
	}
	return nil
}

// add counts a find and keeps it among the first shown.
func add[T any](f *ports.Finds[T], v T) {
	f.Count++
	if len(f.First) < PreviewShown {
		f.First = append(f.First, v)
	}
}

// Preview tries a phrase on its owner's window before it is added: the
// same checks as Phrases.AddWithFilters (KindInvalid), then what it
// would have matched, as matching would (the matcher and the filters'
// rules, in core) on each post as kept. Nothing is stored.
func (w *Window) Preview(ctx context.Context, ownerID, phrase, platform, community string, f core.PhraseFilters) (ports.Preview, error) {
	p, err := core.NewPhrase(ownerID, phrase, platform, community)
	if err != nil {
		return ports.Preview{}, err
	}
	if p.Filters, err = core.NewPhraseFilters(f); err != nil {
		return ports.Preview{}, err
	}
	return w.preview(ctx, p, false)
}

// PreviewChange tries a change of a phrase's filters (ch, checked as
// Phrases.Update checks it): what the phrase would have matched in the
// window with them, and which of its matches they drop. A change that
// changes nothing previews the filters it has. KindNotFound, KindInvalid.
func (w *Window) PreviewChange(ctx context.Context, ownerID, phraseID string, ch core.PhraseFiltersChange) (ports.Preview, error) {
	p, err := w.d.Phrases.Phrase(ctx, ownerID, phraseID)
	if err != nil {
		return ports.Preview{}, err
	}
	if ch, err = ch.Check(); err != nil {
		return ports.Preview{}, err
	}
	p.Filters = p.Filters.With(ch)
	return w.preview(ctx, p, true)
}

func (w *Window) preview(ctx context.Context, p core.Phrase, existing bool) (ports.Preview, error) {
	out := ports.Preview{Phrase: p, Existing: existing}
	if w.cfg.On() {
		out.Days, out.Posts = w.cfg.Days, w.cfg.Posts
		read, err := w.find(ctx, p, func(rp core.RecentPost) bool { add(&out.Window, rp); return true })
		if err != nil {
			return ports.Preview{}, err
		}
		out.Window.Read, out.Window.Partial = read.n, read.more
	}
	if existing {
		var err error
		if out.Dropped, out.Archivable, err = w.dropped(ctx, p, false, nil); err != nil {
			return ports.Preview{}, err
		}
	}
	return out, nil
}

type reads struct {
	n    int
	more bool
}

// find calls each with the posts of p's owner's window that p matches,
// newest first, until each returns false, reading at most cfg.Reads
// posts. The store narrows the posts by p's words; each is then matched
// as ingest matches it, its body parts apart (RecentPost.Body), so what
// find passes is exactly what matching would have made of the posts read.
func (w *Window) find(ctx context.Context, p core.Phrase, each func(core.RecentPost) bool) (reads, error) {
	c := Compile([]core.Phrase{p})
	var r reads
	var err error
	r.more, err = w.d.Recent.RecentPosts(ctx, ports.RecentQuery{OwnerID: p.OwnerID, Platform: p.Platform, Community: p.Community,
		Words: match.Words(p.Phrase), Limit: w.cfg.Reads}, func(rp core.RecentPost) bool {
		r.n++
		if len(c.Match(rp.Post, rp.Community, rp.Post.Title, rp.Body()...)) == 0 {
			return true
		}
		return each(rp)
	})
	return r, err
}

// dropped reads p's matches, newest first, at most cfg.MatchReads, and
// returns those p's filters would not have made, how many of them are
// not archived, and, when ids is not nil, their ids into it. With
// unarchived it reads only those not archived, so its bound counts the
// matches an application judges and applying again goes on past the
// ones archived before; a preview reads the archived ones too, as the
// owner sees them among the phrase's matches.
//
// A match's post is stored with its text cut at core.MaxPostText, where
// the phrase may have been found further on: each is checked with the
// phrase added as a part of its own, so the phrase is found as it was
// and the filters alone decide. The phrase brings no word the post
// lacked: the post held it.
func (w *Window) dropped(ctx context.Context, p core.Phrase, unarchived bool, ids *[]string) (ports.Finds[core.Match], int, error) {
	c := Compile([]core.Phrase{p})
	var out ports.Finds[core.Match]
	archivable := 0
	more, err := w.d.Archives.PhraseMatches(ctx, p.OwnerID, p.ID, w.cfg.MatchReads, unarchived, func(m core.Match, archived bool) bool {
		out.Read++
		if len(c.Match(m.Post, p.Community, m.Post.Title, m.Post.Text, p.Phrase)) > 0 {
			return true
		}
		add(&out, m)
		if !archived {
			archivable++
			if ids != nil {
				*ids = append(*ids, m.ID)
			}
		}
		return true
	})
	out.Partial = more
	return out, archivable, err
}

// ApplyFilters archives, in one step, the phrase's matches its filters
// now drop, among its newest cfg.MatchReads that are not archived, as a
// set UndoApply restores. One application of a phrase runs at a time, of
// all replicas: another at once is KindConflict. KindNotFound.
func (w *Window) ApplyFilters(ctx context.Context, ownerID, phraseID string) (ports.Applied, error) {
	p, err := w.d.Phrases.Phrase(ctx, ownerID, phraseID)
	if err != nil {
		return ports.Applied{}, err
	}
	busy := core.Errorf(core.KindConflict, "this phrase's filters are being applied already; try again when that is done")
	if _, on := w.applying.LoadOrStore(p.ID, true); on {
		return ports.Applied{}, busy
	}
	defer w.applying.Delete(p.ID)
	if w.d.Leases != nil {
		lease := "apply-filters:" + p.ID
		held, err := w.d.Leases.Acquire(ctx, lease, w.d.Holder, time.Minute)
		if err != nil {
			return ports.Applied{}, err
		}
		if !held {
			return ports.Applied{}, busy
		}
		defer func() { _ = w.d.Leases.Release(context.WithoutCancel(ctx), lease, w.d.Holder) }()
	}
	var ids []string
	found, _, err := w.dropped(ctx, p, true, &ids)
	if err != nil {
		return ports.Applied{}, err
	}
	out := ports.Applied{Read: found.Read, Partial: found.Partial}
	if len(ids) == 0 {
		return out, nil
	}
	// The read may have outlasted the lease, and another replica taken
	// it and read since: archiving now would let one set replace the
	// other's, whose matches would keep no undo. Renewing it (the holder
	// may) before the one write gives that write a minute of its own, or
	// finds the other holds it and archives nothing.
	if w.d.Leases != nil {
		held, err := w.d.Leases.Acquire(ctx, "apply-filters:"+p.ID, w.d.Holder, time.Minute)
		if err != nil {
			return ports.Applied{}, err
		}
		if !held {
			return ports.Applied{}, busy
		}
	}
	out.Set, err = w.d.Archives.ArchiveSet(ctx, ownerID, phraseID, ids, w.d.Clock.Now())
	return out, err
}

// LastApplied returns the phrase's last set archived by applying its
// filters, not undone. KindNotFound when there is none.
func (w *Window) LastApplied(ctx context.Context, ownerID, phraseID string) (core.ArchiveSet, error) {
	return w.d.Archives.LatestArchiveSet(ctx, ownerID, phraseID)
}

// UndoApply unarchives the matches of the phrase's set setID that are
// archived still and returns how many. KindNotFound for a set that is
// not the phrase's last, not the owner's, or undone.
func (w *Window) UndoApply(ctx context.Context, ownerID, phraseID, setID string) (int, error) {
	last, err := w.d.Archives.LatestArchiveSet(ctx, ownerID, phraseID)
	if err != nil {
		return 0, err
	}
	if last.ID != setID {
		return 0, core.Errorf(core.KindNotFound, "archived set not found")
	}
	return w.d.Archives.RestoreArchiveSet(ctx, ownerID, setID)
}
