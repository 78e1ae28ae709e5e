package reddit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/redditjson"
)

// DefaultMirrorPerMinute is the archive's budget, in requests a minute,
// when Config.MirrorPerMinute is not set. Neither archive publishes one,
// and both are run by volunteers: one request a second, what public
// services run by volunteers commonly ask of a client, reads a group of a
// hundred communities in under two minutes, and both listings of 270 in
// a default cycle's nine minutes.
const DefaultMirrorPerMinute = 60

// MirrorBurst is how many archive requests may go at once after a quiet
// spell. The archive is asked one community at a time, so a read of a
// small group costs a request per community where reddit answers it in
// one; a few at once let it end within a short cycle, while a long read
// is spaced by the budget.
const MirrorBurst = 5

// mirror is an archive of reddit that answers when reddit does not.
type mirror struct {
	url  string // base address, no trailing slash
	api  string // MirrorArcticShift or MirrorPullPush
	pace *pacer // the archive's own budget

	mu        sync.Mutex
	restUntil time.Time // after a 429: not asked until then
	reason    string    // why it rests
	// read is when each endpoint's community was last read whole, at
	// most maxOwned of them (see remember).
	read map[string]time.Time
}

// leastLately orders want by when the archive last read each of them
// through path, never first, and otherwise as given.
func (m *mirror) leastLately(path string, want []ports.RedditWant) []ports.RedditWant {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Clone(want)
	slices.SortStableFunc(out, func(a, b ports.RedditWant) int {
		return m.read[path+" "+a.Community].Compare(m.read[path+" "+b.Community])
	})
	return out
}

// readAt notes that the archive read community through path whole at now.
func (m *mirror) readAt(path, community string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	remember(&m.read, path+" "+community, now)
}

// resting reports whether the archive rests at now, why and until when.
func (m *mirror) resting(now time.Time) (errArchiveRests, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return errArchiveRests{until: m.restUntil, reason: m.reason}, now.Before(m.restUntil)
}

// rest rests the archive until until, never shortening a longer rest, and
// reports whether it was not resting before.
func (m *mirror) rest(now, until time.Time, reason string) (started bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	started = !now.Before(m.restUntil)
	if until.After(m.restUntil) {
		m.restUntil, m.reason = until, reason
	}
	return started
}

// errArchiveRests is a read refused because the archive rests after a 429.
type errArchiveRests struct {
	until  time.Time
	reason string
	asked  bool // the archive's own 429, rather than a rest that sent nothing
}

func (e errArchiveRests) Error() string {
	return fmt.Sprintf("%s, resting until %s", e.reason, e.until.UTC().Format(time.RFC3339))
}

// archiveStop reports whether err ended an archive read for the archive's
// budget or rest rather than for the community read: the communities read
// before it stand.
func archiveStop(err error) bool {
	return errors.As(err, new(errBudget)) || errors.As(err, new(errArchiveRests))
}

// endpoint is one of a mirror's search paths and the kind of thing it holds.
type endpoint struct {
	path string
	kind string
}

func (m *mirror) endpoints() []endpoint {
	if m.api == MirrorPullPush {
		return []endpoint{{"/reddit/search/submission/", redditjson.KindPost}, {"/reddit/search/comment/", redditjson.KindComment}}
	}
	return []endpoint{{"/api/posts/search", redditjson.KindPost}, {"/api/comments/search", redditjson.KindComment}}
}

// query asks for the things of community made after after (unix seconds;
// none when 0), oldest first when asc, else newest first. No text query is
// ever sent: the mirrors' search is stemmed and would both miss and invent
// matches.
func (m *mirror) query(community string, after int64, asc bool) url.Values {
	order := "desc"
	if asc {
		order = "asc"
	}
	q := url.Values{"subreddit": {community}, "sort": {order}}
	if m.api == MirrorPullPush {
		q.Set("size", strconv.Itoa(pageSize))
		q.Set("sort_type", "created_utc")
	} else {
		q.Set("limit", strconv.Itoa(pageSize))
	}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	return q
}

