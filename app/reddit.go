package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// maxLookback bounds how far back a read reaches when a community was last
// read long ago (a long outage, or a community watched again after a
// pause). Reddit's listings end near 1,000 items anyway.
const maxLookback = 24 * time.Hour

// DefaultRedditOverlap is how far each read reaches back before the
// checkpoint: posts reach a listing late sometimes (spam filter, a
// moderator's approval), and a late post made before the previous read is
// still matched when it appears within this margin. Posts already stored
// are known by fullname and skipped.
const DefaultRedditOverlap = 5 * time.Minute

// Reddit reads every community that a listening reddit phrase watches,
// both listings of each, and stores the posts that contain a phrase as
// matches for each owner of such a phrase. Quiet communities are read
// together in one request; a community's checkpoint per listing moves only
// over what a read covered.
type Reddit struct {
	phrases     ports.ListeningStore
	matches     ports.MatchStore
	source      ports.RedditSource
	checkpoints ports.RedditStore
	leases      ports.LeaseStore
	pub         ports.Publisher
	log         *slog.Logger
	holder      string
	clock       ports.Clock
	metrics     ports.Metrics
	sources     ports.SourceMetrics
	overlap     time.Duration
	window      *Window

	maxGroup int // communities a read takes at most; 0: ports.MaxRedditGroup

	// quietMu guards quietSince: per community, since when the group
	// reads reddit answered held none of its items (see silentFor).
	quietMu    sync.Mutex
	quietSince map[string]time.Time
}

// silentFor is how long group reads that reddit answered may hold none of
// a community's posts or comments before its posts are read alone once,
// to check it. Reddit answers a group (/r/a+b+c) without the items of a
// member it will not show (private, banned, unknown) and says nothing of
// it; read alone, such a member is refused, and named. A day of silence in
// both listings is rare for a community anyone watches, so a readable
// quiet one costs one request more a day, never one a cycle. Kept in
// memory: a restart starts the day again.
const silentFor = 24 * time.Hour

// RedditDeps are the ports the reddit poller uses, and the settings that
// name this process and reach back.
type RedditDeps struct {
	Phrases     ports.ListeningStore
	Matches     ports.MatchStore
	Source      ports.RedditSource
	Checkpoints ports.RedditStore
	Leases      ports.LeaseStore
	Publisher   ports.Publisher // may be nil: matches are found by the scoring sweep
	Clock       ports.Clock
	Log         *slog.Logger
	Metrics     ports.Metrics       // counts reads and matches; nil counts nothing
	Sources     ports.SourceMetrics // counts reads by the way reddit answered; nil counts nothing
	// Holder names this process in leases, so replicas on one database
	// split the communities of a cycle.
	Holder string
	// Overlap is how far each read reaches back before the checkpoint;
	// 0 means DefaultRedditOverlap, a negative value none.
	Overlap time.Duration
	// Window keeps every post read in the window of recent posts of each
	// owner watching its community; nil keeps none.
	Window *Window
}

// NewReddit returns the reddit poller.
func NewReddit(d RedditDeps) *Reddit {
	if d.Sources == nil {
		d.Sources = ports.NoMetrics{}
	}
	if d.Overlap == 0 {
		d.Overlap = DefaultRedditOverlap
	}
	return &Reddit{phrases: d.Phrases, matches: d.Matches, source: d.Source, checkpoints: d.Checkpoints, leases: d.Leases,
		pub: d.Publisher, clock: orSystemClock(d.Clock), log: orDefaultLog(d.Log), holder: d.Holder,
		metrics: orNoMetrics(d.Metrics), sources: d.Sources, overlap: max(d.Overlap, 0), window: d.Window}
}

// RedditCycle tells what one cycle did.
type RedditCycle struct {
	Communities int // watched communities this replica took this cycle
	Read        int // of them, read whole in both listings
	Reads       int // reads made (a read is one listing of one group)
	Requests    int // requests to reddit
	Deferred    int // reads left for the next cycle: reddit's budget was spent
	Failed      int // reads that failed
}

// community is what a cycle knows of one watched community.
type community struct {
	name    string
	phrases []core.Phrase
	set     *Compiled // compiled on first use
	cps     map[ports.RedditListing]*ports.RedditCheckpoint
	whole   int  // listings read whole this cycle
	check   bool // silent for silentFor in group reads: its posts are read alone
}

