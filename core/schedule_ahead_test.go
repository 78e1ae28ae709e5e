package core

import (
	"fmt"
	"testing"
	"time"
)

// movedClock reads ahead of the real time until back, when it is set
// back to the real time (a host clock corrected).
type movedClock struct {
	back  time.Time
	ahead time.Duration
}

func (c movedClock) at(real time.Time) time.Time {
	if real.Before(c.back) {
		return real.Add(c.ahead)
	}
	return real
}

// The real times the tests below run over, a minute at a time: two days
// on the clock that is ahead, three after it is set back. back is at
// 00:17 UTC, outside every chosen hour below.
var (
	aheadStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	aheadBack  = aheadStart.Add(48*time.Hour + 17*time.Minute)
	aheadEnd   = aheadStart.Add(5 * 24 * time.Hour)
	aheadBy    = []time.Duration{time.Hour, 24 * time.Hour, 365 * 24 * time.Hour}
)

// aheadSchedules are the digests and, for each, when the first one after
// the clock is set back at aheadBack goes out: one period after the
// present.
var aheadSchedules = []struct {
	s    AlertSchedule
	next time.Time
}{
	{AlertSchedule{Frequency: AlertHourly}, aheadBack.Add(time.Hour)},
	{AlertSchedule{AlertDaily, 9, "Europe/Berlin"}, time.Date(2026, 1, 7, 8, 0, 0, 0, time.UTC)},
	{AlertSchedule{AlertDaily, 1, "+05:30"}, time.Date(2026, 1, 7, 19, 30, 0, 0, time.UTC)},
}

// aheadMatches are scored every ten minutes of real time, stamped by a
// replica whose clock agrees with it.
func aheadMatches() []time.Time {
	var ms []time.Time
	for at := aheadStart.Add(7 * time.Second); at.Before(aheadEnd); at = at.Add(10 * time.Minute) {
		ms = append(ms, at)
	}
	return ms
}

// A channel's digest whose last period was ended by a clock a day, an
// hour or a year ahead, set back since: the first sweep after ends an
// empty period (nothing is sent at once, so nothing the digest at the
// later time carried goes again), the next digest goes out one period
// after the present rather than once the clock passes the stamp, and no
// match is in two digests.
func TestDigestDueAfterTheClockWentBack(t *testing.T) {
	for _, c := range aheadSchedules {
		for _, ahead := range aheadBy {
			t.Run(fmt.Sprintf("%v/%v", c.s, ahead), func(t *testing.T) {
				clock := movedClock{aheadBack, ahead}
				matches := aheadMatches()
				type digest struct{ real, from, to time.Time }
				var sent []digest
				seen := map[time.Time]int{}
				last := clock.at(aheadStart) // the channel made at the start
				for real := aheadStart; real.Before(aheadEnd); real = real.Add(time.Minute) {
					now := clock.at(real)
					due, from := DigestDue(c.s, last, now)
					if !due {
						continue
					}
					if !from.Equal(last) && !(from.Equal(now) && last.After(now)) {
						t.Fatalf("at %v: a period from %v, neither the last %v nor an empty one", real, from, last)
					}
					for _, m := range matches {
						if m.Before(real) && !m.Before(from) && m.Before(now) { // scored by then, in the period
							seen[m]++
						}
					}
					sent = append(sent, digest{real, from, now})
					last = now
				}
				var after []digest
				for _, d := range sent {
					if !d.real.Before(aheadBack) {
						after = append(after, d)
					}
				}
				if len(after) < 2 {
					t.Fatalf("after the clock went back at %v: %d periods (the last ended at %v)", aheadBack, len(after), last)
				}
				first, before := after[0], sent[len(sent)-len(after)-1].to
				if before.After(aheadBack) && (!first.real.Equal(aheadBack) || !first.from.Equal(first.to)) {
					t.Fatalf("the last period ended at %v, ahead: the first after, at %v, is [%v, %v); want an empty one at %v",
						before, first.real, first.from, first.to, aheadBack)
				}
				var next digest
				for _, d := range after {
					if !d.from.Equal(d.to) {
						next = d
						break
					}
				}
				if !next.real.Equal(c.next) {
					t.Fatalf("the first digest after the clock went back at %v: at %v, want at %v", aheadBack, next.real, c.next)
				}
				for _, m := range matches {
					if seen[m] > 1 {
						t.Fatalf("match at %v in %d digests", m, seen[m])
					}
					if !m.Before(aheadBack) && m.Before(last) && seen[m] != 1 {
						t.Fatalf("match at %v, after the clock went back, in %d digests", m, seen[m])
					}
				}
			})
		}
	}
}