// readMirror reads one endpoint's things of community made after since,
// oldest first: a read the page cap cuts then holds everything from since
// up to where it stopped, and the rest is read from there next time. Read
// newest first instead, a cut read would leave a span between since and
// its oldest item that the next read, starting at the newest item, never
// reaches, although the archive holds it (it has no listing cap). The
// archives have no cursor: a full page is followed by one that starts just
// before the newest time seen (after = newest - 1 s, so things sharing
// that second are not lost) and repeats are dropped, until a short page,
// a page with nothing new, or MaxPages. newest is the newest item's time
// (zero when none); cut says the read stopped before the archive's end,
// so only the things made before newest's second were all read. With no
// since there is nothing to reach back to, and the newest page is read.
func (s *Source) readMirror(ctx context.Context, ep endpoint, community string, since, deadline time.Time) (out []ports.RedditPost, newest time.Time, cut bool, err error) {
	seen := map[string]bool{}
	var after int64
	if !since.IsZero() {
		after = since.Unix()
	}
	for page := 0; ; page++ {
		if page == MaxPages {
			return newestFirst(out), newest, true, nil
		}
		items, held, err := s.mirrorPage(ctx, ep, s.mirror.query(community, after, !since.IsZero()), deadline)
		if err != nil {
			return nil, time.Time{}, false, err
		}
		fresh := 0
		ordered := true
		var last time.Time // the newest time on this page
		for _, it := range items {
			created := it.CreatedUTC.Time()
			if created.IsZero() {
				continue
			}
			if created.Before(last) {
				ordered = false
			}
			last = later(last, created)
			if !since.IsZero() && !created.After(since) {
				continue
			}
			id, ok := redditjson.Fullname(it.Kind, it.Name, it.ID)
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			fresh++
			newest = later(newest, created)
			if rp, ok := it.post(community); ok {
				out = append(out, rp)
			}
		}
		if since.IsZero() || held < pageSize {
			return newestFirst(out), newest, false, nil
		}
		if !ordered {
			// An archive that ignored sort=asc: the next page, after this
			// one's newest, would skip what lies between. Nothing is
			// taken, so the checkpoint stays.
			return nil, time.Time{}, false, &failure{reason: "answer is not sorted oldest first"}
		}
		if fresh == 0 {
			// A full page of what was seen already: more than a page of
			// things share one second, and the read ends before it.
			return newestFirst(out), newest, true, nil
		}
		after = last.Unix() - 1
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// mirrorPage fetches and decodes one page of a mirror search, within the
// archive's budget; held is how many elements it held, decoded or not.
// While the archive rests nothing is sent (errArchiveRests); a slot past
// deadline, or more than the Source's longest wait away, sends nothing
// either (errBudget).
func (s *Source) mirrorPage(ctx context.Context, ep endpoint, q url.Values, deadline time.Time) ([]item, int, error) {
	m := s.mirror
	now := s.now()
	if rests, ok := m.resting(now); ok {
		return nil, 0, rests
	}
	limit := s.maxWait
	if !deadline.IsZero() && deadline.Sub(now) < limit {
		limit = deadline.Sub(now)
	}
	wait, ok := m.pace.reserve(now, limit)
	if !ok {
		return nil, 0, errBudget{wait: wait, archive: true}
	}
	if wait > 0 {
		if err := s.sleep(ctx, wait); err != nil {
			return nil, 0, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url+ep.path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, 0, &failure{reason: "request could not be built"}
	}
	req.Header.Set("User-Agent", s.ua)
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, 0, transportFailure("", err)
	}
	defer resp.Body.Close()
	// Retry-After, on a 429 or any other answer, holds the next slot
	// back, trusted up to a day as reddit's.
	m.pace.observe(s.now(), resp.Header)
	if resp.StatusCode == http.StatusTooManyRequests {
		now := s.now()
		reason := fmt.Sprintf("http %d", resp.StatusCode)
		until := m.pace.refused(now, s.shortRest)
		if m.rest(now, until, reason) {
			s.log.Warn("the archive says it is asked too often; resting it", "until", until)
		}
		return nil, 0, errArchiveRests{until: until, reason: reason, asked: true}
	}
	body, err := readBody(resp.Body)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, 0, &failure{reason: fmt.Sprintf("http %d", resp.StatusCode), status: resp.StatusCode}
	}
	items, held, err := decodeMirrorPage(body, ep.kind)
	if err != nil {
		if !json.Valid(body) {
			return nil, 0, &failure{reason: "answer is not JSON", cause: err}
		}
		return nil, 0, &failure{reason: "answer is not a search result", cause: err}
	}
	return items, held, nil
}