// Cycle reads each watched community's two listings, quiet ones together.
// A community another replica holds this cycle is left to it. A read
// reddit's budget cannot fit before the cycle ends is left for the next
// cycle, which reads the oldest checkpoints first; a read that fails keeps
// the checkpoint, so the next read covers the gap.
func (r *Reddit) Cycle(ctx context.Context, interval time.Duration) (RedditCycle, error) {
	var st RedditCycle
	start := r.clock.Now()
	ps, err := r.phrases.ListeningPhrases(ctx, core.Reddit)
	if err != nil {
		return st, err
	}
	stored, err := r.checkpoints.RedditCheckpoints(ctx)
	if err != nil {
		return st, err
	}
	byName := map[string]*community{}
	var names []string
	for _, p := range ps {
		c := byName[p.Community]
		if c == nil {
			c = &community{name: p.Community, cps: map[ports.RedditListing]*ports.RedditCheckpoint{}}
			byName[p.Community] = c
			names = append(names, p.Community)
		}
		c.phrases = append(c.phrases, p)
	}
	for i := range stored {
		if c := byName[stored[i].Community]; c != nil {
			c.cps[stored[i].Listing] = &stored[i]
		}
	}
	var mine []*community
	for _, name := range names {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		// The lease covers most of the cycle, so a replica starting later
		// in the same cycle does not read the community again.
		ok, err := r.leases.Acquire(ctx, "reddit:"+name, r.holder, interval*9/10)
		if err != nil {
			return st, err
		}
		if ok {
			mine = append(mine, byName[name])
		}
	}
	st.Communities = len(mine)
	r.markSilent(byName, mine, start)

	// A listing never read starts from its community's oldest phrase's
	// last check (its creation, or the last read before checkpoints were
	// kept), stored before any read: a read of the other listing moves
	// the phrases' lastCheckedAt, which must not move this one.
	var fresh []ports.RedditCheckpoint
	for _, c := range mine {
		for _, l := range ports.RedditListings {
			if cp := r.checkpoint(c, l); cp.Until.IsZero() {
				cp.Until = start
				for _, p := range c.phrases {
					if p.LastCheckedAt.Before(cp.Until) {
						cp.Until = p.LastCheckedAt
					}
				}
				fresh = append(fresh, *cp)
			}
		}
	}
	if err := r.checkpoints.SaveRedditCheckpoints(ctx, fresh); err != nil {
		return st, err
	}
	var groups []plannedRead
	for _, l := range ports.RedditListings {
		items := make([]planItem, 0, len(mine))
		for _, c := range mine {
			items = append(items, r.planItem(c, l, start))
		}
		for _, g := range planGroups(items, start, groupTarget, r.maxGroup) {
			groups = append(groups, plannedRead{listing: l, group: g})
		}
	}
	// Oldest checkpoints first, whichever listing: what waited last cycle
	// goes first in this one.
	slices.SortStableFunc(groups, func(a, b plannedRead) int { return a.group.since.Compare(b.group.since) })
	deadline := start.Add(interval * 9 / 10)
	for i, g := range groups {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		deferred, err := r.read(ctx, g, byName, deadline, &st)
		if err != nil {
			return st, err
		}
		if deferred {
			st.Deferred = len(groups) - i
			r.log.InfoContext(ctx, "reddit's budget is spent for this cycle; the rest go first in the next",
				"reads_left", st.Deferred)
			break
		}
	}
	for _, c := range mine {
		if c.whole == len(ports.RedditListings) {
			st.Read++
		}
	}
	return st, nil
}

type plannedRead struct {
	listing ports.RedditListing
	group   planGroup
}

// planItem is what the planner needs of one listing of c: from when it
// is wanted and how busy it is.
func (r *Reddit) planItem(c *community, l ports.RedditListing, now time.Time) planItem {
	it := planItem{community: c.name, rate: -1}
	cp := c.cps[l] // set for every listing by Cycle
	since := cp.Until
	if !cp.LastReadAt.IsZero() && cp.LastReadAt.After(now.Add(-maxLookback)) {
		it.rate = cp.Rate
	}
	// A community reddit said does not exist, or refused as closed, is
	// read alone, so its neighbours in a group are not held up by it.
	it.solo = (cp.LastError == errNoCommunity || strings.HasPrefix(cp.LastError, errClosed)) && cp.LastErrorAt.Equal(cp.LastReadAt)
	// One listing read alone is enough to check a silent community.
	it.solo = it.solo || (c.check && l == ports.RedditPosts)
	it.since = maxTime(since.Add(-r.overlap), now.Add(-maxLookback))
	return it
}

// errNoCommunity is the last error of a community reddit says does not
// exist.
const errNoCommunity = "reddit says no such community"

// errClosed begins the last error of a community reddit refuses to be
// read (private, quarantined, ...); its reason follows.
const errClosed = "reddit says the community is "

