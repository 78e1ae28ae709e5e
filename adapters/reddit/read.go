package reddit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/redditjson"
)

// way is one of reddit's ways of answering: OAuth JSON, keyless JSON or
// the feeds. The keyless ways share one pacer, as they share reddit's
// budget for the address.
type way struct {
	via  string
	pace *pacer
	rest time.Duration // how long the way is left alone after it refused

	mu        sync.Mutex
	restUntil time.Time // refused lately: skipped until then, across reads and cycles
	reason    string    // why it refused last, shown while it rests
	refused   bool      // logged on change only
	remaining float64   // X-Ratelimit-Remaining of the last answer; -1 unknown

	// A refusal that may be a community's own (a 403 with no reason, an
	// HTML page) tells nothing by itself: reddit refuses a private
	// community's feed as it refuses a blocked address. suspects are the
	// communities of such refusals with no answer since, and why each was
	// refused; owned are those whose refusal was followed by an answer to
	// others, so it was theirs; answeredAt are those the way answered
	// lately, whose refusal is a change at the address, not theirs.
	suspects   map[string]suspect
	owned      map[string]time.Time
	answeredAt map[string]time.Time
	// controlling is set while a control read is out (see refusedUnclear),
	// so concurrent reads do not send a second one for the same rest.
	controlling bool
}

// closedMemory is how long a refusal known to be a community's own is
// taken as such without being learnt again, and how long an answer
// makes a refusal of the same communities the address's.
const closedMemory = 24 * time.Hour

// maxOwned bounds the refusals a way remembers as communities' own, and
// the answers it remembers.
const maxOwned = 4096

// maxSuspects is how many refusals of communities not known to answer,
// with no answer between, make the way ask a community it answered
// lately (a control read) or, with none to ask, are taken for a block of
// the address. More than one, so a closed community's two listings, or
// a few closed communities, cost no control read; few, so a block seen
// first on communities not answered lately costs few requests.
const maxSuspects = 4

// remember notes set at now in m, made if nil, dropping entries older
// than closedMemory (or all of them) when m is full.
func remember(m *map[string]time.Time, set string, now time.Time) {
	if *m == nil {
		*m = map[string]time.Time{}
	}
	if _, ok := (*m)[set]; !ok && len(*m) >= maxOwned {
		for k, t := range *m {
			if now.Sub(t) >= closedMemory {
				delete(*m, k)
			}
		}
		if len(*m) >= maxOwned {
			clear(*m)
		}
	}
	(*m)[set] = now
}

// answered notes that w answered a read of set: the suspect refusals of
// other communities before it were theirs, not the address's.
func (w *way) answered(set string, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answeredLocked(set, now)
}

func (w *way) answeredLocked(set string, now time.Time) {
	for s := range w.suspects {
		if s != set {
			remember(&w.owned, s, now)
		}
	}
	clear(w.suspects)
	delete(w.owned, set)
	remember(&w.answeredAt, set, now)
}

// refusedUnclear weighs a refusal of set that may be the communities' own
// or the address's. own: w answered others after set was last refused so,
// and it is set's. rest: w answered set lately, so the refusal is a
// change at the address (or set just closed, which costs one rest, once:
// its answer is forgotten); or maxSuspects such refusals came with no
// answer between and no community answered lately is left to ask.
// control: maxSuspects such refusals came with no answer between, and
// control is a community w answered lately: set is held as suspect, and
// the caller asks control once, then hands the outcome to controlled.
// Several closed communities read one after the other (their
// checkpoints are the oldest, cycle after cycle) would otherwise rest the
// way for everyone. None of these: set joins the suspects until an answer.
func (w *way) refusedUnclear(set, reason string, now time.Time) (own, rest bool, control string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.owned[set]; ok && now.Sub(t) < closedMemory {
		return true, false, ""
	}
	if t, ok := w.answeredAt[set]; ok {
		delete(w.answeredAt, set)
		if now.Sub(t) < closedMemory {
			clear(w.suspects)
			return false, true, ""
		}
	}
	if len(w.suspects)+1 >= maxSuspects && !w.controlling {
		control = w.controlFor(set, now)
		if control == "" {
			clear(w.suspects)
			return false, true, ""
		}
		w.controlling = true
	}
	if w.suspects == nil {
		w.suspects = map[string]suspect{}
	}
	w.suspects[set] = suspect{reason: reason, at: now}
	return false, false, control
}

