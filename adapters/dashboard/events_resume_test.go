package dashboard

import (
	"strconv"
	"testing"
	"time"
)

// A stream cut after the first event of a poll resumes, from the id the
// browser holds then, at a cursor that still answers the rest of that
// poll: here a score taken well before one the poll's created batch
// carried, written later in the same poll.
func TestLiveResumeMidPollMissesNothing(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0).UTC() // the page's newest match
	s0 := time.Unix(1_800_000_000, 0).UTC() // when the page was made
	for _, earlier := range []bool{false, true} {
		t.Run("earlier poll "+strconv.FormatBool(earlier), func(t *testing.T) {
			inbox, _, srv := committedDashboard(t)
			query := "after=" + strconv.FormatInt(t0.UnixMilli(), 10) + "&since=" + strconv.FormatInt(s0.UnixMicro(), 10)
			events := liveStream(t, srv, query, "")
			if earlier {
				m0 := item(0, "acme zero", "al", "https://x.com/0")
				m0.Match.CreatedAt, m0.Match.Score = at(t0, 1), nil
				inbox.commit(m0)
				until(t, events, "m0")
			}

			// m2 arrives scored at s0+100; m3, a match the page shows,
			// was scored at s0+10, beyond the grace window before m2's.
			// Both in one poll: m2 in its created batch, m3 in its scored.
			m2 := item(2, "acme two", "bo", "https://x.com/2")
			m2.Match.CreatedAt, m2.ScoredAt = at(t0, 2), at(s0, 100)
			m3 := item(3, "acme three", "cy", "https://x.com/3")
			m3.Match.CreatedAt, m3.ScoredAt = at(t0, -100), at(s0, 10)
			inbox.mu.Lock()
			inbox.items = append(inbox.items, m2, m3)
			inbox.mu.Unlock()
			got := until(t, events, "m2")
			first := got[len(got)-1].cursor

			// The browser got m2 and nothing after it; it resumes.
			again := liveStream(t, srv, query, first)
			until(t, again, "m3")
		})
	}
}
