// Package facebook is the helper's facebook reader: the newest posts for
// each facebook phrase that the owner's own session can see, read as the
// owner's browser sees them. A browser opens facebook's posts search
// (/search/posts/?q=PHRASE, newest first) and the searches of the groups
// the owner joined (/groups/GROUP/search/?q=PHRASE), with the owner's
// cookies, and the reader takes the results the page itself holds: the
// first ones inside its HTML, the rest in the GraphQL answers
// (/api/graphql/) it receives.
//
// Reading what the site's own page asks for, rather than calling its
// private API, survives facebook's changes to that API: the page keeps
// asking whatever the current web client asks, and only the parser of
// the stories (parse.go) follows the answers' shape.
package facebook

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
)

// Defaults of a Reader.
const (
	// DefaultBaseURL is facebook's web address.
	DefaultBaseURL = "https://www.facebook.com"
	// DefaultPace is the least time between two pages of one account:
	// one page every 30 seconds. A person searching facebook opens a
	// page every few seconds, but facebook locks accounts that search
	// steadily for long; a slow, even pace over a pass of many phrases
	// is what keeps the session alive.
	DefaultPace = 30 * time.Second
	// DefaultGroups is how many of the groups the owner joined are
	// searched: the first ones of facebook's own list, where the groups
	// with recent activity come first.
	DefaultGroups = 10
	// DefaultGroupsEvery is how often the list of joined groups is read
	// again: people join and leave groups over days, not minutes.
	DefaultGroupsEvery = 6 * time.Hour
	// DefaultGroupSearches is the most group searches of one read (a
	// pass): five minutes at the pace, so that a pass of many phrases in
	// many groups does not grow without end; the next pass goes on where
	// this one stopped.
	DefaultGroupSearches = 10
)

// Keys of what a Reader keeps beside its checkpoints (helper.In.Save).
const (
	groupsKey   = "facebook:groups"
	rotationKey = "facebook:groups:next"
)

// maxAuthor is the most characters of an author's name the server keeps.
const maxAuthor = 200

// maxGroupsKept bounds the list of joined groups kept, whatever Groups
// is: a person in thousands of groups still has a list of known size.
const maxGroupsKept = 100

// Page is what a browser saw of one page.
type Page struct {
	// URL is the address the page ended on, after redirects; Status the
	// document's status; Head the start of the document's body.
	URL    string
	Status int
	Head   string
	// Header is the document's answer header (a 429's Retry-After).
	Header http.Header
	// Document is the document's HTML, where facebook puts the first
	// results of a page it renders (nil when it was over the size cap).
	Document []byte
	// Answers are the bodies of the answers the page received whose
	// address matched, in the order they came.
	Answers [][]byte
	// CutOff says why the read stopped before the page held what it was
	// opened for (its time or size cap), "" when it did not stop early.
	CutOff string
}

// PageRequest is one page to open.
type PageRequest struct {
	URL string
	// Cookies are set before the page opens, for their own domains or,
	// when CookieURL is set (a mirror, a test server), for its host.
	Cookies   []core.Cookie
	CookieURL string
	// Proxy is the proxy every request of the page goes through, nil for
	// none (helper.In.Proxy).
	Proxy *url.URL
	// Match picks the answers kept by their address.
	Match func(string) bool
	// Holds says whether one answer, or one data blob of the document,
	// holds what the page was opened for: the page is read until one
	// does. nil is search results.
	Holds func(body []byte) bool
}

// PageReader opens a page in a browser and returns what it saw. An error
// means no answer came. Browser is the real one.
type PageReader interface {
	Read(ctx context.Context, r PageRequest) (Page, error)
}