// controlFor is the communities w answered last, within closedMemory,
// other than set and the suspects: the likeliest to answer again unless
// the address is refused. "" when there are none, as where a single
// community is watched. Called with mu held.
func (w *way) controlFor(set string, now time.Time) string {
	best, at := "", time.Time{}
	for s, t := range w.answeredAt {
		if _, held := w.suspects[s]; held || s == set || now.Sub(t) >= closedMemory {
			continue
		}
		if best == "" || t.After(at) || (t.Equal(at) && s < best) {
			best, at = s, t
		}
	}
	return best
}

// The outcomes of a control read.
const (
	controlAnswered = iota // the way answered it
	controlRefused         // asked, and refused or failed
	controlNotAsked        // no request went out (reddit's budget, the caller's ctx)
)

// controlled takes in how the control read of refusedUnclear went, and
// reports whether the way rests. Answered: the suspects' refusals were
// their own, as when the way answers any other read. Refused: the address
// is refused; the suspects are dropped, and the control's answer is
// forgotten, so should the control itself have just closed, that costs
// one rest, once. Not asked: nothing is known, and the way rests as it
// did before control reads.
func (w *way) controlled(control string, outcome int, now time.Time) (rest bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.controlling = false
	switch outcome {
	case controlAnswered:
		w.answeredLocked(control, now)
		return false
	case controlRefused:
		delete(w.answeredAt, control)
	}
	clear(w.suspects)
	return true
}

// suspect is an unclear refusal held until the way answers: why, and when.
type suspect struct {
	reason string
	at     time.Time
}

// suspected reports whether set is among the suspects of w, refused
// with no answer since, and why. A suspect is passed over for as long as
// a refused way would rest; then it is asked again, as the way would be.
func (w *way) suspected(set string, now time.Time) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.suspects[set]
	if ok && now.Sub(s.at) >= w.rest {
		delete(w.suspects, set)
		return "", false
	}
	return s.reason, ok
}

// unclear reports whether err is a refusal that may be about the
// communities read rather than the address: a 403 without reddit's JSON
// reason, a 451 (a community withheld in the reader's country), or an
// answer of the wrong shape (an HTML page, as after a redirect to a login
// or over-18 page). A 429, a 5xx, a time-out or a feed past its bounds
// says nothing about the communities.
func unclear(err error) bool {
	var f *failure
	if !errors.As(err, &f) || errors.As(err, new(feedBound)) {
		return false
	}
	return (f.status == http.StatusForbidden && f.closed == "") || f.status == http.StatusUnavailableForLegalReasons ||
		(f.status >= 200 && f.status <= 299)
}

// resting reports whether w refused lately and is left alone until its
// rest ends, and why it refused.
func (w *way) resting(now time.Time) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason, now.Before(w.restUntil)
}

// result records how a try went and reports whether that changed whether
// the way refuses, so a change is logged once rather than every read. A
// refusal rests the way until restUntil (never shortening a longer rest
// already named, such as a 429's).
func (w *way) result(ok bool, reason string, restUntil time.Time) (changed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	changed = w.refused == ok
	w.refused = !ok
	if ok {
		w.restUntil, w.reason = time.Time{}, ""
	} else if !restUntil.Before(w.restUntil) {
		// The refusal that decides how long the way rests names it: a
		// shorter one (another way's 429) would show its reason for the
		// rest of a longer rest it did not cause.
		w.restUntil, w.reason = restUntil, reason
	}
	return changed
}

func (w *way) setRemaining(r float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.remaining = r
}

func (w *way) getRemaining() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.remaining
}

// errBudget says reddit's budget, or the archive's, allows no request
// before the deadline.
type errBudget struct {
	wait    time.Duration
	archive bool
}

