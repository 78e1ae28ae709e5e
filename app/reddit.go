package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// maxLookback bounds how far back a cycle reads when phrases were last
// checked long ago (a long outage, or a paused phrase resumed).
const maxLookback = 24 * time.Hour

// Reddit reads every community that a listening reddit phrase watches,
// once a cycle however many phrases and owners watch it, and stores the
// posts that contain a phrase as matches for each owner of such a phrase.
type Reddit struct {
	phrases ports.PhraseStore
	matches ports.MatchStore
	source  ports.RedditSource
	leases  ports.LeaseStore
	pub     ports.Publisher
	log     *slog.Logger
	holder  string
	clock   ports.Clock
	// Metrics counts reads; NoMetrics until set.
	Metrics ports.Metrics
}

// NewReddit returns the reddit poller. holder names this process in
// leases, so replicas on one database split the communities of a cycle.
func NewReddit(phrases ports.PhraseStore, matches ports.MatchStore, source ports.RedditSource, leases ports.LeaseStore,
	pub ports.Publisher, clock ports.Clock, log *slog.Logger, holder string) *Reddit {
	return &Reddit{phrases: phrases, matches: matches, source: source, leases: leases, pub: pub, clock: clock, log: log, holder: holder,
		Metrics: ports.NoMetrics{}}
}

// Cycle reads each watched community once. A community another replica
// holds this cycle is left to it. A community reddit (and the mirror)
// could not be read is skipped and its phrases keep their lastCheckedAt,
// so the next cycle reads the gap.
func (r *Reddit) Cycle(ctx context.Context, interval time.Duration) error {
	ps, err := r.phrases.ListeningPhrases(ctx, core.Reddit)
	if err != nil {
		return err
	}
	byCommunity := map[string][]core.Phrase{}
	var order []string
	for _, p := range ps {
		if _, ok := byCommunity[p.Community]; !ok {
			order = append(order, p.Community)
		}
		byCommunity[p.Community] = append(byCommunity[p.Community], p)
	}
	for _, c := range order {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The lease covers most of the cycle, so a replica starting later
		// in the same cycle does not read the community again.
		ok, err := r.leases.Acquire(ctx, "reddit:"+c, r.holder, interval*9/10)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := r.community(ctx, c, byCommunity[c], interval); err != nil {
			r.log.WarnContext(ctx, "reddit community skipped this cycle", "community", c, "err", err)
		}
	}
	return nil
}

func (r *Reddit) community(ctx context.Context, community string, phrases []core.Phrase, interval time.Duration) error {
	now := r.clock.Now()
	since := now
	for _, p := range phrases {
		if p.LastCheckedAt.Before(since) {
			since = p.LastCheckedAt
		}
	}
	// Read one interval further back than the last check: posts reach
	// the listings late sometimes, and those already stored are skipped.
	since = maxTime(since.Add(-interval), now.Add(-maxLookback))
	read, err := r.source.Read(ctx, community, since)
	if err != nil {
		r.Metrics.Count(ports.EventRedditFailed, 1)
		return err
	}
	r.Metrics.Count(ports.EventRedditReads, 1)
	set := Compile(phrases)
	ownerOf := make(map[string]string, len(phrases))
	for _, p := range phrases {
		ownerOf[p.ID] = p.OwnerID
	}
	byOwner := map[string][]ports.PostMatches{}
	skipped := 0
	for _, rp := range read.Posts {
		post, err := core.CleanPost(rp.Post)
		if err != nil {
			skipped++
			continue
		}
		owners := map[string][]string{}
		for _, id := range set.Match(post.Title, post.Text) {
			owners[ownerOf[id]] = append(owners[ownerOf[id]], id)
		}
		for owner, pids := range owners {
			byOwner[owner] = append(byOwner[owner], ports.PostMatches{Post: post, PhraseIDs: pids})
		}
	}
	if skipped > 0 {
		r.log.InfoContext(ctx, "reddit posts skipped as invalid", "community", community, "posts", skipped)
		r.Metrics.Count(ports.EventPostsSkipped, skipped)
	}
	for owner, batch := range byOwner {
		res, err := r.matches.SaveMatches(ctx, owner, core.Reddit, batch)
		if err != nil {
			return err
		}
		announce(ctx, r.pub, r.log, res.Matches)
		r.Metrics.Count(ports.EventMatchesCreated, len(res.Matches))
	}
	ids := make([]string, len(phrases))
	for i, p := range phrases {
		ids[i] = p.ID
	}
	return r.phrases.MarkChecked(ctx, ids, read.Source, now)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Run polls at start and then every interval until ctx ends.
func (r *Reddit) Run(ctx context.Context, interval time.Duration) {
	every(ctx, interval, func() {
		if err := r.Cycle(ctx, interval); err != nil && ctx.Err() == nil {
			r.log.WarnContext(ctx, "reddit cycle failed", "err", err)
		}
	})
}
