package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// TopicMatchStored carries the ids of matches stored and not scored yet,
// for scoring: an event for each batch stored, with the matches of one
// owner. It is named apart from the webhook event match.created, which
// announces a scored match to an owner's receiver.
const TopicMatchStored = "match.stored"

// MatchEvent is the payload of TopicMatchStored.
type MatchEvent struct {
	OwnerID string `json:"ownerId"`
	// MatchID is the first of MatchIDs, as releases that sent an event
	// for each match wrote it.
	MatchID  string   `json:"matchId"`
	MatchIDs []string `json:"matchIds"`
}

// Ingest takes posts from helper programs, matches them and stores the
// matches.
type Ingest struct {
	clock    ports.Clock
	matches  ports.MatchStore
	accounts ports.AccountStore
	matchers *Matchers
	bus      ports.Publisher
	limits   core.Limits
	log      *slog.Logger
	metrics  ports.Metrics
	backlog  *Backlog
	window   *Window
}

// IngestDeps are the ports the ingest service uses.
type IngestDeps struct {
	Matches   ports.MatchStore
	Accounts  ports.AccountStore
	Matchers  *Matchers
	Publisher ports.Publisher // may be nil: matches are found by the scoring sweep
	Log       *slog.Logger
	Metrics   ports.Metrics // counts posts and matches; nil counts nothing
	Clock     ports.Clock   // stamps the phrases a helper read; nil is the system clock
	Backlog   *Backlog      // refuses batches while scoring is behind; nil refuses none
	Window    *Window       // keeps every post in the owner's window of recent posts; nil keeps none
}

// NewIngest returns the ingest service; limits bound the accounts that
// ingesting connects.
func NewIngest(d IngestDeps, limits core.Limits) *Ingest {
	if d.Clock == nil {
		d.Clock = ports.SystemClock{}
	}
	return &Ingest{clock: d.Clock, matches: d.Matches, accounts: d.Accounts, matchers: d.Matchers, bus: d.Publisher, limits: limits,
		log: orDefaultLog(d.Log), metrics: orNoMetrics(d.Metrics), backlog: d.Backlog, window: d.Window}
}

// Ingest validates each post, stores the valid new ones with their matches
// in one transaction (and, with a window, keeps each in the owner's window
// of recent posts in it), then announces the new matches. A post is searched
// in its title and body parts; a reddit post, which must name its
// community, only for the phrases of that community. Invalid rows and
// posts already stored are skipped and counted. A batch over 100 posts is
// refused whole (KindInvalid); a platform without an account and no room
// to connect one is KindPlanLimit; while scoring is behind (Backlog), a
// batch is refused whole with KindUnavailable and nothing of it stored.
//
// It returns the account the posts were read with and the counts of posts
// stored and skipped.
func (s *Ingest) Ingest(ctx context.Context, ownerID string, platform string, posts []core.IngestPost) (accountID string, ingested, skipped int, err error) {
	return s.IngestBatch(ctx, ownerID, core.IngestBatch{Platform: platform, Posts: posts})
}