func (e errBudget) Error() string {
	of := "reddit's"
	if e.archive {
		of = "the archive's"
	}
	return fmt.Sprintf("%s budget allows the next request in %s", of, e.wait.Round(time.Second))
}

// Read implements ports.RedditSource.
func (s *Source) Read(ctx context.Context, q ports.RedditQuery) (ports.RedditRead, error) {
	if q.Listing != ports.RedditPosts && q.Listing != ports.RedditComments {
		return ports.RedditRead{}, core.Errorf(core.KindInvalid, "listing must be %s or %s", ports.RedditPosts, ports.RedditComments)
	}
	if len(q.Want) == 0 || len(q.Want) > ports.MaxRedditGroup {
		return ports.RedditRead{}, core.Errorf(core.KindInvalid, "a read takes 1 to %d communities", ports.MaxRedditGroup)
	}
	want := make([]ports.RedditWant, len(q.Want))
	seen := make(map[string]bool, len(q.Want))
	for i, w := range q.Want {
		name := strings.ToLower(strings.TrimSpace(w.Community))
		if !validCommunity(name) {
			return ports.RedditRead{}, core.Errorf(core.KindInvalid, "community must be 1 to 21 letters, digits or underscores")
		}
		if seen[name] {
			return ports.RedditRead{}, core.Errorf(core.KindInvalid, "r/%s is named twice in one read", name)
		}
		seen[name] = true
		want[i] = ports.RedditWant{Community: name, Since: w.Since}
	}
	q.Want = want
	group := groupName(want)

	var refused []ports.RedditRefusal // the ways asked that refused
	var all []ports.RedditRefusal     // and those resting, in the ways' order
	var causes []error
	requests := 0
	// With an error, a read still says what it tried (ports.RedditSource).
	tried := func() ports.RedditRead {
		return ports.RedditRead{Refused: refused, Requests: requests, Remaining: -1}
	}
	for _, w := range s.ways {
		if reason, ok := w.resting(s.now()); ok {
			// A refused way costs no request while it rests. Should no
			// way answer, it still says why, so the status keeps the
			// reason.
			all = append(all, ports.RedditRefusal{Via: w.via, Reason: reason, NotAsked: true})
			continue
		}
		if reason, ok := w.suspected(group, s.now()); ok {
			// The same communities again (their other listing), with no
			// answer between: asking would tell nothing new, so this way
			// is passed over for them, unasked. It does not rest for it:
			// a closed community's two listings, read one after the
			// other every cycle, would then rest it every cycle before it
			// could answer anyone else and learn the refusal was theirs.
			all = append(all, ports.RedditRefusal{Via: w.via, Reason: reason, NotAsked: true})
			continue
		}
		read, n, err := s.readReddit(ctx, w, q)
		requests += n
		if err == nil {
			w.answered(group, s.now())
			if w.result(true, "", time.Time{}) {
				s.log.Info("reddit answers again", "via", w.via, "communities", group)
			}
			read.Refused, read.Requests = refused, requests
			return read, nil
		}
		if err := ctx.Err(); err != nil {
			return tried(), core.Wrap(core.KindUnavailable, err, "reading r/"+group+" stopped")
		}
		var budget errBudget
		if errors.As(err, &budget) {
			// Pacing is not a refusal: the read waits for a later slot
			// rather than going to the archive. The ways before this one
			// that refused rest across cycles, so the next try starts
			// here, not at the first way.
			return tried(), core.Wrap(core.KindRateLimited, err, "r/"+group+" waits for reddit's budget")
		}
		var f *failure
		if errors.As(err, &f) && f.status == http.StatusNotFound {
			return tried(), core.Errorf(core.KindNotFound, "r/%s: reddit says no such community", group)
		}
		if errors.As(err, &f) && f.closed != "" {
			// The community's own refusal, not a block of the address:
			// the way does not rest, so the other communities are still
			// read, and the app reads this one alone from then on.
			return tried(), core.Errorf(core.KindNotFound, "r/%s: reddit says the community is %s", group, f.closed)
		}
		now := s.now()
		rest := true
		if unclear(err) {
			var own bool
			var control string
			if own, rest, control = w.refusedUnclear(group, err.Error(), now); own {
				// The way answered others since this read was last
				// refused so: the refusal is the communities' own.
				return tried(), core.Errorf(core.KindNotFound, "r/%s: reddit says the community is not readable (%s: %s)", group, w.via, err)
			}
			if control != "" {
				n, cerr := s.control(ctx, w, q.Listing, control, q.Deadline)
				requests += n
				outcome := controlAnswered
				switch {
				case cerr == nil:
				case n == 0:
					outcome = controlNotAsked
				default:
					outcome = controlRefused
				}
				rest = w.controlled(control, outcome, s.now())
				if ctx.Err() != nil {
					return tried(), core.Wrap(core.KindUnavailable, ctx.Err(), "reading r/"+group+" stopped")
				}
				if errors.As(cerr, &f) && f.status == http.StatusTooManyRequests {
					// The control met reddit's budget, not a block: rest
					// every way on it, as any 429 does.
					err = cerr
				}
				s.log.Info("reddit refused several communities in a row; asked one it answered lately", "via", w.via,
					"communities", group, "control", control, "answered", cerr == nil)
			}
		}
		if !rest {
			// Communities not known to answer, held as suspect: the way
			// stays open, and the reads that follow tell whether reddit
			// refuses the address or these communities.
			s.log.Info("reddit refused a read; the way rests if the next few are refused too", "via", w.via, "communities", group,
				"reason", err.Error())
		} else if errors.As(err, &f) && f.status == http.StatusTooManyRequests {
			// Reddit says the budget is spent: every way on it rests
			// until the time reddit named, and the archive covers the gap.
			until := w.pace.refused(now, s.shortRest)
			s.restOthers(w, err.Error(), until)
			if w.result(false, err.Error(), until) {
				s.log.Warn("reddit says its budget is spent; resting it", "via", w.via, "until", until, "communities", group)
			}
		} else if errors.As(err, new(feedBound)) {
			// A feed past its bounds is that one answer's fault, not the
			// way's: the next read still tries the feeds.
			s.log.Warn("reddit's feed answer was refused", "via", w.via, "communities", group, "reason", err.Error())
		} else {
			restUntil := now.Add(w.rest)
			if held := w.pace.heldUntil(); held.After(now) {
				// The failure named when to come back (a 503's
				// Retry-After): the other ways on this budget could only
				// wait for it, and a wait is not the archive. They rest
				// until then instead, so the archive covers the gap, as
				// after a 429.
				s.restOthers(w, err.Error(), held)
				restUntil = later(restUntil, held)
			}
			if w.result(false, err.Error(), restUntil) {
				s.log.Warn("reddit refused a way of reading; trying the next", "via", w.via, "communities", group,
					"reason", err.Error(), "cause", causeText(err), "rest", restUntil.Sub(now))
			}
		}
		refused = append(refused, ports.RedditRefusal{Via: w.via, Reason: err.Error()})
		all = append(all, refused[len(refused)-1])
		causes = append(causes, cause(err))
	}
	refused = all
	reasons := refusalText(refused)
	failed := tried()
	if s.mirror == nil {
		return failed, core.Wrap(core.KindUnavailable, errors.Join(causes...),
			fmt.Sprintf("r/%s: reddit %s; no archive set", group, reasons))
	}
	read, err := s.readArchive(ctx, q)
	if err != nil {
		if err := ctx.Err(); err != nil {
			return failed, core.Wrap(core.KindUnavailable, err, "reading r/"+group+" stopped")
		}
		var budget errBudget
		if errors.As(err, &budget) {
			// As for reddit's budget: nothing was sent, and the read is
			// left for a later slot.
			return failed, core.Wrap(core.KindRateLimited, err, "r/"+group+" waits for the archive's budget")
		}
		// An archive that rests was not asked; the 429 that starts a rest was.
		var rests errArchiveRests
		notAsked := errors.As(err, &rests) && !rests.asked
		failed.Refused = append(failed.Refused, ports.RedditRefusal{Via: ports.RedditViaArchive, Reason: err.Error(), NotAsked: notAsked})
		return failed, core.Wrap(core.KindUnavailable, errors.Join(append(causes, cause(err))...),
			fmt.Sprintf("r/%s: reddit %s; archive %s", group, reasons, err))
	}
	read.Refused, read.Requests = refused, requests
	s.log.Debug("read", "communities", group, "via", ports.RedditViaArchive, "posts", len(read.Posts), "reddit", reasons)
	return read, nil
}