// Reader reads facebook for one account. One Reader serves one account:
// its pacing is that account's.
type Reader struct {
	// Pages opens the pages: a *Browser, or a fake in tests.
	Pages   PageReader
	BaseURL string        // "" is DefaultBaseURL; a mirror or a test server
	Pace    time.Duration // 0 is DefaultPace; below zero does not pace (tests)
	// Groups is how many of the groups the owner joined are searched for
	// each phrase: 0 is DefaultGroups, below zero none.
	Groups int
	// GroupsEvery is how often the list of joined groups is read again
	// (/groups/joins/): 0 is DefaultGroupsEvery.
	GroupsEvery time.Duration
	// GroupSearches is the most group searches of one read, rotating
	// through the groups and phrases across reads: 0 is
	// DefaultGroupSearches.
	GroupSearches int
	// Now and Sleep are the clock; nil uses the system's.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	next     time.Time
	joined   *joinedGroups // nil until read from the state or the site
	rotation int           // the next group search
	rotRead  bool          // rotation was read from the state
	// phrases are the phrases of the current (or last) read, sorted;
	// left counts, for each, its searches the read has not done yet: its
	// posts search and the search of the group it names. A phrase with
	// any left is UnreadPhrases.
	phrases []string
	left    map[string]int
}

// joinedGroups is the list of joined groups kept, and when it was read.
type joinedGroups struct {
	At     time.Time `json:"at"`
	Groups []Group   `json:"groups"`
}

var (
	_ helper.PhraseUnreader = (*Reader)(nil)
	_ helper.Keeper         = (*Reader)(nil)
)

// UnreadPhrases implements helper.PhraseUnreader: the phrases of the
// read whose own searches (the posts search, and the search of the group
// the phrase names) it has not all done, facebook having refused one (a
// checkpoint, a rate limit, a page without results), the read having
// stopped in one or not having come to it yet; nil when it did them all.
// The server leaves their lastCheckedAt where it was. The searches of
// the joined groups do not count: they rotate over passes, a few a pass,
// so no pass searches a phrase in all of them.
func (r *Reader) UnreadPhrases() []string {
	var out []string
	for _, p := range r.phrases {
		if r.left[p] > 0 {
			out = append(out, p)
		}
	}
	return out
}

// Platform implements helper.Reader.
func (r *Reader) Platform() string { return "facebook" }

// IsGraphQL matches the answers a facebook page receives from its
// GraphQL endpoint.
func IsGraphQL(u string) bool {
	p, err := url.Parse(u)
	return err == nil && strings.HasPrefix(p.Path, "/api/graphql")
}

// recentFilter asks the posts search for recent posts first, as the
// search page's "Recent posts" toggle puts it in the address: base64 of
// {"recent_posts:0":"{\"name\":\"recent_posts\",\"args\":\"\"}"}.
var recentFilter = base64.StdEncoding.EncodeToString([]byte(`{"recent_posts:0":"{\"name\":\"recent_posts\",\"args\":\"\"}"}`))

// Key is the checkpoint key of a phrase's search: in a group when group
// is not "".
func Key(phrase, group string) string {
	if group == "" {
		return "facebook:search:" + phrase
	}
	return "facebook:group:" + group + ":" + phrase
}

// Read implements helper.Reader: each phrase's posts search, and its
// group's search when the phrase names a group (its id or address name),
// since each checkpoint; then searches in the groups the owner joined
// (see Groups), GroupSearches of them at most, going on where the last
// read stopped. The posts search shows some posts of the joined groups
// too; a group's own search shows the ones it leaves out.
func (r *Reader) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	// The browser lives for this read only: a helper runs one browser at
	// a time, and the next platform's reader starts its own.
	if c, ok := r.Pages.(interface{ Close() error }); ok {
		defer c.Close()
	}
	searches, phrases := searchesOf(in.Phrases)
	r.phrases, r.left = phrases, make(map[string]int, len(phrases))
	for _, s := range searches {
		r.left[s.phrase]++
	}
	for _, s := range searches {
		if err := r.readSearch(ctx, in, s, emit); err != nil {
			return err
		}
		r.left[s.phrase]--
	}
	if r.Groups < 0 || len(phrases) == 0 {
		return nil
	}
	return r.readGroups(ctx, in, phrases, searches, emit)
}

