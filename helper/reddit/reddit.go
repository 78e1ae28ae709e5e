// Package reddit is the helper's reddit reader: the newest posts and
// comments of the communities an owner's reddit phrases listen in, read
// from reddit's own JSON listings (/r/a+b/new.json and
// /r/a+b/comments.json) with the owner's session when there is one,
// through the client the helper's runner hands it (the operator's proxy).
//
// It keeps its own small decoder of reddit's Listing JSON rather than
// importing the server's reddit adapter: the helper package may import
// only core and the standard library, so that anyone can embed it.
package reddit

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/redditjson"
)

// Defaults of a Reader.
const (
	// DefaultBaseURL is reddit's web address.
	DefaultBaseURL = "https://www.reddit.com"
	// DefaultPace is the least time between two requests of one account:
	// one every 6 seconds, 10 a minute, below what reddit's own web
	// client asks while a person scrolls, and what reddit's rules allow a
	// client without OAuth.
	DefaultPace = 6 * time.Second
	// MaxPages is the most pages of one listing a read takes (100 posts
	// each) to catch up with its checkpoint; a first read takes one.
	MaxPages = 3
	// MaxGroup is the most communities one request names (/r/a+b+c).
	MaxGroup = 50
	// maxAnswer bounds what is read of one answer, before parsing: the
	// server's reader's bound (adapters/reddit). A listing carries each
	// self post twice, selftext and selftext_html, and reddit allows
	// 40,000 characters a post, so a page of 100 long posts is about
	// 8 MB.
	maxAnswer = 16 << 20
	pageSize  = 100
	// UserAgent names the program honestly; reddit refuses empty and
	// generic library agents.
	UserAgent = "earshot-helper/1 (reads an owner's own reddit listings)"
	// ClosedRetry is how long a community reddit refused for its own
	// reason is left out before it is read alone again, to learn whether
	// it reopened: a community goes private for days or weeks (as
	// thousands did in June 2023), so once a day costs one request a day
	// and shows a reopening within a day.
	ClosedRetry = 24 * time.Hour
	// ForgetAfter is how long the checkpoints of a community no longer
	// watched are kept: the state file is written whole at every batch,
	// so kept for ever they would grow it with every community ever
	// read. A community added back within it (a phrase paused, or moved
	// and moved back) is caught up from where it was; after it, the
	// community is read as a new one is, as x's and facebook's phrases
	// are.
	ForgetAfter = 7 * 24 * time.Hour
)

// Reader reads reddit for one account. One Reader serves one account:
// its pacing is that account's.
type Reader struct {
	BaseURL   string        // "" is DefaultBaseURL; a mirror or a test server
	Pace      time.Duration // 0 is DefaultPace; below zero does not pace (tests)
	UserAgent string        // "" is UserAgent
	// Now and Sleep are the clock; nil uses the system's. Tests replace them.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Log tells the owner of the communities reddit refuses; nil is
	// slog.Default().
	Log *slog.Logger

	next time.Time // the earliest the next request may go
	// closed holds the communities reddit refused for their own reason,
	// at most the owner's communities (the others are forgotten at each
	// read). It is kept in memory, not in the state file: a restart costs
	// one split of the group (at most its size in requests), which finds
	// the community again, while entries in the file would be written
	// with every batch and outlive the phrases that named them until
	// forgotten.
	closed map[string]closedCommunity
	// names are the communities of the current (or last) read, sorted;
	// done those of them it has read, both listings. The others are
	// Unread: refused, or not come to yet.
	names []string
	done  map[string]bool
	// readTo holds, per listing, how far back each community of the read
	// was read in a pass that found none of its posts (see readMarks).
	readTo map[string]map[string]float64
}

// closedCommunity is what is known of a community reddit refused.
type closedCommunity struct {
	reason string
	tried  time.Time // when it was last refused
	warned time.Time // when the owner was last told
}