// IngestBatch is Ingest of a batch that may name the reddit communities
// its helper's pass did not read (b.Unread, see core.UnreadCommunities)
// and the phrases it did not search to the end (b.UnreadPhrases, see
// core.UnreadPhrases): the batch records the read of the other phrases
// only. A bad value refuses the batch whole (KindInvalid) before
// anything is stored or recorded.
func (s *Ingest) IngestBatch(ctx context.Context, ownerID string, b core.IngestBatch) (accountID string, ingested, skipped int, err error) {
	posts := b.Posts
	p, err := core.ParsePlatform("platform", b.Platform)
	if err != nil {
		return "", 0, 0, err
	}
	if err := core.CheckIngestBatch(len(posts)); err != nil {
		return "", 0, 0, err
	}
	unread, err := b.Unread.On(p)
	if err != nil {
		return "", 0, 0, err
	}
	unreadTexts, err := b.UnreadPhrases.Keys()
	if err != nil {
		return "", 0, 0, err
	}
	if err := s.backlog.admit(); err != nil {
		return "", 0, 0, err
	}
	acc, err := s.accounts.EnsureAccount(ctx, ownerID, p, s.limits)
	if err != nil {
		return "", 0, 0, err
	}
	m, err := s.matchers.For(ctx, ownerID, p)
	if err != nil {
		return "", 0, 0, err
	}
	// A batch, even an empty one, is a helper's pass over these phrases,
	// but for those of the communities and the phrases it says it did not
	// read.
	if err := s.matchers.markRead(ctx, m, s.clock.Now(), unread, unreadTexts); err != nil {
		s.log.WarnContext(ctx, "recording the phrases a helper read failed", "owner", ownerID, "platform", p, "err", err)
	}
	batch := make([]ports.PostMatches, 0, len(posts))
	keep := s.window.keeper()
	for _, ip := range posts {
		post, err := ip.Post()
		if err != nil {
			skipped++
			continue
		}
		community, err := ip.CommunityOn(p)
		if err != nil {
			skipped++
			continue
		}
		title, body := ip.SearchTexts()
		batch = append(batch, ports.PostMatches{Post: post, PhraseIDs: m.Match(post, community, title, body...), Keep: withBounds(keep(community), ip)})
	}
	if len(batch) == 0 {
		s.metrics.Count(ports.EventPostsSkipped, skipped)
		return acc.ID, 0, skipped, nil
	}
	saved, err := s.matches.SaveMatches(ctx, ownerID, p, batch)
	if err != nil {
		return "", 0, 0, err
	}
	s.backlog.stored(len(saved.Matches))
	// Stored: a client gone meanwhile must not keep them from scoring
	// until the backstop sweep, since its resend stores nothing new.
	announce(context.WithoutCancel(ctx), s.bus, s.log, saved.Matches)
	s.metrics.Count(ports.EventPostsIngested, saved.Saved)
	s.metrics.Count(ports.EventPostsSkipped, skipped+saved.Known)
	s.metrics.Count(ports.EventMatchesCreated, len(saved.Matches))
	return acc.ID, saved.Saved, skipped + saved.Known, nil
}

// announce publishes new matches, an event for each run of one owner's
// matches (a batch stored is one owner's): the event only wakes the
// scoring loop, whose sweep claims every match stored by then, and on
// RabbitMQ an event for each match cost the broker about as much CPU as
// storing the batch cost Postgres. They are stored already: a failed
// publish only delays scoring until the sweep finds them.
func announce(ctx context.Context, pub ports.Publisher, log *slog.Logger, ms []core.Match) {
	if len(ms) == 0 || pub == nil {
		return
	}
	var events []ports.Event
	var ids []string
	for i, m := range ms {
		ids = append(ids, m.ID)
		if i+1 < len(ms) && ms[i+1].OwnerID == m.OwnerID {
			continue
		}
		payload, _ := json.Marshal(MatchEvent{OwnerID: m.OwnerID, MatchID: ids[0], MatchIDs: ids})
		events = append(events, ports.Event{Topic: TopicMatchStored, Key: ids[0], Payload: payload})
		ids = nil
	}
	// A broker that blocks publishers (a resource alarm) confirms nothing:
	// the caller, an ingest request whose matches are committed, must not
	// wait for it longer than the sweep would take to find them anyway.
	pctx, cancel := context.WithTimeout(ctx, publishWait)
	defer cancel()
	if err := pub.Publish(pctx, events...); err != nil {
		log.WarnContext(ctx, "publishing new matches failed; the scoring sweep will find them", "matches", len(ms), "err", err)
	}
}

// publishWait bounds how long announce waits for the bus.
const publishWait = 5 * time.Second

// Phrases returns the owner's listening phrases on the platform, for
// helper programs, which need a reddit phrase's community too.
func (s *Ingest) Phrases(ctx context.Context, ownerID, platform string) ([]core.Phrase, error) {
	p, err := core.ParsePlatform("platform", platform)
	if err != nil {
		return nil, err
	}
	c, err := s.matchers.For(ctx, ownerID, p)
	if err != nil {
		return nil, err
	}
	return append([]core.Phrase(nil), c.phrases...), nil
}
