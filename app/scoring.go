package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Defaults of ScoringConfig.
const (
	DefaultScoringInterval = 10 * time.Minute
	DefaultScoreBatch      = 200
	DefaultScoreLease      = time.Minute
)

// ScoringConfig tunes Scoring. The zero value works.
type ScoringConfig struct {
	// Interval is the period of the backstop sweep, which runs even when
	// nothing wakes it; 0 means DefaultScoringInterval.
	Interval time.Duration
	// Batch is how many unscored matches one claim takes and one
	// transaction scores; 0 means DefaultScoreBatch.
	Batch int
	// Workers is how many matches are scored at once; more than 1 needs a
	// scorer that is safe for concurrent use. 0 means 1.
	Workers int
	// Lease is how long a claim holds its matches: longer than a batch
	// takes to score, since when it runs out another sweep may score
	// them again (the first score stored wins). A process that dies
	// leaves its claims to the others, and to itself once restarted,
	// after this. 0 means DefaultScoreLease.
	Lease time.Duration
}

// Scoring scores new matches. One loop claims unscored matches from the
// store in batches, scores them (Workers at a time) and stores each
// batch's scores in one transaction. An event about a new match, or the
// bus dropping one, only wakes the loop: the database says what is left
// to score, so a lost event costs nothing and the work done per match
// does not depend on how many events arrived.
type Scoring struct {
	matches ports.MatchStore
	scorer  ports.Scorer
	log     *slog.Logger
	cfg     ScoringConfig
	wake    chan struct{}
	scored  func(ctx context.Context, m core.Match)
	metrics ports.Metrics
}

// ScoringDeps are the ports the scoring service uses.
type ScoringDeps struct {
	Matches ports.MatchStore
	Scorer  ports.Scorer
	Log     *slog.Logger
	Metrics ports.Metrics // counts scores; nil counts nothing
	// Scored is told about every match this service scored, after the
	// score is stored (the delivery worker is woken by it); nil does
	// nothing.
	Scored func(ctx context.Context, m core.Match)
}

// NewScoring returns the scoring service.
func NewScoring(d ScoringDeps, cfg ScoringConfig) *Scoring {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultScoringInterval
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultScoreBatch
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultScoreLease
	}
	cfg.Workers = max(cfg.Workers, 1)
	if d.Scored == nil {
		d.Scored = func(context.Context, core.Match) {}
	}
	return &Scoring{matches: d.Matches, scorer: d.Scorer, log: orDefaultLog(d.Log), cfg: cfg, wake: make(chan struct{}, 1),
		scored: d.Scored, metrics: orNoMetrics(d.Metrics)}
}

// Wake makes the loop of Run sweep at once rather than at its next
// interval. It never blocks: wakes that come while one is pending are one
// wake, since one sweep takes every match stored by then.
func (s *Scoring) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// BusDrops is told of the events the in-process bus drops when full
// (the bus's Dropped): each is counted, and a dropped new-match event
// wakes the scoring sweep at once, since the match is in the database
// and the sweep finds it.
type BusDrops struct {
	Metrics ports.Metrics // nil counts nothing
	Scoring *Scoring
}

// Dropped takes n events of topic that the bus dropped.
func (d BusDrops) Dropped(topic string, n int) {
	orNoMetrics(d.Metrics).Count(ports.EventBusDropped, n)
	if topic == TopicMatchStored {
		d.Scoring.Wake()
	}
}

// Scored is the delivery worker's ScoringDeps.Scored: a score stored
// may have queued deliveries, so the worker looks at once.
func (s *DeliveryWorker) Scored(context.Context, core.Match) { s.Poke() }

// Handle takes an event naming new matches: it wakes the loop and
// acknowledges. A malformed event is logged and acknowledged.
func (s *Scoring) Handle(ctx context.Context, e ports.Event) error {
	var ev MatchEvent
	if err := json.Unmarshal(e.Payload, &ev); err != nil || ev.MatchID == "" {
		s.log.WarnContext(ctx, "dropping a malformed match event", "err", err)
		return nil
	}
	s.Wake()
	return nil
}

// Sweep scores every unscored match whose lease ran out and returns how
// many scores it stored. A match the scorer fails on keeps its lease and
// is tried again by a sweep after the lease. When ctx ends it returns
// after the batch under way, however long the backlog.
//
// A claim that finds less than a batch took every match there was, so
// the sweep ends with it: a match stored since wakes the loop again. An
// empty claim to end each sweep cost Postgres as much as a full one
// (both walk the index of unscored matches past the entries of those
// scored since its last vacuum), and the loop sweeps for every batch
// ingested.
func (s *Scoring) Sweep(ctx context.Context) (int, error) {
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		ms, err := s.matches.ClaimUnscored(ctx, s.cfg.Batch, s.cfg.Lease)
		if err != nil || len(ms) == 0 {
			return n, err
		}
		last := len(ms) < s.cfg.Batch
		if updates := s.scoreAll(ctx, ms); len(updates) > 0 {
			got, err := s.store(ctx, updates)
			if err != nil {
				return n, err
			}
			s.metrics.Count(ports.EventMatchesScored, len(got))
			n += len(got)
			for _, m := range got {
				s.scored(ctx, m)
			}
		}
		if last {
			return n, nil
		}
	}
}