// searchesOf returns the searches Read makes first for ps, each phrase's
// and its group's, and the phrases' texts, sorted, each once.
func searchesOf(ps []helper.Phrase) (searches []search, phrases []string) {
	for _, p := range ps {
		ph := strings.TrimSpace(p.Phrase)
		if ph == "" {
			continue
		}
		phrases = append(phrases, ph)
		searches = append(searches, search{phrase: ph})
		if g := strings.Trim(strings.TrimSpace(p.Community), "/"); g != "" && !strings.ContainsAny(g, "/?#") {
			searches = append(searches, search{phrase: ph, group: g, community: g})
		}
	}
	slices.SortFunc(searches, func(a, b search) int { return strings.Compare(a.group+"\x00"+a.phrase, b.group+"\x00"+b.phrase) })
	slices.Sort(phrases)
	return slices.Compact(searches), slices.Compact(phrases)
}

// Keeps implements helper.Keeper: the checkpoints of the searches of
// phrases, in their own groups and in the joined groups kept (at most
// maxGroupsKept), the list of those groups and the rotation's place.
func (r *Reader) Keeps(phrases []helper.Phrase, get func(string) string) func(string) bool {
	searches, texts := searchesOf(phrases)
	live := map[string]bool{groupsKey: true, rotationKey: true}
	for _, s := range searches {
		live[Key(s.phrase, s.group)] = true
	}
	var kept joinedGroups
	if err := json.Unmarshal([]byte(get(groupsKey)), &kept); err == nil {
		for _, g := range kept.Groups {
			for _, ph := range texts {
				live[Key(ph, g.ID)] = true
			}
		}
	}
	return func(k string) bool { return !strings.HasPrefix(k, "facebook:") || live[k] }
}

// search is one search page: the posts search when group is "", else
// the group's search; community is the name its posts carry when their
// story names no group.
type search struct{ phrase, group, community string }

func (r *Reader) base() string {
	if b := strings.TrimRight(r.BaseURL, "/"); b != "" {
		return b
	}
	return DefaultBaseURL
}

func (r *Reader) searchURL(s search) string {
	q := url.Values{"q": {s.phrase}}
	if s.group == "" {
		q.Set("filters", recentFilter)
		return r.base() + "/search/posts/?" + q.Encode()
	}
	return r.base() + "/groups/" + url.PathEscape(s.group) + "/search/?" + q.Encode()
}