var (
	_ helper.Unreader = (*Reader)(nil)
	_ helper.Keeper   = (*Reader)(nil)
)

// Unread implements helper.Unreader: the communities of the read that it
// has not read, reddit having refused them (closed, read alone once a
// day, or refused again within the read) or the read not having come to
// them yet; nil when it read them all. The server leaves their phrases'
// lastCheckedAt where it was.
func (r *Reader) Unread() []string {
	var out []string
	for _, c := range r.names {
		if !r.done[c] {
			out = append(out, c)
		}
	}
	return out
}

// Platform implements helper.Reader.
func (r *Reader) Platform() string { return "reddit" }

// Listings are the two listings read of each community.
var Listings = []string{"new", "comments"}

// Key is the checkpoint key of a community's listing.
func Key(listing, community string) string { return "reddit:" + listing + ":" + community }

// readToKey is the key of a listing's read marks, kept beside the
// checkpoints (helper.In.Save): a JSON object giving each community the
// newest time (seconds since the epoch) of the last read that went as
// far as a read goes and kept none of its posts, so the next read need
// not page back past it for that community. It cannot be one of Key's:
// no listing is named "readto".
func readToKey(listing string) string { return "reddit:readto:" + listing }

// watchedKey is the key of the communities watched lately, kept beside
// the checkpoints (helper.In.Save): a JSON object giving each the time
// (seconds since the epoch) of the last read that watched it, for those
// of the last ForgetAfter. It cannot be one of Key's, having one colon.
const watchedKey = "reddit:watched"

// watched decodes the communities kept as v; a value that does not
// decode is none.
func watched(v string) map[string]int64 {
	var m map[string]int64
	if json.Unmarshal([]byte(v), &m) != nil || m == nil {
		m = map[string]int64{}
	}
	return m
}

