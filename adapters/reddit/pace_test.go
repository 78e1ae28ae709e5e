package reddit

import (
	"testing"
	"time"
)

// slot books a slot at now and says the spacing the pacer then keeps:
// how far after now the next slot is. The slot booked before is dropped,
// so the tests can look at any time in any order.
func slot(t *testing.T, p *pacer, now time.Time) time.Duration {
	t.Helper()
	p.next = time.Time{}
	if wait, ok := p.reserve(now, time.Hour); !ok || wait != 0 {
		t.Fatalf("reserve at %v: wait %v, ok %v; want a free slot", now, wait, ok)
	}
	return p.next.Sub(now)
}

// refuse takes in 429s that name no time, each after the rest of the one
// before, and returns the time of the last.
func refuse(p *pacer, now time.Time, n int) time.Time {
	for i := range n {
		if i > 0 {
			now = p.blocked
		}
		p.refused(now, time.Minute)
	}
	return now
}

// Each 429 that names no time halves the budget, down to one request a
// minute; each quiet stretch after the last 429 undoes one halving, also
// when no slot was reserved in between, until the budget it was made with.
func TestPacerBudgetComesBackStepwise(t *testing.T) {
	for _, tc := range []struct {
		name      string
		perMinute int
		slowed    []time.Duration // after each 429, down to the floor
	}{
		{"keyless", DefaultKeylessPerMinute, []time.Duration{
			12 * time.Second, 24 * time.Second, 48 * time.Second, time.Minute}},
		{"oauth", oauthPerMinute, []time.Duration{
			1200 * time.Millisecond, 2400 * time.Millisecond, 4800 * time.Millisecond,
			9600 * time.Millisecond, 19200 * time.Millisecond, 38400 * time.Millisecond, time.Minute}},
		{"one a minute", 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := time.Minute / time.Duration(tc.perMinute)
			p := newPacer(tc.perMinute)
			now := time.Unix(0, 0)
			for i, want := range tc.slowed {
				refuse(p, now, 1)
				now = p.blocked
				if got := slot(t, p, now); got != want {
					t.Errorf("after %d 429s: gap %v, want %v", i+1, got, want)
				}
				now = p.next
			}
			// Further 429s keep it at the floor.
			last := refuse(p, now, 3)
			now = p.blocked
			floor := max(budget, time.Minute)
			if got := slot(t, p, now); got != floor {
				t.Errorf("after more 429s: gap %v, want %v", got, floor)
			}
			// Each quiet stretch from the last 429 undoes one halving, in
			// the reverse order of the halvings. levels[k] is the gap
			// after k halvings.
			levels := append([]time.Duration{budget}, tc.slowed...)
			for j := 1; j < len(levels); j++ {
				at := last.Add(time.Duration(j) * quietStretch)
				if got, want := slot(t, p, at.Add(-time.Second)), levels[len(levels)-j]; got != want {
					t.Errorf("a second before stretch %d: gap %v, want still %v", j, got, want)
				}
				if got, want := slot(t, p, at), levels[len(levels)-1-j]; got != want {
					t.Errorf("%d stretches after the last 429: gap %v, want %v", j, got, want)
				}
			}
			// And it stays there.
			if got := slot(t, p, last.Add(100*quietStretch)); got != budget {
				t.Errorf("long after: gap %v, want the budget's %v", got, budget)
			}

			// Unreserved stretches count all the same: the budget does
			// not wait for reads to come back.
			q := newPacer(tc.perMinute)
			last = refuse(q, time.Unix(0, 0), len(tc.slowed))
			if got := slot(t, q, last.Add(time.Duration(len(tc.slowed))*quietStretch)); got != budget {
				t.Errorf("after %d unreserved stretches: gap %v, want the budget's %v", len(tc.slowed), got, budget)
			}
		})
	}
}

// A 429 within a quiet stretch starts it again, whether or not it named
// a time.
func TestPacerA429RestartsTheStretch(t *testing.T) {
	budget := time.Minute / DefaultKeylessPerMinute
	for _, named := range []bool{false, true} {
		p := newPacer(DefaultKeylessPerMinute)
		start := time.Unix(0, 0)
		last := refuse(p, start, 2) // gap 24s
		again := last.Add(quietStretch / 2)
		if named {
			// reddit named a pause (Retry-After), observed before the 429
			p.blocked = again.Add(30 * time.Second)
		}
		p.refused(again, time.Minute)
		want := 4 * budget // two halvings
		if !named {
			want = 8 * budget // three
		}
		now := p.blocked
		if got := slot(t, p, now); got != want {
			t.Errorf("named %v: after the 429 in the stretch: gap %v, want %v", named, got, want)
		}
		// The stretch counts from the last 429, not the one before.
		if got := slot(t, p, last.Add(quietStretch)); got != want {
			t.Errorf("named %v: a stretch after the earlier 429: gap %v, want still %v", named, got, want)
		}
		if got := slot(t, p, again.Add(quietStretch)); got != want/2 {
			t.Errorf("named %v: a stretch after the last 429: gap %v, want %v", named, got, want/2)
		}
	}
}
