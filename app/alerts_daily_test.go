package app

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// memAlerts is an AlertStore in memory, whose matches are created when
// the test says, on the test's clock.
type memAlerts struct {
	mu      sync.Mutex
	owner   core.Owner
	sched   core.AlertSchedule
	last    time.Time
	pending []core.Match
}

func (s *memAlerts) AlertOwners(context.Context, int) ([]core.Owner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return nil, nil
	}
	return []core.Owner{s.owner}, nil
}

func (s *memAlerts) PendingAlerts(_ context.Context, _ string, _, limit int) ([]core.Match, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pending[:min(limit, len(s.pending))]), nil
}

func (s *memAlerts) MarkEmailed(_ context.Context, _ string, ids []string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = slices.DeleteFunc(s.pending, func(m core.Match) bool { return slices.Contains(ids, m.ID) })
	s.last = at
	return nil
}

func (s *memAlerts) AlertSchedule(context.Context, string) (core.AlertSchedule, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sched, s.last, nil
}

func (s *memAlerts) SetAlertSchedule(_ context.Context, _ string, sc core.AlertSchedule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sched = sc
	return nil
}

func (s *memAlerts) add(id string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, core.Match{ID: id, OwnerID: s.owner.ID, Phrase: "acme", Platform: core.Reddit, CreatedAt: at,
		Score: &core.Score{Value: 90, Intent: core.IntentBuying, Reason: "cue"}, Post: core.Post{URL: "https://x.com/p/" + id}})
}

// freeLeases grants every lease.
type freeLeases struct{}

func (freeLeases) Acquire(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}
func (freeLeases) Release(context.Context, string, string) error { return nil }

// A daily digest goes out at the owner's hour. When that hour found
// nothing to send, a match that comes later in the day waits for the
// next day's hour rather than going out at the next sweep; only matches
// that were waiting at the hour (a digest missed while the service was
// down) go out after it.
func TestDailyDigestKeepsItsHourAfterAQuietOne(t *testing.T) {
	t.Parallel()
	day := func(d, h, m int) time.Time { return time.Date(2026, 1, d, h, m, 0, 0, time.UTC) }
	clock := &handClock{now: day(10, 9, 5)}
	store := &memAlerts{owner: core.Owner{ID: "o1", Email: "daily@example.com"}, sched: core.AlertSchedule{Frequency: core.AlertDaily, Hour: 9}}
	box := &alertBox{}
	alerts := NewAlerts(AlertDeps{Store: store, Leases: freeLeases{}, Mailer: box, Clock: clock, Log: quiet, Holder: "h1"},
		AlertConfig{MinScore: 70, SiteURL: func() string { return "http://127.0.0.1:8080" }})
	sweep := func(at time.Time) int {
		t.Helper()
		clock.now = at
		if _, err := alerts.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		return len(box.take("daily@example.com"))
	}

	store.add("m1", day(10, 8, 0))
	if n := sweep(day(10, 9, 5)); n != 1 {
		t.Fatalf("10 Jan 09:05: %d digests, want 1", n)
	}
	// 11 Jan: nothing at 09:05; a match at 14:00.
	if n := sweep(day(11, 9, 5)); n != 0 {
		t.Fatalf("11 Jan 09:05: %d digests with nothing pending", n)
	}
	store.add("m2", day(11, 14, 0))
	for _, at := range []time.Time{day(11, 14, 5), day(11, 20, 5), day(12, 8, 5)} {
		if n := sweep(at); n != 0 {
			t.Fatalf("%v: %d digests, want none before the next 09:00", at, n)
		}
	}
	if n := sweep(day(12, 9, 5)); n != 1 {
		t.Fatalf("12 Jan 09:05: %d digests, want 1", n)
	}
	// A match waiting at the hour, whose digest no sweep sent (the service
	// was down from 08:30 to 13:00), goes out at the first sweep after.
	store.add("m3", day(13, 8, 0))
	if n := sweep(day(13, 13, 5)); n != 1 {
		t.Fatalf("13 Jan 13:05, after the missed hour: %d digests, want 1", n)
	}
}