// read makes one planned read, stores its matches and moves the
// checkpoints of what it covered. deferred is true when reddit's budget
// allows the read only after the deadline.
func (r *Reddit) read(ctx context.Context, g plannedRead, byName map[string]*community, deadline time.Time, st *RedditCycle) (deferred bool, err error) {
	want := make([]ports.RedditWant, len(g.group.items))
	for i, it := range g.group.items {
		want[i] = ports.RedditWant{Community: it.community, Since: it.since}
	}
	read, rerr := r.source.Read(ctx, ports.RedditQuery{Listing: g.listing, Want: want, Deadline: deadline})
	now := r.clock.Now()
	st.Requests += read.Requests
	if rerr != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if core.IsKind(rerr, core.KindRateLimited) {
			// Left for a later slot, yet the ways asked before the
			// budget stopped it did fail.
			r.countRefused(read.Refused)
			return true, nil
		}
		st.Reads++
		st.Failed++
		// Each community keeps why, without the names of the others it
		// was read with.
		msg := refusals(read.Refused)
		switch {
		case core.IsKind(rerr, core.KindNotFound):
			// Reddit's own words after the communities' names: no such
			// community, or one closed to reading (private, ...).
			msg = errNoCommunity
			if _, says, ok := strings.Cut(core.Message(rerr), ": "); ok && strings.HasPrefix(says, errClosed) {
				msg = says
			}
		case msg == "":
			msg = core.Message(rerr)
		}
		r.countRefused(read.Refused)
		r.metrics.Count(ports.EventRedditFailed, len(want))
		r.log.WarnContext(ctx, "reddit read failed; the checkpoints stay", "listing", g.listing, "communities", len(want), "err", msg)
		cps := make([]ports.RedditCheckpoint, 0, len(want))
		for _, w := range want {
			cp := r.checkpoint(byName[w.Community], g.listing)
			cp.LastReadAt, cp.LastError, cp.LastErrorAt = now, msg, now
			cps = append(cps, *cp)
		}
		return false, r.checkpoints.SaveRedditCheckpoints(ctx, cps)
	}
	st.Reads++
	r.heard(read, len(want) > 1, now)
	r.countRefused(read.Refused)
	r.sources.CountRead(read.Via, true)
	if read.Remaining >= 0 {
		r.sources.SetRemaining(read.Via, read.Remaining)
	}
	if err := r.store(ctx, read.Posts, byName); err != nil {
		return false, err
	}

	refused := refusals(read.Refused)
	since := make(map[string]time.Time, len(want))
	for _, w := range want {
		since[w.Community] = w.Since
	}
	cps := make([]ports.RedditCheckpoint, 0, len(read.Covered))
	var checked []string
	covered := 0
	for _, cv := range read.Covered {
		c := byName[cv.Community]
		if c == nil {
			continue
		}
		covered++
		cp := r.checkpoint(c, g.listing)
		// A listing never answered has no estimate yet: its checkpoint is
		// stored before any read, so Until no longer tells.
		measured := !cp.LastSuccessAt.IsZero()
		cp.LastVia, cp.LastReadAt, cp.LastSuccessAt = read.Via, now, now
		if refused != "" {
			cp.LastError, cp.LastErrorAt = refused, now
		}
		if lag, ok := read.ArchiveLag[cv.Community]; ok {
			cp.ArchiveLag = lag
		}
		from := since[cv.Community]
		if !cv.Complete {
			from = cv.From
		}
		if span := cv.Until.Sub(from); span >= time.Minute {
			obs := float64(cv.Posts) / span.Hours()
			if cp.Rate <= 0 && !measured {
				cp.Rate = obs
			} else {
				cp.Rate = (cp.Rate + obs) / 2
			}
		}
		switch {
		case cv.Complete:
			cp.Until = later(cp.Until, cv.Until)
			c.whole++
			for _, p := range c.phrases {
				checked = append(checked, p.ID)
			}
		case len(want) == 1 && read.Source == core.SourceReddit:
			// Alone and still short of the checkpoint: the community is
			// busier than reddit's listing reaches back. What lies
			// between cannot be read from reddit; say so and go on,
			// rather than read the same newest pages every cycle. The
			// archive has no such cap (it reads oldest first from the
			// checkpoint): should it still come back short, the
			// checkpoint stays, as moving it would pass over what it
			// holds.
			cp.LastError = fmt.Sprintf("posts between %s and %s could not be read: the listing ends before them",
				since[cv.Community].UTC().Format(time.RFC3339), cv.From.UTC().Format(time.RFC3339))
			cp.LastErrorAt = now
			cp.Until = later(cp.Until, cv.Until)
			c.whole++
			for _, p := range c.phrases {
				checked = append(checked, p.ID)
			}
		}
		// Otherwise the checkpoint stays and the higher rate splits the
		// group at the next plan.
		cps = append(cps, *cp)
	}
	r.metrics.Count(ports.EventRedditReads, covered)
	if err := r.checkpoints.SaveRedditCheckpoints(ctx, cps); err != nil {
		return false, err
	}
	if len(checked) > 0 {
		if err := r.phrases.MarkChecked(ctx, checked, read.Source, now); err != nil {
			return false, err
		}
	}
	return false, nil
}