// communities are the valid communities of phrases, as a read names
// them: lower case, without r/, sorted, once each.
func communities(phrases []helper.Phrase) []string {
	var names []string
	for _, p := range phrases {
		c := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(p.Community), "/"), "r/"))
		if validCommunity(c) {
			names = append(names, c)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// watchedStale is how old the time a community was last watched may
// grow before a read writes it again: the state file is written whole
// and synced, and a week's bound needs no finer time than this.
const watchedStale = time.Hour

// remember records that names are watched now, and forgets the
// communities not watched for ForgetAfter.
func (r *Reader) remember(in helper.In, names []string) error {
	if in.Save == nil {
		return nil
	}
	now := r.now()
	m := watched(in.Since(watchedKey))
	changed := false
	for _, c := range names {
		// A time ahead of the clock (set back since) is written again too.
		if t, ok := m[c]; !ok || now.Sub(time.Unix(t, 0)) >= watchedStale || t > now.Unix() {
			m[c], changed = now.Unix(), true
		}
	}
	n := len(m)
	maps.DeleteFunc(m, func(_ string, t int64) bool { return !now.Before(time.Unix(t, 0).Add(ForgetAfter)) })
	if !changed && len(m) == n {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := in.Save(watchedKey, string(b)); err != nil {
		return fmt.Errorf("reddit: keeping the communities watched: %w", err)
	}
	return nil
}

// Keeps implements helper.Keeper: the checkpoints of the communities of
// phrases and of those watched within ForgetAfter, and every key that is
// not a community's checkpoint.
func (r *Reader) Keeps(phrases []helper.Phrase, get func(string) string) func(string) bool {
	now := r.now()
	live := map[string]bool{}
	for c, t := range watched(get(watchedKey)) {
		if now.Before(time.Unix(t, 0).Add(ForgetAfter)) {
			live[c] = true
		}
	}
	for _, c := range communities(phrases) {
		live[c] = true
	}
	return func(k string) bool {
		for _, l := range Listings {
			if c, ok := strings.CutPrefix(k, Key(l, "")); ok {
				return live[c]
			}
		}
		return true
	}
}

// Read implements helper.Reader: for each group of communities, the new
// posts and the new comments since each community's checkpoint.
//
// A refusal reddit gives for a community itself (see refusal) is not the
// account's: it is not reported through in.Report and pauses nothing.
// Reddit refuses a group naming such a community whole, so the group is
// read one community at a time to find it; the community is then left
// out of the groups and read alone once every ClosedRetry. Its
// checkpoints do not move while it is refused, so what it posts once
// reopened is read from where it stopped.
func (r *Reader) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	names := communities(in.Phrases)
	r.names, r.done = names, make(map[string]bool, len(names))
	if err := r.remember(in, names); err != nil {
		return err
	}
	r.readTo = make(map[string]map[string]float64, len(Listings))
	for _, l := range Listings {
		r.readTo[l] = readMarks(in.Since(readToKey(l)), names)
	}
	for c := range r.closed {
		if _, ok := slices.BinarySearch(names, c); !ok {
			delete(r.closed, c)
		}
	}
	now := r.now()
	var open, due []string
	for _, c := range names {
		cc, ok := r.closed[c]
		switch {
		case !ok:
			open = append(open, c)
		case !now.Before(cc.tried.Add(ClosedRetry)):
			due = append(due, c)
		}
	}
	cookie := helper.CookieHeader(in.Session, "reddit.com")
	// An answer over maxAnswer is that group's, not the account's: the
	// groups after it are read all the same, and the first such answer
	// is reported once they are.
	var big error
	bigs := 0
	read := func(group []string) error {
		err := r.readGroup(ctx, in, group, cookie, emit)
		var tb *tooBig
		if !errors.As(err, &tb) {
			return err
		}
		r.log().Warn("reddit's answer is over the bound; its communities are left unread and the others read",
			"path", tb.path, "bound", maxAnswer)
		if bigs++; big == nil {
			big = err
		}
		return nil
	}
	for group := range slices.Chunk(open, MaxGroup) {
		if err := read(group); err != nil {
			return err
		}
	}
	for _, c := range due {
		if err := read([]string{c}); err != nil {
			return err
		}
	}
	if bigs > 1 {
		return fmt.Errorf("%w (and %d more answers over the bound)", big, bigs-1)
	}
	return big
}

// tooBig is an answer over maxAnswer.
type tooBig struct{ path string }

func (e *tooBig) Error() string {
	return fmt.Sprintf("reddit: %s: the answer is over %d bytes and was cut off", e.path, maxAnswer)
}

// readGroup reads each listing of group. A group reddit refuses for a
// community's own reason is read one community at a time, once in a
// read, for that listing; the communities refused alone are closed and
// the others read on together.
func (r *Reader) readGroup(ctx context.Context, in helper.In, group []string, cookie string, emit func(helper.Post, helper.Mark) error) error {
	split := false
	for _, listing := range Listings {
		if len(group) == 0 {
			return nil
		}
		err := r.readListing(ctx, in, group, listing, cookie, emit)
		var ref *refusal
		switch {
		case !errors.As(err, &ref):
			if err != nil {
				return err
			}
		case len(group) == 1:
			r.close(group[0], ref.reason)
			return nil
		case split:
			// Refused again after a split found its closed communities:
			// one more split would double its cost. The checkpoints stay,
			// so the next read takes this listing up where it stopped.
			r.log().Warn("reddit refused a group of communities again in the same read; its listing is read next time",
				"listing", listing, "communities", len(group), "reason", ref.reason)
			return nil
		default:
			split = true
			var still []string
			for _, c := range group {
				err := r.readListing(ctx, in, []string{c}, listing, cookie, emit)
				if errors.As(err, &ref) {
					r.close(c, ref.reason)
					continue
				}
				if err != nil {
					return err
				}
				still = append(still, c)
			}
			group = still
		}
	}
	for _, c := range group {
		r.done[c] = true
		if cc, ok := r.closed[c]; ok {
			delete(r.closed, c)
			r.log().Info("reddit reads the community again; its posts since it closed are read from its checkpoint",
				"community", "r/"+c, "closedFor", cc.reason)
		}
	}
	return nil
}

// close records that reddit refused community for reason, and tells the
// owner, at most once every ClosedRetry per community.
func (r *Reader) close(community, reason string) {
	now := r.now()
	if r.closed == nil {
		r.closed = map[string]closedCommunity{}
	}
	cc := r.closed[community]
	cc.reason, cc.tried = reason, now
	if cc.warned.IsZero() || !now.Before(cc.warned.Add(ClosedRetry)) {
		cc.warned = now
		r.log().Warn("reddit refuses the community itself: it is not read with the others and is tried alone once a day until it reopens",
			"community", "r/"+community, "reason", reason, "nextTry", now.Add(ClosedRetry))
	}
	r.closed[community] = cc
}

func (r *Reader) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.Default()
}