// An owner's alert emails with the last one stamped a day, an hour or a
// year ahead, the clock set back since: a daily digest is not due at
// once but at the next chosen hour; an hourly one goes out at once with
// what the email at the later time did not carry, then hourly; neither
// waits for the clock to pass the stamp, and no match is mailed twice.
func TestAlertDueAfterTheClockWentBack(t *testing.T) {
	for _, c := range aheadSchedules {
		for _, ahead := range aheadBy {
			t.Run(fmt.Sprintf("%v/%v", c.s, ahead), func(t *testing.T) {
				clock := movedClock{aheadBack, ahead}
				matches := aheadMatches()
				mailed := map[time.Time]int{}
				var last time.Time
				var sent []time.Time // real times
				for real := aheadStart; real.Before(aheadEnd); real = real.Add(time.Minute) {
					now := clock.at(real)
					if !c.s.Due(now, last) {
						continue
					}
					n := 0
					for _, m := range matches { // what the sweep reads: scored by then, never mailed
						if m.Before(real) && mailed[m] == 0 {
							mailed[m]++
							n++
						}
					}
					if n > 0 {
						sent = append(sent, real)
						last = now
					}
				}
				var after []time.Time
				for _, at := range sent {
					if !at.Before(aheadBack) {
						after = append(after, at)
					}
				}
				if len(after) < 2 {
					t.Fatalf("after the clock went back at %v: emails at %v (the last stamped %v)", aheadBack, after, last)
				}
				want, stamp := c.next, sent[len(sent)-len(after)-1].Add(ahead)
				switch {
				case c.s.Frequency == AlertHourly && stamp.After(aheadBack):
					want = aheadBack // the last stamp lies ahead: read as none
				case c.s.Frequency == AlertDaily && stamp.Equal(c.next):
					// A day ahead, the last email was stamped with the next
					// chosen hour: the clock reaches the stamp at that hour,
					// and reads it as that day's email. Nothing tells the
					// two apart here: the sweep keeps an email's time only
					// with the email. That day's matches go the day after.
					want = c.next.Add(24 * time.Hour)
				}
				if !after[0].Equal(want) {
					t.Fatalf("the first email after the clock went back at %v: at %v, want %v", aheadBack, after[0], want)
				}
				period := time.Hour
				if c.s.Frequency == AlertDaily {
					period = 24 * time.Hour
				}
				for i := 1; i < len(after); i++ {
					if gap := after[i].Sub(after[i-1]); gap != period {
						t.Fatalf("emails at %v and %v: %v apart", after[i-1], after[i], gap)
					}
				}
				for _, m := range matches {
					if mailed[m] > 1 {
						t.Fatalf("match at %v mailed %d times", m, mailed[m])
					}
				}
			})
		}
	}
}

// A last up to clockSkew ahead is the skew of clocks that agree, read as
// it is: restarting a period for it could carry again, every period,
// what a replica running that little ahead stamped past the restart.
func TestScheduleLastWithinSkew(t *testing.T) {
	now := time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)
	hourly := AlertSchedule{Frequency: AlertHourly}
	daily := AlertSchedule{AlertDaily, 10, ""}
	for _, c := range []struct {
		s     AlertSchedule
		ahead time.Duration
		due   bool
		from  time.Time
	}{
		{hourly, time.Second, false, time.Time{}},
		{hourly, clockSkew, false, time.Time{}},
		{hourly, clockSkew + time.Second, true, now},
		{daily, 4 * time.Minute, false, time.Time{}},
		{daily, clockSkew + time.Second, true, now},
	} {
		last := now.Add(c.ahead)
		if due, from := DigestDue(c.s, last, now); due != c.due || !from.Equal(c.from) {
			t.Errorf("%v, last %v ahead: DigestDue = %v, %v; want %v, %v", c.s, c.ahead, due, from, c.due, c.from)
		}
		// An email as well: hourly at once, daily within its hour (10:00).
		if due := c.s.Due(now, last); due != c.due {
			t.Errorf("%v, last %v ahead: Due = %v, want %v", c.s, c.ahead, due, c.due)
		}
	}
}

// Two replicas sweep a channel's digest every minute, one running four
// minutes ahead, each stamping the matches it scores with its own clock:
// neither restarts the other's periods, so no match is in two digests.
func TestDigestDueReplicaRunningAheadWithinSkew(t *testing.T) {
	for _, s := range []AlertSchedule{{Frequency: AlertHourly}, {AlertDaily, 9, "Europe/Berlin"}} {
		skew := []time.Duration{4 * time.Minute, 0}
		type match struct{ real, stamp time.Time }
		var matches []match
		for i, real := 0, aheadStart.Add(7*time.Second); real.Before(aheadEnd); i, real = i+1, real.Add(5*time.Minute) {
			matches = append(matches, match{real, real.Add(skew[i%2])})
		}
		seen := make([]int, len(matches))
		last := aheadStart
		for real := aheadStart; real.Before(aheadEnd); real = real.Add(time.Minute) {
			for _, d := range skew {
				now := real.Add(d)
				due, from := DigestDue(s, last, now)
				if !due {
					continue
				}
				for i, m := range matches {
					if m.real.Before(real) && !m.stamp.Before(from) && m.stamp.Before(now) {
						seen[i]++
					}
				}
				last = now
			}
		}
		for i, n := range seen {
			if n > 1 {
				t.Fatalf("%v: the match scored at %v, stamped %v, in %d digests", s, matches[i].real, matches[i].stamp, n)
			}
		}
	}
}