// markSilent sets check on each of mine that group reads reddit answered
// held nothing of for silentFor, and forgets communities no longer
// watched, so the memory stays as large as the watched set.
func (r *Reddit) markSilent(byName map[string]*community, mine []*community, now time.Time) {
	r.quietMu.Lock()
	defer r.quietMu.Unlock()
	for name := range r.quietSince {
		if byName[name] == nil {
			delete(r.quietSince, name)
		}
	}
	for _, c := range mine {
		if t, ok := r.quietSince[c.name]; ok && now.Sub(t) >= silentFor {
			c.check = true
		}
	}
}

// heard takes in a read reddit answered: a community of it starts its
// silence at its first read, and starts it again whenever the read held
// an item of it, or read it alone (reddit refuses a member it will not
// show when it is read alone, so an answer says it is readable). The
// archive answers one community at a time and says nothing of reddit's
// groups.
func (r *Reddit) heard(read ports.RedditRead, group bool, now time.Time) {
	if read.Via == ports.RedditViaArchive {
		return
	}
	r.quietMu.Lock()
	defer r.quietMu.Unlock()
	if r.quietSince == nil {
		r.quietSince = map[string]time.Time{}
	}
	for _, cv := range read.Covered {
		if _, ok := r.quietSince[cv.Community]; !ok || cv.Posts > 0 || !group {
			r.quietSince[cv.Community] = now
		}
	}
}

// countRefused counts a failed read for each way of rs that was asked.
// A way that rests sends nothing: counted, it would show reddit failing
// every read of its rest while it is only left alone (the status still
// names the rest and its reason).
func (r *Reddit) countRefused(rs []ports.RedditRefusal) {
	for _, rf := range rs {
		if !rf.NotAsked {
			r.sources.CountRead(rf.Via, false)
		}
	}
}

// refusals says briefly which ways refused and why ("json: http 403,
// feed: http 403").
func refusals(rs []ports.RedditRefusal) string {
	var b strings.Builder
	for i, rf := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(rf.Via + ": " + rf.Reason)
	}
	return b.String()
}

// checkpoint returns c's checkpoint of l, making one when there is none.
func (r *Reddit) checkpoint(c *community, l ports.RedditListing) *ports.RedditCheckpoint {
	cp := c.cps[l]
	if cp == nil {
		cp = &ports.RedditCheckpoint{Community: c.name, Listing: l}
		c.cps[l] = cp
	}
	return cp
}

// store matches the posts against the phrases of their own community and
// saves the matches, one batch per owner. With a window, every post is
// kept for each owner watching its community, matched or not.
func (r *Reddit) store(ctx context.Context, posts []ports.RedditPost, byName map[string]*community) error {
	byOwner := map[string][]ports.PostMatches{}
	skipped := 0
	keeper := r.window.keeper()
	for _, rp := range posts {
		c := byName[rp.Community]
		if c == nil {
			continue
		}
		post, err := core.CleanPost(rp.Post)
		if err != nil {
			skipped++
			continue
		}
		if c.set == nil {
			c.set = Compile(c.phrases)
		}
		owners := map[string][]string{}
		for _, id := range c.set.Match(post, c.name, post.Title, post.Text) {
			owner := ownerOf(c.phrases, id)
			owners[owner] = append(owners[owner], id)
		}
		keep := keeper(c.name)
		if keep != nil {
			for _, p := range c.phrases {
				if _, ok := owners[p.OwnerID]; !ok {
					owners[p.OwnerID] = nil
				}
			}
		}
		for owner, pids := range owners {
			byOwner[owner] = append(byOwner[owner], ports.PostMatches{Post: post, PhraseIDs: pids, Keep: keep})
		}
	}
	if skipped > 0 {
		r.log.InfoContext(ctx, "reddit posts skipped as invalid", "posts", skipped)
		r.metrics.Count(ports.EventPostsSkipped, skipped)
	}
	for owner, batch := range byOwner {
		res, err := r.matches.SaveMatches(ctx, owner, core.Reddit, batch)
		if err != nil {
			return err
		}
		announce(ctx, r.pub, r.log, res.Matches)
		r.metrics.Count(ports.EventMatchesCreated, len(res.Matches))
	}
	return nil
}

func ownerOf(ps []core.Phrase, id string) string {
	for _, p := range ps {
		if p.ID == id {
			return p.OwnerID
		}
	}
	return ""
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time { return later(b, a) }

// Run polls at start and then every interval until ctx ends.
func (r *Reddit) Run(ctx context.Context, interval time.Duration) {
	poll := func() {
		if _, err := r.Cycle(ctx, interval); err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "reddit cycle failed", "err", err)
		}
	}
	poll()
	every(ctx, interval, nil, poll)
}