type found struct {
	post helper.Post
	mark helper.Mark
}

// readListing reads listing for group back to the group's oldest stop,
// and hands on the posts after their community's checkpoint, oldest
// first.
//
// A community's stop is its checkpoint, or its read mark when that is
// later: a quiet community's checkpoint moves only with a post of its
// own, so, days back, it would make every pass page the listing to
// MaxPages. A read that went as far as a read goes (the listing's end,
// the group's stop, MaxPages, or one page on a first read) marks each
// community of which it kept no post as read down from the newest time
// on its first page; the next read pages back only to there for it. A
// community of which it kept a post loses its mark, so that a community
// that posts is read back to its own checkpoint, as before. The mark
// bounds the paging only: what is kept is still what is after the
// community's checkpoint.
func (r *Reader) readListing(ctx context.Context, in helper.In, group []string, listing, cookie string, emit func(helper.Post, helper.Mark) error) error {
	marks := r.readTo[listing]
	since := map[string]float64{}
	least := 0.0 // the group's oldest stop, 0 when none has one
	for _, c := range group {
		v, _ := strconv.ParseFloat(in.Since(Key(listing, c)), 64)
		since[c] = v
		if stop := max(v, marks[c]); stop > 0 && (least == 0 || stop < least) {
			least = stop
		}
	}
	path := "/r/" + strings.Join(group, "+") + "/" + listing + ".json"
	// A checkpoint moves no further than the read: a post dated after it
	// (a mirror's wrong date) would otherwise hide every post made before
	// that date.
	at := float64(r.now().Unix())
	var kept []found // newest first, as reddit lists them
	after := ""
	// A cursor that leads back to a page already read would cost a
	// request and send the same posts again: each is followed once, and
	// each post kept once.
	followed, seen := map[string]bool{}, map[string]bool{}
	top := 0.0     // the newest time on the first page
	whole := false // the read went as far as a read goes
	posted := map[string]bool{}
	for page := 0; ; page++ {
		items, next, err := r.fetch(ctx, in, path, after, cookie)
		if err != nil {
			return err
		}
		oldest := 0.0
		for _, it := range items {
			created := float64(it.CreatedUTC)
			if oldest == 0 || created < oldest {
				oldest = created
			}
			if page == 0 && created > top && !it.CreatedUTC.Time().IsZero() {
				top = created
			}
			post, community, ok := item(it).post(group)
			if !ok || created < since[community] || seen[post.ExternalID] {
				continue
			}
			seen[post.ExternalID] = true
			posted[community] = true
			kept = append(kept, found{post, helper.Mark{Key: Key(listing, community), Value: strconv.FormatFloat(min(created, at), 'f', -1, 64)}})
		}
		// Further back only to catch up with a stop: a first read takes
		// the newest page. A page without posts that names a cursor, or a
		// cursor back to a page read, ends the read short of its stop.
		if next == "" || least == 0 || (oldest != 0 && oldest < least) || page == MaxPages-1 {
			whole = true
			break
		}
		if oldest == 0 || followed[next] {
			break
		}
		followed[next] = true
		after = next
	}
	for i := len(kept) - 1; i >= 0; i-- {
		if err := emit(kept[i].post, kept[i].mark); err != nil {
			return err
		}
	}
	if !whole || top == 0 {
		return nil
	}
	// Saved at once, not with the batch: a community of which no post was
	// kept has none waiting in a batch, and one of which a post was kept
	// loses its mark, which can only make the next read go further back.
	for _, c := range group {
		if posted[c] {
			delete(marks, c)
		} else {
			marks[c] = min(top, at)
		}
	}
	if in.Save == nil {
		return nil
	}
	b, err := json.Marshal(marks)
	if err != nil {
		return err
	}
	if err := in.Save(readToKey(listing), string(b)); err != nil {
		return fmt.Errorf("reddit: keeping how far %s was read: %w", path, err)
	}
	return nil
}