func groupName(want []ports.RedditWant) string {
	names := make([]string, len(want))
	for i, w := range want {
		names[i] = w.Community
	}
	return strings.Join(names, "+")
}

func refusalText(rs []ports.RedditRefusal) string {
	if len(rs) == 0 {
		return "not asked"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Via + ": " + r.Reason
	}
	return strings.Join(parts, ", ")
}

// entry is one post of a page, from either JSON or a feed.
type entry struct {
	id       string // fullname
	created  time.Time
	sticky   bool // pinned: may be old and still head a listing
	post     ports.RedditPost
	ok       bool // false: deleted or removed, skipped
	sortable bool // has a creation time
}

// readReddit reads one listing of the wanted communities through w, as
// one merged listing, and reports the span each community was seen whole.
// n is the number of requests made.
func (s *Source) readReddit(ctx context.Context, w *way, q ports.RedditQuery) (ports.RedditRead, int, error) {
	since := make(map[string]time.Time, len(q.Want))
	names := make([]string, len(q.Want))
	var oldest time.Time // the earliest since; zero when some community is new
	newest := false
	for i, wt := range q.Want {
		since[wt.Community] = wt.Since
		names[i] = wt.Community
		if wt.Since.IsZero() {
			newest = true
		} else if oldest.IsZero() || wt.Since.Before(oldest) {
			oldest = wt.Since
		}
	}
	single := ""
	if len(names) == 1 {
		single = names[0]
	}
	path := "/r/" + strings.Join(names, "+") + "/" + string(q.Listing)
	if w.via == ports.RedditViaFeed {
		path += "/.rss"
	} else {
		path += ".json"
	}
	// A post made after the first request is taken may be missed by the
	// later pages; the read covers up to the moment it began.
	until := s.now()
	var posts []ports.RedditPost
	counts := map[string]int{}
	reached := time.Time{} // the oldest ordinary post seen
	ended := false         // the listing has nothing older
	after := ""
	cursors := map[string]bool{} // the cursors followed so far
	n := 0
	for page := 0; page < MaxPages; page++ {
		qs := url.Values{"limit": {strconv.Itoa(pageSize)}}
		if w.via != ports.RedditViaFeed {
			qs.Set("raw_json", "1")
		}
		if after != "" {
			qs.Set("after", after)
		}
		entries, next, end, err := s.fetchPage(ctx, w, path, qs, q.Deadline, single, &n)
		if err != nil {
			return ports.RedditRead{}, n, err
		}
		for _, e := range entries {
			if !e.sortable {
				continue
			}
			if !e.sticky && (reached.IsZero() || e.created.Before(reached)) {
				reached = e.created
			}
			c := e.post.Community
			cs, wanted := since[c]
			if !wanted || !e.ok || (!cs.IsZero() && !e.created.After(cs)) {
				continue
			}
			posts = append(posts, e.post)
			counts[c]++
		}
		if end {
			// Reddit's listings stop at about MaxPages pages, and the
			// page at that cap ends like the listing's true end: only an
			// end before it says nothing older exists.
			ended = page < MaxPages-1
			break
		}
		if next == "" || newest || (!reached.IsZero() && !reached.After(oldest)) {
			break
		}
		if cursors[next] {
			// A cursor already followed leads back to a page already
			// read: following it again would spend the page cap on that
			// page, and stopping here would cover a span never reached.
			// The listing is of no use this time; the next way reads it.
			return ports.RedditRead{}, n, &failure{reason: "listing repeats its cursor"}
		}
		cursors[next] = true
		after = next
	}
	covered := make([]ports.RedditCover, len(q.Want))
	for i, wt := range q.Want {
		from := reached
		if ended {
			from = time.Time{}
		}
		covered[i] = ports.RedditCover{
			Community: wt.Community, From: from, Until: until, Posts: counts[wt.Community],
			Complete: wt.Since.IsZero() || !from.After(wt.Since),
		}
	}
	return ports.RedditRead{
		Posts: newestFirst(posts), Covered: covered, Source: core.SourceReddit, Via: w.via, Remaining: w.getRemaining(),
	}, n, nil
}

