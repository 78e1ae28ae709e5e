package app

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// RedditHealth tells how the reading of each watched community goes, for
// operators (`earshot admin reddit status`).
type RedditHealth struct {
	phrases     ports.ListeningStore
	checkpoints ports.RedditStore
	clock       ports.Clock
}

// NewRedditHealth returns the reddit health service.
func NewRedditHealth(phrases ports.ListeningStore, checkpoints ports.RedditStore, clock ports.Clock) *RedditHealth {
	return &RedditHealth{phrases: phrases, checkpoints: checkpoints, clock: clock}
}

// RedditStatus is one watched community's reading, both listings taken
// together.
type RedditStatus struct {
	Community string
	Phrases   int // listening phrases that watch it
	// LastVia is the way the latest read was answered (oauth, json, feed,
	// archive); empty before the first read.
	LastVia string
	// LastReadAt is the latest read, answered or not.
	LastReadAt time.Time
	// LastSuccessAt is when both listings had last been read: the older
	// of the two listings' last answered reads (zero until both were).
	LastSuccessAt time.Time
	// LastError is the latest refusal or failure and when it was; empty
	// when there was none.
	LastError   string
	LastErrorAt time.Time
	// ArchiveLag is how far behind the archive was at its latest read
	// (the larger of the two listings).
	ArchiveLag time.Duration
	// Behind is how long ago the older checkpoint was: posts made since
	// have not been read yet (zero before the first read).
	Behind time.Duration
}

// Status returns one line per watched community, by name.
func (h *RedditHealth) Status(ctx context.Context) ([]RedditStatus, error) {
	ps, err := h.phrases.ListeningPhrases(ctx, core.Reddit)
	if err != nil {
		return nil, err
	}
	cps, err := h.checkpoints.RedditCheckpoints(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]*RedditStatus{}
	for _, p := range ps {
		s := byName[p.Community]
		if s == nil {
			s = &RedditStatus{Community: p.Community}
			byName[p.Community] = s
		}
		s.Phrases++
	}
	now := h.clock.Now()
	seen := map[string]int{}
	until := map[string]time.Time{}
	for _, cp := range cps {
		s := byName[cp.Community]
		if s == nil {
			continue
		}
		seen[cp.Community]++
		if cp.LastReadAt.After(s.LastReadAt) {
			s.LastReadAt, s.LastVia = cp.LastReadAt, cp.LastVia
		}
		if seen[cp.Community] == 1 || cp.LastSuccessAt.Before(s.LastSuccessAt) {
			s.LastSuccessAt = cp.LastSuccessAt
		}
		if cp.LastError != "" && cp.LastErrorAt.After(s.LastErrorAt) {
			s.LastError, s.LastErrorAt = cp.LastError, cp.LastErrorAt
		}
		s.ArchiveLag = max(s.ArchiveLag, cp.ArchiveLag)
		if u, ok := until[cp.Community]; !ok || cp.Until.Before(u) {
			until[cp.Community] = cp.Until
		}
	}
	out := make([]RedditStatus, 0, len(byName))
	for name, s := range byName {
		if seen[name] < len(ports.RedditListings) {
			s.LastSuccessAt = time.Time{} // a listing was never read
		}
		if u := until[name]; !u.IsZero() {
			s.Behind = max(now.Sub(u), 0)
		}
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b RedditStatus) int { return cmp.Compare(a.Community, b.Community) })
	return out, nil
}