// readMarks decodes the read marks kept as v, keeping those of names
// only: a community removed from the phrases takes its mark with it, so
// the kept value is bounded by the communities read, and re-added, the
// community is read back to its checkpoint. A value that does not decode
// is no marks.
func readMarks(v string, names []string) map[string]float64 {
	var kept map[string]float64
	if json.Unmarshal([]byte(v), &kept) != nil {
		kept = nil
	}
	out := map[string]float64{}
	for c, t := range kept {
		if _, ok := slices.BinarySearch(names, c); ok && t > 0 {
			out[c] = t
		}
	}
	return out
}

// fetch asks for one page, reports the answer, and decodes it.
func (r *Reader) fetch(ctx context.Context, in helper.In, path, after, cookie string) ([]redditjson.Item, string, error) {
	if err := r.pace(ctx); err != nil {
		return nil, "", err
	}
	qs := url.Values{"limit": {strconv.Itoa(pageSize)}, "raw_json": {"1"}}
	if after != "" {
		qs.Set("after", after)
	}
	base := r.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+path+"?"+qs.Encode(), nil)
	if err != nil {
		return nil, "", err
	}
	ua := r.UserAgent
	if ua == "" {
		ua = UserAgent
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "application/json")
	if cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	resp, err := in.HTTP.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if rep := in.Report(ctx, helper.Signal{NoResponse: true}, 0); rep != nil {
			return nil, "", rep
		}
		// The error names the address read, never a cookie.
		return nil, "", fmt.Errorf("reddit: %s: no answer (through the proxy: %t): %w", path, in.ViaProxy, err)
	}
	defer resp.Body.Close()
	r.obeyBudget(resp.Header)
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		if rep := in.Report(ctx, helper.Signal{NoResponse: true}, 0); rep != nil {
			return nil, "", rep
		}
		return nil, "", fmt.Errorf("reddit: %s: the answer broke off: %w", path, err)
	}
	if reason, ok := communityRefusal(resp.StatusCode, resp.Header.Get("Location"), body); ok {
		// Not reported: core/health would read it as the account's state
		// (not_member, group_removed) and the account would wait for its
		// owner, whom a new session cannot help.
		return nil, "", &refusal{path: path, status: resp.StatusCode, reason: reason}
	}
	sig := helper.Signal{Status: resp.StatusCode, Location: resp.Header.Get("Location")}
	if loc := sig.Location; resp.StatusCode/100 == 3 && strings.Contains(strings.ToLower(pathOf(loc)), "/login") {
		// reddit's login wall is what a 401 is to a browser: the session
		// sent no longer opens the listing. It is reported as that 401,
		// as x's and facebook's readers report theirs, since core/health
		// reads a /login address as logged_out (the platform ended every
		// session), which asks the owner to sign in again where
		// re-exporting the cookies is what helps.
		sig = helper.Signal{Status: http.StatusUnauthorized}
		body = []byte("reddit sent the listing to its login wall (" + loc + ")")
	}
	var pg redditjson.Listing
	switch {
	case len(body) > maxAnswer:
		return nil, "", &tooBig{path: path}
	case sig.OK():
		if pg, err = redditjson.DecodeListing(body); err != nil {
			sig.Unusable = true
		}
	}
	if !sig.OK() {
		sig.Body = string(body[:min(len(body), helper.MaxSignalBody)])
	}
	if err := in.Report(ctx, sig, waitNamed(resp.Header)); err != nil {
		return nil, "", err
	}
	if !sig.OK() {
		return nil, "", fmt.Errorf("reddit: %s answered %d, not a listing", path, resp.StatusCode)
	}
	return pg.Items, pg.After, nil
}