// store stores the scores of a batch, and the deliveries they queue, even
// when ctx ended while the batch was scored: thrown away, each score
// would be made again after the restart (a model's call paid twice). A
// database that hangs holds the stop no longer than storeTimeout.
func (s *Scoring) store(ctx context.Context, updates []ports.ScoreUpdate) ([]core.Match, error) {
	if ctx.Err() == nil {
		return s.matches.SetScores(ctx, updates, core.QueueMatchCreated)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	return s.matches.SetScores(sctx, updates, core.QueueMatchCreated)
}

// storeTimeout bounds the write of a batch's scores after a stop.
const storeTimeout = 30 * time.Second

// scoreAll scores ms, Workers at a time, and returns the verdicts of
// those the scorer could score, in the order of ms.
func (s *Scoring) scoreAll(ctx context.Context, ms []core.Match) []ports.ScoreUpdate {
	verdicts := make([]*core.Score, len(ms))
	one := func(i int) {
		sc, err := s.scorer.Score(ctx, ms[i])
		if err == nil {
			sc, err = inShape(sc)
		}
		if err != nil {
			s.metrics.Count(ports.EventScoringFailed, 1)
			if ctx.Err() == nil {
				s.log.WarnContext(ctx, "scoring failed; a later sweep retries", "match", ms[i].ID, "err", err)
			}
			return
		}
		verdicts[i] = &sc
	}
	if s.cfg.Workers == 1 {
		for i := range ms {
			one(i)
		}
	} else {
		// A fixed set of workers takes the next index in turn, so a slow
		// call (a remote model) holds up one worker, not the batch.
		next := make(chan int)
		var wg sync.WaitGroup
		for range min(s.cfg.Workers, len(ms)) {
			wg.Go(func() {
				for i := range next {
					one(i)
				}
			})
		}
		for i := range ms {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	out := make([]ports.ScoreUpdate, 0, len(ms))
	for i, v := range verdicts {
		if v != nil {
			out = append(out, ports.ScoreUpdate{Match: ms[i], Score: *v})
		}
	}
	return out
}

// inShape checks a scorer's verdict against the spec before it is
// stored, since the scorer may be an embedder's: a score of 0 to 100, an
// intent among core.Intents, a reason of one line that is not empty. A
// reason past core.MaxReasonLen is cut, as the model scorer cuts one.
func inShape(sc core.Score) (core.Score, error) {
	// A model may quote a post's direction overrides; dropped, as the
	// rule-based scorer drops them, since one left open turns the rest
	// of the line wherever the reason is shown.
	sc.Reason = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, sc.Reason)
	switch {
	case sc.Value < 0 || sc.Value > 100:
		return core.Score{}, core.Errorf(core.KindInvalid, "scorer gave score %d, outside 0 to 100", sc.Value)
	case !sc.Intent.Valid():
		return core.Score{}, core.Errorf(core.KindInvalid, "scorer gave intent %q, not one of %v", core.Cut(string(sc.Intent), 40), core.Intents)
	case strings.TrimSpace(sc.Reason) == "":
		return core.Score{}, core.Errorf(core.KindInvalid, "scorer gave no reason")
	case strings.ContainsFunc(sc.Reason, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }):
		return core.Score{}, core.Errorf(core.KindInvalid, "scorer gave a reason of more than one line")
	}
	sc.Reason = core.Cut(strings.ToValidUTF8(sc.Reason, "\uFFFD"), core.MaxReasonLen)
	return sc, nil
}

// Listen subscribes to new matches, so that each one wakes the loop of
// Run. It does not block.
func (s *Scoring) Listen(ctx context.Context, sub ports.Subscriber) error {
	return sub.Subscribe(ctx, TopicMatchStored, s.Handle)
}

// Run sweeps at start, then whenever woken and at least every interval,
// until ctx ends; it returns when the sweep under way has finished. The
// second sweep comes one lease after the start at the latest: matches a
// killed process had claimed are free again by then, and waiting for
// the interval would leave them unscored that long.
func (s *Scoring) Run(ctx context.Context) {
	t := time.NewTimer(s.cfg.Interval)
	defer t.Stop()
	next := min(s.cfg.Interval, s.cfg.Lease+time.Second)
	for {
		if n, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "scoring sweep failed", "err", err)
		} else if n > 0 {
			s.log.DebugContext(ctx, "scoring sweep", "scored", n)
		}
		t.Reset(next)
		next = s.cfg.Interval
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
	}
}