// readGroups searches the next GroupSearches (group, phrase) pairs of the
// joined groups, after those the phrases name themselves, and keeps
// where it stopped.
func (r *Reader) readGroups(ctx context.Context, in helper.In, phrases []string, named []search, emit func(helper.Post, helper.Mark) error) (err error) {
	groups, err := r.joinedGroups(ctx, in)
	if err != nil {
		return err
	}
	var pairs []search
	for _, g := range groups {
		for _, ph := range phrases {
			if s := (search{phrase: ph, group: g.ID, community: g.Name}); !slices.ContainsFunc(named, func(n search) bool {
				return n.group == s.group && n.phrase == s.phrase
			}) {
				pairs = append(pairs, s)
			}
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	if !r.rotRead {
		r.rotation, _ = strconv.Atoi(in.Since(rotationKey))
		r.rotRead = true
	}
	start := max(r.rotation, 0) % len(pairs)
	n := min(len(pairs), cmp.Or(r.GroupSearches, DefaultGroupSearches))
	done := 0
	// Where the searches stopped is kept however they ended: a search
	// that failed is tried first next time.
	defer func() {
		r.rotation = (start + done) % len(pairs)
		if in.Save == nil {
			return
		}
		if serr := in.Save(rotationKey, strconv.Itoa(r.rotation)); serr != nil && err == nil {
			err = fmt.Errorf("facebook: keeping the place in the groups' rotation: %w", serr)
		}
	}()
	for ; done < n; done++ {
		if err := r.readSearch(ctx, in, pairs[(start+done)%len(pairs)], emit); err != nil {
			return err
		}
	}
	return nil
}

// joinedGroups returns the first Groups groups the owner joined, from
// the list kept when it is younger than GroupsEvery, else read again
// from the groups page (a page of its own, paced as every page is).
func (r *Reader) joinedGroups(ctx context.Context, in helper.In) ([]Group, error) {
	if r.joined == nil {
		var kept joinedGroups
		if err := json.Unmarshal([]byte(in.Since(groupsKey)), &kept); err == nil {
			r.joined = &kept
		}
	}
	now := r.now()
	if j := r.joined; j == nil || now.Sub(j.At) >= cmp.Or(r.GroupsEvery, DefaultGroupsEvery) || now.Before(j.At) {
		pg, err := r.open(ctx, in, r.base()+"/groups/joins/", hasGroups, groupsShown)
		if err != nil {
			return nil, err
		}
		gs := parseGroups(pg.Document, pg.Answers)
		r.joined = &joinedGroups{At: now, Groups: gs[:min(len(gs), maxGroupsKept)]}
		if in.Save != nil {
			b, err := json.Marshal(r.joined)
			if err != nil {
				return nil, err
			}
			if err := in.Save(groupsKey, string(b)); err != nil {
				return nil, fmt.Errorf("facebook: keeping the list of joined groups: %w", err)
			}
		}
	}
	gs := r.joined.Groups
	return gs[:min(len(gs), cmp.Or(r.Groups, DefaultGroups))], nil
}

// open opens a page, after the pace, and reports what facebook answered;
// it returns the page when it is the one asked for, and an error (a
// *helper.Paused among them) when it is not. shown, when set, judges a
// page that answered normally: it says why the page did not show what it
// was opened for ("" when it did), with the issue and the signal that
// report it.
func (r *Reader) open(ctx context.Context, in helper.In, pageURL string, holds func([]byte) bool, shown func(Page) (why, issue string, sig helper.Signal)) (Page, error) {
	if in.ViaProxy && in.Proxy == nil {
		// A browser started without a proxy reads from the owner's own
		// address: refused, as PlatformClient refuses for HTTP.
		return Page{}, errors.New("facebook: the read is to go through the proxy, but none is given (In.Proxy): facebook is not read directly")
	}
	if err := r.pace(ctx); err != nil {
		return Page{}, err
	}
	req := PageRequest{URL: pageURL, Cookies: in.Session, Match: IsGraphQL, Holds: holds}
	if in.ViaProxy {
		req.Proxy = in.Proxy
	}
	if h := hostOf(pageURL); h != "facebook.com" && !strings.HasSuffix(h, ".facebook.com") {
		// A mirror or a test server: the owner's cookies go to its host.
		req.CookieURL = pageURL
	}
	pg, err := r.Pages.Read(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return Page{}, ctx.Err()
		}
		if rep := in.Report(ctx, helper.Signal{NoResponse: true}, 0); rep != nil {
			return Page{}, rep
		}
		// The error names the page, never a cookie.
		return Page{}, fmt.Errorf("facebook: %s: no answer (through the proxy: %t): %w", pathOf(pageURL), in.ViaProxy, err)
	}
	issue, sig := Health(pg.URL, pg.Status, pg.Head)
	if issue != "" && shown != nil {
		// An issue read from the body alone (the address and the status
		// name none) on a page that holds what it was opened for is the
		// page's own words, a post that speaks of a captcha among the
		// results: a captcha or block page holds no results.
		if byPlace, _ := Health(pg.URL, pg.Status, ""); byPlace == "" {
			if why, _, _ := shown(pg); why == "" {
				issue, sig = "", helper.Signal{Status: pg.Status}
			}
		}
	}
	why := ""
	if issue == "" && sig.OK() && shown != nil {
		why, issue, sig = shown(pg)
	}
	wait := time.Duration(0)
	if n, err := strconv.Atoi(strings.TrimSpace(pg.Header.Get("Retry-After"))); err == nil && n > 0 && issue == RateLimited {
		wait = time.Duration(n) * time.Second // the wait facebook named
	}
	if err := in.Report(ctx, sig, wait); err != nil {
		return Page{}, err
	}
	if why != "" {
		return Page{}, fmt.Errorf("facebook: %s: %s (through the proxy: %t)", pathOf(pageURL), why, in.ViaProxy)
	}
	if issue != "" || !sig.OK() {
		return Page{}, fmt.Errorf("facebook: %s: the page answered %d (%s), not the page asked for", pathOf(pageURL), pg.Status, orUnknown(issue))
	}
	return pg, nil
}

func (r *Reader) readSearch(ctx context.Context, in helper.In, s search, emit func(helper.Post, helper.Mark) error) error {
	pg, err := r.open(ctx, in, r.searchURL(s), hasResults, resultsShown)
	if err != nil {
		return err
	}
	key := Key(s.phrase, s.group)
	since, _ := strconv.ParseInt(in.Since(key), 10, 64)
	stories := parsePage(pg.Document, pg.Answers)
	slices.SortStableFunc(stories, func(a, b story) int { return int(a.created - b.created) })
	// A checkpoint moves no further than the read: a story dated after
	// it (a wrong date) would otherwise hide every story made before then.
	at := r.now().Unix()
	for _, st := range stories {
		if st.created < since {
			continue
		}
		if err := emit(r.post(st, s.community), helper.Mark{Key: key, Value: strconv.FormatInt(min(st.created, at), 10)}); err != nil {
			return err
		}
	}
	return nil
}

// post is the helper's post of a story; community is the group's name
// where it was read in a group.
func (r *Reader) post(s story, group string) helper.Post {
	link := s.url
	if link == "" {
		link = DefaultBaseURL + "/" + s.id
	}
	// The server keeps no more of a text or a name than this (core's
	// IngestPost), and a batch is bounded by its body limit: a page's
	// story of a megabyte would make a batch refused on every pass.
	p := helper.Post{ExternalID: s.id, AuthorName: core.Cut(s.author, maxAuthor), Body: []string{core.Cut(s.text, core.MaxPostText)}, URL: link,
		Likes: s.likes, Comments: s.comments, PostedAt: s.created * 1000, Community: s.group}
	if p.Community == "" {
		p.Community = group
	}
	return p
}

// resultsShown judges a search page that answered normally. Only
// facebook's own answer to the search, its results or its empty list of
// them, says that nothing matched; a page that shows neither (cut off by
// the read's caps, an answer that broke off, a shell with no results, a
// login wall that came in an answer) is a failure of the read, reported
// as such, so that the phrase is not recorded as read.
var resultsShown = shows(hasResults, "search results")

// groupsShown judges the groups page likewise: a page cut off before the
// list of joined groups would otherwise be kept as an empty list, and no
// group searched until the list is read again.
var groupsShown = shows(hasGroups, "list of joined groups")

// shows returns the judge of a page opened for what has finds.
func shows(has func([]byte) bool, what string) func(Page) (why, issue string, sig helper.Signal) {
	return func(pg Page) (why, issue string, sig helper.Signal) {
		if pageHolds(pg.Document, pg.Answers, has) {
			return "", "", helper.Signal{Status: pg.Status}
		}
		if issue, sig := answersHealth(pg.Answers); issue != "" {
			return "an answer of the page was facebook's " + issue, issue, sig
		}
		if pg.CutOff != "" {
			// No answer came in the read's time: a network error, as a
			// page whose document never came is.
			return "the page showed no " + what + " before it was cut off (" + pg.CutOff + ")", "", helper.Signal{NoResponse: true}
		}
		// The page loaded whole without it: its start goes to the
		// server, which may name what it shows instead (a group only its
		// members see).
		head := withoutPhrase(pg.Head[:min(len(pg.Head), helper.MaxSignalBody)], searchedPhrase(pg.URL))
		return "the page showed no " + what, "", helper.Signal{Status: pg.Status, Body: head, Unusable: true}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unexpected"
	}
	return s
}

func hostOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return strings.ToLower(p.Hostname())
	}
	return ""
}

func pathOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Path
	}
	return "a page"
}

func (r *Reader) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// pace waits until the account's next page may open.
func (r *Reader) pace(ctx context.Context) error {
	return helper.Pace(ctx, &r.next, cmp.Or(r.Pace, DefaultPace), r.Now, r.Sleep)
}