// refusal is reddit refusing the communities a request named for their
// own reason, not the account's.
type refusal struct {
	path   string
	status int
	reason string
}

func (e *refusal) Error() string {
	return fmt.Sprintf("reddit: %s answered %d: the community is refused (%s)", e.path, e.status, e.reason)
}

// communityRefusal reports whether an answer is reddit's refusal of the
// communities asked for, with why, as the server's reader judges it
// (docs/reddit.md, Decisions): a 403 whose JSON gives reddit's reason
// (`{"reason": "private", "message": "Forbidden", "error": 403}`, for a
// private, quarantined or gated community), a 404 (`{"reason":
// "banned", ...}` for a banned one), or a redirect to the community
// search, or a 451 (a community withheld in the reader's country: a
// legal demand is about what is shown, never about the account). A 403
// without such a reason (a block page, a bare Forbidden) may be the
// account's or the address's, and is reported as before.
func communityRefusal(status int, location string, body []byte) (string, bool) {
	reason := redditjson.Reason(body)
	switch {
	case status/100 == 3 && strings.HasPrefix(pathOf(location), redditjson.CommunitySearch):
		return "unknown to reddit", true
	case status == http.StatusNotFound && reason != "":
		return reason, true
	case status == http.StatusNotFound:
		return "not found", true
	case status == http.StatusForbidden && reason != "":
		return reason, true
	case status == http.StatusUnavailableForLegalReasons:
		return "withheld in this country", true
	}
	return "", false
}

// pace waits until the account's next request may go.
func (r *Reader) pace(ctx context.Context) error {
	return helper.Pace(ctx, &r.next, cmp.Or(r.Pace, DefaultPace), r.Now, r.Sleep)
}

// obeyBudget holds the next request back when reddit says the account's
// budget is spent (X-Ratelimit-Remaining under 1 until
// X-Ratelimit-Reset seconds from now).
func (r *Reader) obeyBudget(h http.Header) {
	left, err1 := strconv.ParseFloat(h.Get("X-Ratelimit-Remaining"), 64)
	reset, err2 := strconv.Atoi(h.Get("X-Ratelimit-Reset"))
	if err1 == nil && err2 == nil && left < 1 && reset > 0 {
		if at := r.now().Add(bounded(reset)); at.After(r.next) {
			r.next = at
		}
	}
}

// waitNamed is the wait a refusal names: Retry-After, else reddit's
// X-Ratelimit-Reset; 0 for none.
func waitNamed(h http.Header) time.Duration {
	for _, k := range []string{"Retry-After", "X-Ratelimit-Reset"} {
		if n, err := strconv.Atoi(strings.TrimSpace(h.Get(k))); err == nil && n > 0 {
			return bounded(n)
		}
	}
	return 0
}

// maxNamedWait bounds a wait reddit names, as the server bounds the
// account's retryAfter: a longer one would stall the helper, or pause the
// account, for as long as an answer says.
const maxNamedWait = 24 * time.Hour

// bounded is n seconds, at most maxNamedWait.
func bounded(n int) time.Duration {
	return time.Duration(min(n, int(maxNamedWait/time.Second))) * time.Second
}

func (r *Reader) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// pathOf is the path of an address, "" when it does not parse.
func pathOf(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return pu.Path
}
