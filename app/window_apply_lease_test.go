package app

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// clockLeases are leases timed by a clock the test moves, with the
// contract of ports.LeaseStore (the same holder renews).
type clockLeases struct {
	clock *handClock
	mu    sync.Mutex
	held  map[string]clockLease
}

type clockLease struct {
	holder string
	until  time.Time
}

func (l *clockLeases) Acquire(_ context.Context, name, holder string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	if h, ok := l.held[name]; ok && h.holder != holder && !h.until.Before(now) {
		return false, nil
	}
	l.held[name] = clockLease{holder: holder, until: now.Add(ttl)}
	return true, nil
}

func (l *clockLeases) Release(_ context.Context, name, holder string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h, ok := l.held[name]; ok && h.holder == holder {
		delete(l.held, name)
	}
	return nil
}

// pausedArchives stops after each read of a phrase's matches: it says
// so on read and waits for go on.
type pausedArchives struct {
	ports.FilterArchiveStore
	read, on chan struct{}
}

func (p *pausedArchives) PhraseMatches(ctx context.Context, ownerID, phraseID string, limit int, unarchived bool, each func(core.Match, bool) bool) (bool, error) {
	more, err := p.FilterArchiveStore.PhraseMatches(ctx, ownerID, phraseID, limit, unarchived, each)
	p.read <- struct{}{}
	<-p.on
	return more, err
}

// An application that outlasts its lease (a minute) must not archive
// once another replica holds the lease: the other's set, made from a
// read that saw a newer match too, would replace the first's and leave
// the first's matches with no undo.
func TestApplyFiltersOutlastingItsLeaseKeepsUndo(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, week, false)
		o := w.owner(t, "outlast@example.com")
		p, _, err := ww.phrases.Add(ctx, o.ID, "acme", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		save := func(ids ...int) {
			t.Helper()
			var batch []ports.PostMatches
			for _, i := range ids {
				batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint(i), Text: "acme hiring",
					URL: fmt.Sprintf("https://x.com/p/%d", i)}, PhraseIDs: []string{p.ID}})
			}
			if _, err := w.matches.SaveMatches(ctx, o.ID, core.X, batch); err != nil {
				t.Fatal(err)
			}
		}
		save(0, 1, 2)
		hiring := []string{"hiring"}
		if _, err := ww.phrases.Update(ctx, o.ID, p.ID, nil, core.PhraseFiltersChange{Exclude: &hiring}); err != nil {
			t.Fatal(err)
		}
		// Two replicas: two windows over one database and one set of leases.
		leases := &clockLeases{clock: ww.clock, held: map[string]clockLease{}}
		replica := func(holder string) (*Window, *pausedArchives) {
			pa := &pausedArchives{FilterArchiveStore: ww.window.d.Archives, read: make(chan struct{}), on: make(chan struct{})}
			d := ww.window.d
			d.Archives, d.Leases, d.Holder = pa, leases, holder
			return NewWindow(d, week), pa
		}
		a, pa := replica("a")
		b, pb := replica("b")
		type result struct {
			applied ports.Applied
			err     error
		}
		ra, rb := make(chan result, 1), make(chan result, 1)
		go func() { r, err := a.ApplyFilters(ctx, o.ID, p.ID); ra <- result{r, err} }()
		<-pa.read
		// a's read took more than its lease; a match came meanwhile, and
		// b, applying the filters, took the lease and read both.
		ww.clock.add(2 * time.Minute)
		save(3)
		go func() { r, err := b.ApplyFilters(ctx, o.ID, p.ID); rb <- result{r, err} }()
		<-pb.read
		pa.on <- struct{}{}
		first := <-ra
		pb.on <- struct{}{}
		second := <-rb
		for _, r := range []result{first, second} {
			if r.err != nil && !core.IsKind(r.err, core.KindConflict) {
				t.Fatal(r.err)
			}
		}
		if second.err != nil || second.applied.Set.Matches+first.applied.Set.Matches != 4 {
			t.Fatalf("the applications = %+v, %v; %+v, %v; want the 4 archived, the second whole", first.applied, first.err, second.applied, second.err)
		}
		last, err := ww.window.LastApplied(ctx, o.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := ww.window.UndoApply(ctx, o.ID, p.ID, last.ID); err != nil || n != 4 {
			t.Fatalf("undoing the last set restored %d, %v; want the 4 archived", n, err)
		}
	})
}