// fetchPage fetches and decodes one page of a listing through w, within
// the budget. A 401 on an OAuth read drops the token and tries once more
// with a fresh one. next is the cursor of the following page; end says
// the listing has nothing older.
func (s *Source) fetchPage(ctx context.Context, w *way, path string, qs url.Values,
	deadline time.Time, single string, n *int) ([]entry, string, bool, error) {
	for attempt := 0; ; attempt++ {
		now := s.now()
		limit := s.maxWait
		if !deadline.IsZero() && deadline.Sub(now) < limit {
			limit = deadline.Sub(now)
		}
		wait, ok := w.pace.reserve(now, limit)
		if !ok {
			return nil, "", false, errBudget{wait: wait}
		}
		if wait > 0 {
			if err := s.sleep(ctx, wait); err != nil {
				return nil, "", false, err
			}
		}
		base, token := s.base, ""
		if w.via == ports.RedditViaOAuth {
			var err error
			if token, err = s.tokens.get(ctx); err != nil {
				return nil, "", false, err
			}
			base = s.oauthURL
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?"+qs.Encode(), nil)
		if err != nil {
			return nil, "", false, &failure{reason: "request could not be built", cause: err}
		}
		req.Header.Set("User-Agent", s.ua)
		if w.via == ports.RedditViaFeed {
			req.Header.Set("Accept", "application/atom+xml")
		} else {
			req.Header.Set("Accept", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "bearer "+token)
		}
		*n++
		status, body, err := s.do(req, w)
		if err != nil {
			return nil, "", false, err
		}
		if status == http.StatusUnauthorized && token != "" && attempt == 0 {
			s.tokens.drop(token)
			continue
		}
		if status < 200 || status > 299 {
			return nil, "", false, &failure{reason: fmt.Sprintf("http %d", status), status: status, closed: closedReason(status, body)}
		}
		if w.via == ports.RedditViaFeed {
			es, held, err := decodeFeedPage(body, single)
			if err != nil {
				return nil, "", false, feedFailure(err, status)
			}
			// A feed has no cursor: a page that held fewer than a full
			// page's entries is its end, even when some were left out.
			next := ""
			if len(es) > 0 {
				next = es[len(es)-1].id
			}
			return es, next, held < pageSize, nil
		}
		l, err := redditjson.DecodeListing(body)
		if err != nil {
			if errors.Is(err, redditjson.ErrNotListing) {
				return nil, "", false, &failure{reason: "answer is not a listing", status: status}
			}
			return nil, "", false, &failure{reason: "answer is not JSON", status: status, cause: err}
		}
		// Reddit's JSON may hand out a short page with a cursor (posts it
		// filtered out), so only the cursor ends it.
		es := listingEntries(l.Items, single)
		return es, l.After, l.After == "" || len(es) == 0, nil
	}
}

// control asks w for one item of the listing l of set, a read it
// answered lately, paced as any request. Its answer says only whether the
// way still answers; its items are left to set's own reads. n is the
// number of requests made.
func (s *Source) control(ctx context.Context, w *way, l ports.RedditListing, set string, deadline time.Time) (n int, err error) {
	path := "/r/" + set + "/" + string(l)
	qs := url.Values{"limit": {"1"}}
	if w.via == ports.RedditViaFeed {
		path += "/.rss"
	} else {
		path += ".json"
		qs.Set("raw_json", "1")
	}
	_, _, _, err = s.fetchPage(ctx, w, path, qs, deadline, "", &n)
	return n, err
}

// listingEntries turns a JSON page into entries. single is the community
// to credit a post to when it names none (a read of one community).
func listingEntries(items []redditjson.Item, single string) []entry {
	out := make([]entry, 0, len(items))
	for _, i := range items {
		it := item(i)
		e := entry{sticky: it.Stickied, created: it.CreatedUTC.Time()}
		e.sortable = !e.created.IsZero()
		e.id, _ = redditjson.Fullname(it.Kind, it.Name, it.ID)
		e.post, e.ok = it.post(single)
		if !e.ok {
			// A skipped post still counts for how far the listing reached,
			// so it needs its community only to be ignored.
			e.post.Community = strings.ToLower(it.Subreddit)
		}
		out = append(out, e)
	}
	return out
}

// readArchive reads the listing of each wanted community from the archive,
// one community at a time. A community is covered from its Since up to the
// newest item the archive holds of it: an archive that lags has not seen
// what came after, and the caller's checkpoint must not move past it. A
// read cut by the page cap is covered up to where it stopped. A read the
// archive's budget or rest stops part way covers the communities it read
// whole and leaves the others out of Covered, unread, for a later read;
// stopped before any, it fails with the budget's or the rest's error.
func (s *Source) readArchive(ctx context.Context, q ports.RedditQuery) (ports.RedditRead, error) {
	ep := s.mirror.endpoints()[0]
	if q.Listing == ports.RedditComments {
		ep = s.mirror.endpoints()[1]
	}
	at := s.now()
	read := ports.RedditRead{Source: core.SourceMirror, Via: ports.RedditViaArchive, Remaining: -1,
		ArchiveLag: map[string]time.Duration{}}
	// Those the archive read least lately first: a read its budget stops
	// part way leaves the others, and they go first the next time, rather
	// than the same first communities every time (a quiet community's
	// checkpoint does not move, so its Since says nothing of that).
	want := s.mirror.leastLately(ep.path, q.Want)
	for _, w := range want {
		posts, newest, cut, err := s.readMirror(ctx, ep, w.Community, w.Since, q.Deadline)
		if err != nil {
			if len(read.Covered) == 0 || !archiveStop(err) || ctx.Err() != nil {
				return ports.RedditRead{}, err
			}
			s.log.Info("the archive's budget or rest stopped a read part way; the communities left are read later",
				"listing", q.Listing, "read", len(read.Covered), "left", len(q.Want)-len(read.Covered), "reason", err.Error())
			break
		}
		if newest.After(at) {
			// An item dated after the read is a wrong date, not a post the
			// archive has from the future: the cover ends at the read, so
			// the checkpoint, which never moves back, hides no later post.
			newest = at
		}
		end := newest
		if cut {
			// Read oldest first from Since and stopped: all before the
			// newest item's second was read, and more of that second may
			// follow. The rest is read from there next time.
			end = newest.Add(-time.Second)
			s.log.Info("the archive holds more than one read takes; the rest is read next time", "community", w.Community,
				"listing", q.Listing, "until", end)
		} else if !newest.IsZero() {
			// The archive's newest item only when the read reached its
			// end; a cut read says nothing of how far behind it is.
			read.ArchiveLag[w.Community] = max(at.Sub(newest), 0)
		}
		until := w.Since
		if end.After(until) {
			until = end
		}
		s.mirror.readAt(ep.path, w.Community, s.now())
		read.Posts = append(read.Posts, posts...)
		read.Covered = append(read.Covered, ports.RedditCover{
			Community: w.Community, From: w.Since, Until: until, Posts: len(posts), Complete: true,
		})
	}
	read.Posts = newestFirst(read.Posts)
	return read, nil
}

// restOthers rests, until then, every way but w that shares w's budget,
// for reason.
func (s *Source) restOthers(w *way, reason string, until time.Time) {
	for _, o := range s.ways {
		if o.pace == w.pace && o != w {
			o.result(false, reason, until)
		}
	}
}
