package facebook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
)

// fakePages stands in for the browser: it answers each page by its path
// with what facebook's page would have received.
type fakePages struct {
	mu      sync.Mutex
	answer  func(u *url.URL) Page
	opened  []string
	cookies [][]core.Cookie
	now     func() time.Time // the reader's clock (newReader sets it)
	at      []time.Time      // when each page was opened
}

func (f *fakePages) Read(ctx context.Context, r PageRequest) (Page, error) {
	pageURL, match := r.URL, r.Match
	f.mu.Lock()
	f.opened = append(f.opened, pageURL)
	f.cookies = append(f.cookies, r.Cookies)
	if f.now != nil {
		f.at = append(f.at, f.now())
	}
	f.mu.Unlock()
	if !match("https://www.facebook.com/api/graphql/") || match("https://www.facebook.com/ajax/bz") {
		return Page{}, errors.New("the reader's match keeps the wrong answers")
	}
	u, err := url.Parse(pageURL)
	if err != nil {
		return Page{}, err
	}
	return f.answer(u), nil
}

type run struct {
	posts   []helper.Post
	marks   []helper.Mark
	reports []helper.Signal
	since   map[string]string
	slept   []time.Duration
}

func (r *run) in(jar []core.Cookie) helper.In {
	return helper.In{
		Phrases: []helper.Phrase{{Phrase: "acme grinder"}, {Phrase: "acme grinder", Community: "1242309506256283"}},
		Session: jar,
		Since:   func(k string) string { return r.since[k] },
		Report: func(ctx context.Context, s helper.Signal, wait time.Duration) error {
			r.reports = append(r.reports, s)
			if !s.OK() {
				return &helper.Paused{Platform: "facebook", Issue: "checkpointed", Action: "open_challenge", NeedsOwner: true}
			}
			return nil
		},
	}
}

func (r *run) emit(p helper.Post, m helper.Mark) error {
	r.posts = append(r.posts, p)
	r.marks = append(r.marks, m)
	return nil
}

func newReader(t *testing.T, pages PageReader, r *run) *Reader {
	now := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	if f, ok := pages.(*fakePages); ok {
		f.now = func() time.Time { return now }
	}
	return &Reader{Pages: pages, BaseURL: "https://fb.test",
		Now: func() time.Time { return now },
		Sleep: func(ctx context.Context, d time.Duration) error {
			r.slept = append(r.slept, d)
			now = now.Add(d)
			return nil
		}}
}

func results(t *testing.T) func(u *url.URL) Page {
	return func(u *url.URL) Page {
		switch {
		case u.Path == "/search/posts/":
			return Page{URL: u.String(), Status: 200, Head: "<!DOCTYPE html>", Answers: [][]byte{readFixture(t, "search_posts.txt")}}
		case strings.HasPrefix(u.Path, "/groups/1242309506256283/search"):
			return Page{URL: u.String(), Status: 200, Head: "<!DOCTYPE html>", Answers: [][]byte{readFixture(t, "group_search.txt")}}
		}
		return Page{URL: u.String(), Status: 404}
	}
}

func TestReadSearchAndGroup(t *testing.T) {
	r := &run{since: map[string]string{Key("acme grinder", ""): "1790160000"}}
	pages := &fakePages{answer: results(t)}
	jar := []core.Cookie{{Name: "c_user", Value: "1000", Domain: ".facebook.com"}, {Name: "xs", Value: "s3", Domain: ".facebook.com"}}
	rd := newReader(t, pages, r)
	rd.Groups = -1
	if err := rd.Read(context.Background(), r.in(jar), r.emit); err != nil {
		t.Fatal(err)
	}
	if len(pages.opened) != 2 {
		t.Fatalf("opened %v", pages.opened)
	}
	search, _ := url.Parse(pages.opened[0])
	group, _ := url.Parse(pages.opened[1])
	if search.Path != "/search/posts/" || search.Query().Get("q") != "acme grinder" || search.Query().Get("filters") != recentFilter {
		t.Errorf("search page %s", pages.opened[0])
	}
	if group.Path != "/groups/1242309506256283/search/" || group.Query().Get("q") != "acme grinder" {
		t.Errorf("group page %s", pages.opened[1])
	}
	for _, c := range pages.cookies {
		if len(c) != 2 || c[0].Name != "c_user" {
			t.Errorf("cookies %v", c)
		}
	}
	// The search's checkpoint passes the older post; the rest come oldest
	// first within each search, each with the mark it moves.
	var ids []string
	for _, p := range r.posts {
		ids = append(ids, p.ExternalID)
	}
	if strings.Join(ids, ",") != "1995955427558350,1503138655179656,1995955427558351" {
		t.Fatalf("posts %v", ids)
	}
	p := r.posts[1]
	want := helper.Post{ExternalID: "1503138655179656", AuthorName: "Ada Lovelace", Body: []string{"Has anyone tried the acme grinder? Mine broke after a week."},
		URL: "https://www.facebook.com/ada.lovelace/posts/pfbid02abcdef", Likes: 12, Comments: 3, PostedAt: 1790168469000}
	if p.ExternalID != want.ExternalID || p.AuthorName != want.AuthorName || p.Body[0] != want.Body[0] || p.URL != want.URL ||
		p.Likes != want.Likes || p.Comments != want.Comments || p.PostedAt != want.PostedAt || p.Community != "" {
		t.Errorf("post\n got %+v\nwant %+v", p, want)
	}
	if r.posts[0].Community != "Home Baristas" || r.posts[2].Community != "Home Baristas" {
		t.Errorf("communities %q %q", r.posts[0].Community, r.posts[2].Community)
	}
	if r.marks[1] != (helper.Mark{Key: Key("acme grinder", ""), Value: "1790168469"}) ||
		r.marks[2] != (helper.Mark{Key: Key("acme grinder", "1242309506256283"), Value: "1790170000"}) {
		t.Errorf("marks %v", r.marks)
	}
	if len(r.reports) != 2 || !r.reports[0].OK() {
		t.Errorf("reports %+v", r.reports)
	}
	// Two pages of one account: the second waited the default pace.
	if len(r.slept) != 1 || r.slept[0] != DefaultPace {
		t.Errorf("slept %v, want [%s]", r.slept, DefaultPace)
	}
}

func TestReadCheckpointReportsAndStops(t *testing.T) {
	r := &run{}
	pages := &fakePages{answer: func(u *url.URL) Page {
		return Page{URL: "https://fb.test/checkpoint/828281030927956/?next=%2F", Status: 200, Head: "<title>Confirm your identity</title>"}
	}}
	err := newReader(t, pages, r).Read(context.Background(), r.in(nil), r.emit)
	var p *helper.Paused
	if !errors.As(err, &p) || !p.NeedsOwner {
		t.Fatalf("err %v, want the pause", err)
	}
	if len(pages.opened) != 1 || len(r.posts) != 0 {
		t.Errorf("opened %v, posts %v: reading goes on after a checkpoint", pages.opened, r.posts)
	}
	if len(r.reports) != 1 || !strings.Contains(r.reports[0].Location, "/checkpoint/") {
		t.Errorf("reports %+v", r.reports)
	}
}

type failingPages struct{}

func (failingPages) Read(context.Context, PageRequest) (Page, error) {
	return Page{}, errors.New("net::ERR_PROXY_CONNECTION_FAILED")
}

func TestReadNoAnswerReported(t *testing.T) {
	r := &run{}
	in := r.in(nil)
	in.Report = func(ctx context.Context, s helper.Signal, wait time.Duration) error {
		r.reports = append(r.reports, s)
		return nil
	}
	err := newReader(t, failingPages{}, r).Read(context.Background(), in, r.emit)
	if err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Fatalf("err %v", err)
	}
	if len(r.reports) != 1 || !r.reports[0].NoResponse {
		t.Errorf("reports %+v", r.reports)
	}
}

// A 429 is reported with the wait facebook named in Retry-After, which
// the server keeps as the account's retry time.
func TestReadRateLimitReportsTheWaitNamed(t *testing.T) {
	r := &run{}
	var waits []time.Duration
	in := r.in(nil)
	report := in.Report
	in.Report = func(ctx context.Context, s helper.Signal, wait time.Duration) error {
		waits = append(waits, wait)
		return report(ctx, s, wait)
	}
	pages := &fakePages{answer: func(u *url.URL) Page {
		return Page{URL: u.String(), Status: 429, Head: "<!DOCTYPE html>", Header: http.Header{"Retry-After": {"120"}}}
	}}
	if err := newReader(t, pages, r).Read(context.Background(), in, r.emit); err == nil {
		t.Fatal("read on through a 429")
	}
	if len(waits) != 1 || waits[0] != 120*time.Second {
		t.Fatalf("reported waits %v, want the 120 s facebook named", waits)
	}
}

// The first results of a search that facebook put inside the page's HTML
// are read as the answers' are.
func TestReadFirstResultsInTheHTML(t *testing.T) {
	r := &run{since: map[string]string{}}
	doc := readFixture(t, "search_page.html")
	pages := &fakePages{answer: func(u *url.URL) Page {
		if u.Path != "/search/posts/" {
			return Page{URL: u.String(), Status: 404}
		}
		return Page{URL: u.String(), Status: 200, Head: string(doc[:100]), Document: doc}
	}}
	in := r.in(nil)
	in.Phrases = in.Phrases[:1]
	rd := newReader(t, pages, r)
	rd.Groups = -1
	if err := rd.Read(context.Background(), in, r.emit); err != nil {
		t.Fatal(err)
	}
	if got := postIDs(r.posts); got != "1600000000000001,1600000000000002" {
		t.Fatalf("posts %s, want the two stories of the page's HTML", got)
	}
	if p := r.posts[0]; p.AuthorName != "Barbara Liskov" || p.URL != "https://www.facebook.com/barbara.liskov/posts/pfbid0liskov" || p.Likes != 9 {
		t.Errorf("post %+v", p)
	}
}

func postIDs(ps []helper.Post) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ExternalID)
	}
	return strings.Join(out, ",")
}

// joinedNames are the groups of groups_joins.html and
// groups_joins_more.txt, by id.
var joinedNames = map[string]string{"1242309506256283": "Home Baristas", "880011223344556": "Espresso Nerds",
	"771122334455667": "Grinder Repair Club", "660000000000001": "Coffee Roasters Guild", "550000000000002": "Latte Art Practice"}

// groupPages answers the posts search with search_posts.txt, the groups
// page with groups_joins.html and the answer groups_joins_more.txt, and
// each group's search with group_search.txt made that group's: its id,
// its name, and a post id of its own (Home Baristas' is the fixture's,
// 1995955427558351, which the posts search does not show).
func groupPages(t *testing.T) func(u *url.URL) Page {
	search, joins, more, group := readFixture(t, "search_posts.txt"), readFixture(t, "groups_joins.html"),
		readFixture(t, "groups_joins_more.txt"), string(readFixture(t, "group_search.txt"))
	return func(u *url.URL) Page {
		ok := Page{URL: u.String(), Status: 200, Head: "<!DOCTYPE html>"}
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		switch {
		case u.Path == "/search/posts/":
			ok.Answers = [][]byte{search}
		case u.Path == "/groups/joins/":
			ok.Document, ok.Answers = joins, [][]byte{more}
		case len(parts) == 3 && parts[0] == "groups" && parts[2] == "search" && joinedNames[parts[1]] != "":
			id := parts[1]
			b := group
			if id != "1242309506256283" {
				b = strings.NewReplacer("1242309506256283", id, "Home Baristas", joinedNames[id], "1995955427558351", "7"+id).Replace(group)
			}
			ok.Answers = [][]byte{[]byte(b)}
		default:
			return Page{URL: u.String(), Status: 404}
		}
		return ok
	}
}

func paths(opened []string) string {
	var out []string
	for _, o := range opened {
		u, _ := url.Parse(o)
		out = append(out, u.Path)
	}
	return strings.Join(out, " ")
}

// The groups the owner joined are learned from /groups/joins/ (at most
// Groups of them, in the page's order) and searched for each phrase, a
// few searches a pass, rotating across passes and restarts; the groups
// page is read again only after GroupsEvery; every page waits the pace.
func TestJoinedGroupsAreSearchedInTurn(t *testing.T) {
	r := &run{since: map[string]string{}}
	pages := &fakePages{answer: groupPages(t)}
	in := helper.In{
		Phrases: []helper.Phrase{{Phrase: "acme grinder"}},
		Since:   func(k string) string { return r.since[k] },
		Save:    func(k, v string) error { r.since[k] = v; return nil },
		Report: func(ctx context.Context, s helper.Signal, wait time.Duration) error {
			r.reports = append(r.reports, s)
			return nil
		},
	}
	now := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	var slept []time.Duration
	pages.now = func() time.Time { return now }
	reader := func() *Reader {
		return &Reader{Pages: pages, BaseURL: "https://fb.test", Groups: 3, GroupSearches: 2,
			Now: func() time.Time { return now },
			Sleep: func(ctx context.Context, d time.Duration) error {
				slept = append(slept, d)
				now = now.Add(d)
				return nil
			}}
	}
	pass := func(rd *Reader, want string) {
		t.Helper()
		pages.opened, r.posts, r.marks = nil, nil, nil
		if err := rd.Read(context.Background(), in, r.emit); err != nil {
			t.Fatal(err)
		}
		if got := paths(pages.opened); got != want {
			t.Fatalf("pages opened\n got %s\nwant %s", got, want)
		}
		now = now.Add(10 * time.Minute) // the time between passes
	}
	rd := reader()
	pass(rd, "/search/posts/ /groups/joins/ /groups/1242309506256283/search/ /groups/880011223344556/search/")
	var inGroup *helper.Post
	for i, p := range r.posts {
		if p.ExternalID == "1995955427558351" {
			inGroup = &r.posts[i]
			if r.marks[i] != (helper.Mark{Key: Key("acme grinder", "1242309506256283"), Value: "1790170000"}) {
				t.Errorf("mark %+v", r.marks[i])
			}
		}
	}
	if inGroup == nil || inGroup.Community != "Home Baristas" || inGroup.Body[0] != "Descaling the acme grinder: vinegar or tablets?" {
		t.Fatalf("the joined group's post: %+v (posts %s)", inGroup, postIDs(r.posts))
	}
	if !strings.Contains(postIDs(r.posts), "7880011223344556") {
		t.Errorf("the second group's post is missing: %s", postIDs(r.posts))
	}
	// The next pass goes on with the third group, then the first again:
	// the fourth and fifth joined groups are past the cap.
	pass(rd, "/search/posts/ /groups/771122334455667/search/ /groups/1242309506256283/search/")
	// A helper started again goes on where the last one stopped, with the
	// groups it learned.
	rd = reader()
	pass(rd, "/search/posts/ /groups/880011223344556/search/ /groups/771122334455667/search/")
	// Every page waited the pace after the one before.
	for i := 1; i < len(pages.at); i++ {
		if d := pages.at[i].Sub(pages.at[i-1]); d < DefaultPace {
			t.Errorf("page %d opened %s after the one before, under the pace of %s", i, d, DefaultPace)
		}
	}
	if len(slept) != 7 {
		t.Errorf("slept %v, want the pace before each page but the first of each pass", slept)
	}
	for _, d := range slept {
		if d != DefaultPace {
			t.Errorf("slept %v, want %s each time", slept, DefaultPace)
			break
		}
	}
	// Past GroupsEvery the groups page is read again.
	now = now.Add(DefaultGroupsEvery)
	pass(rd, "/search/posts/ /groups/joins/ /groups/1242309506256283/search/ /groups/880011223344556/search/")
}

// Groups below zero reads no joined group; the default cap is
// DefaultGroups.
func TestJoinedGroupsOffAndDefaultCap(t *testing.T) {
	r := &run{since: map[string]string{}}
	pages := &fakePages{answer: groupPages(t)}
	in := r.in(nil)
	in.Phrases = in.Phrases[:1]
	rd := newReader(t, pages, r)
	rd.Groups = -1
	if err := rd.Read(context.Background(), in, r.emit); err != nil {
		t.Fatal(err)
	}
	if got := paths(pages.opened); got != "/search/posts/" {
		t.Errorf("with groups off: %s", got)
	}
	if DefaultGroups != 10 {
		t.Errorf("DefaultGroups %d, documented as 10", DefaultGroups)
	}
	pages.opened = nil
	rd = newReader(t, pages, r)
	rd.GroupSearches = 100
	if err := rd.Read(context.Background(), in, r.emit); err != nil {
		t.Fatal(err)
	}
	// The five joined groups, under the default cap, each searched once.
	n := 0
	for _, o := range pages.opened {
		if strings.Contains(o, "/groups/") && strings.Contains(o, "/search/") {
			n++
		}
	}
	if n != 5 {
		t.Errorf("%d group searches, want 5: %s", n, paths(pages.opened))
	}
}

// A groups page that facebook turned into a checkpoint is reported and
// stops the read, as a search page does.
func TestJoinedGroupsPageCheckpoint(t *testing.T) {
	r := &run{since: map[string]string{}}
	answer := groupPages(t)
	pages := &fakePages{answer: func(u *url.URL) Page {
		if u.Path == "/groups/joins/" {
			return Page{URL: "https://fb.test/checkpoint/828281030927956/?next=%2F", Status: 200, Head: "<title>Confirm your identity</title>"}
		}
		return answer(u)
	}}
	in := r.in(nil)
	in.Phrases = in.Phrases[:1]
	err := newReader(t, pages, r).Read(context.Background(), in, r.emit)
	var p *helper.Paused
	if !errors.As(err, &p) || !p.NeedsOwner {
		t.Fatalf("err %v, want the pause", err)
	}
	if got := paths(pages.opened); got != "/search/posts/ /groups/joins/" {
		t.Errorf("pages opened: %s", got)
	}
	if len(r.reports) != 2 || !strings.Contains(r.reports[1].Location, "/checkpoint/") {
		t.Errorf("reports %+v", r.reports)
	}
}

// readAnswer reads the first phrase's search once, facebook answering
// answer, with no group searched.
func readAnswer(t *testing.T, answer string) (*run, *Reader) {
	t.Helper()
	r := &run{since: map[string]string{}}
	pages := &fakePages{answer: func(u *url.URL) Page {
		return Page{URL: u.String(), Status: 200, Head: "<!DOCTYPE html>", Answers: [][]byte{[]byte(answer)}}
	}}
	rd := newReader(t, pages, r)
	rd.Groups = -1
	in := r.in(nil)
	in.Phrases = in.Phrases[:1]
	if err := rd.Read(context.Background(), in, r.emit); err != nil {
		t.Fatal(err)
	}
	return r, rd
}

// A story whose creation time is not plausible seconds (milliseconds, or
// a number past any date) is no post: it would move the search's
// checkpoint past every later post, and its postedAt would overflow.
func TestImplausibleCreationTimeIsNoPost(t *testing.T) {
	r, _ := readAnswer(t, `{"data":{"node":{"edges":[`+
		`{"node":{"post_id":"1","message":{"text":"acme grinder one"},"creation_time":1790168469}},`+
		`{"node":{"post_id":"2","message":{"text":"acme grinder in ms"},"creation_time":1790168469000}},`+
		`{"node":{"post_id":"3","message":{"text":"acme grinder huge"},"creation_time":1e300}}]}}}`)
	if got := postIDs(r.posts); got != "1" {
		t.Fatalf("posts %s, want only 1", got)
	}
	if r.marks[len(r.marks)-1].Value != "1790168469" {
		t.Errorf("marks %v", r.marks)
	}
}

// A story dated after the read (a wrong date) is sent, but moves its
// search's checkpoint only to the time of the read: stories made before
// that date and read later are still sent.
func TestFutureDateMovesTheCheckpointToTheReadOnly(t *testing.T) {
	r, rd := readAnswer(t, `{"data":{"node":{"edges":[`+
		`{"node":{"post_id":"1","message":{"text":"acme grinder now"},"creation_time":1790168469}},`+
		`{"node":{"post_id":"2","message":{"text":"acme grinder from 2040"},"creation_time":2208988800}}]}}}`)
	if got := postIDs(r.posts); got != "1,2" {
		t.Fatalf("posts %s, want 1,2", got)
	}
	read := strconv.FormatInt(rd.now().Unix(), 10)
	if m := r.marks[len(r.marks)-1]; m.Value != read {
		t.Errorf("last mark %v, want the read's time %s", m, read)
	}
}

// Counts out of range (negative, or past int's) are sent within it: the
// server refuses a post with a negative count, so the post would be lost
// while its checkpoint moved past it.
func TestCountsOutOfRangeKeepThePost(t *testing.T) {
	r, _ := readAnswer(t, `{"data":{"node":{"edges":[`+
		`{"node":{"post_id":"1","message":{"text":"acme grinder"},"creation_time":1790168469,`+
		`"reaction_count":{"count":1e300},"comment_count":{"total_count":-3}}},`+
		`{"node":{"post_id":"2","message":{"text":"acme grinder"},"creation_time":1790168470,"reaction_count":{"count":"NaN"}}}]}}}`)
	if len(r.posts) != 2 || r.posts[0].Likes != 1<<31-1 || r.posts[0].Comments != 0 || r.posts[1].Likes != 0 {
		t.Fatalf("posts %+v, want likes 2147483647 and no comments, then no likes", r.posts)
	}
}

// A story's text and author are sent cut where the server cuts them: a page's story of
// a megabyte would otherwise make a batch over the server's body limit,
// refused every pass, so that the search never moved on.
func TestLongStoryIsSentCut(t *testing.T) {
	r, _ := readAnswer(t, `{"data":{"node":{"post_id":"1","message":{"text":"acme grinder `+strings.Repeat("<", 400_000)+`"},"creation_time":1790168469,`+
		`"actors":[{"name":"`+strings.Repeat("&", 400_000)+`"}]}}}`)
	if len(r.posts) != 1 || len(r.posts[0].Body[0]) > core.MaxPostText || len(r.posts[0].AuthorName) > 200 {
		t.Fatalf("%d posts, the first of %d bytes by an author of %d", len(r.posts), len(r.posts[0].Body[0]), len(r.posts[0].AuthorName))
	}
}

// readSearchPage reads the first phrase's posts search once, facebook's
// page being pg, and returns the read's error.
func readSearchPage(t *testing.T, pg Page) (*run, error) {
	t.Helper()
	r, rd, in := searchReader(t, pg)
	in.Phrases = in.Phrases[:1]
	report := in.Report
	in.Report = func(ctx context.Context, s helper.Signal, wait time.Duration) error {
		if s.NoResponse || s.Status >= 500 || s.OK() || (s.Status == 200 && s.Location == "" && s.Code == 0) {
			// The server's answer to a network error or an unnamed page
			// is a wait or nothing: the read goes on to fail on its own.
			r.reports = append(r.reports, s)
			return nil
		}
		return report(ctx, s, wait)
	}
	return r, rd.Read(context.Background(), in, r.emit)
}

// A search facebook answered with its empty list of results is read as
// nothing found, in an answer as in the page's HTML: the read succeeds,
// and the phrase is recorded as read.
func TestSearchWithNoResultsIsNothingFound(t *testing.T) {
	for name, pg := range map[string]Page{
		"answer": {Status: 200, Head: "<!DOCTYPE html>", Answers: [][]byte{readFixture(t, "search_empty.txt")}},
		"html":   {Status: 200, Head: "<!DOCTYPE html>", Document: readFixture(t, "search_empty_page.html")},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := readSearchPage(t, pg)
			if err != nil {
				t.Fatalf("a search facebook answered with no results failed: %v", err)
			}
			if len(r.posts) != 0 || len(r.reports) != 1 || !r.reports[0].OK() {
				t.Errorf("posts %v, reports %+v", r.posts, r.reports)
			}
		})
	}
}

// A search page that never showed facebook's answer is a failed read,
// not an empty one: the read fails (so no empty batch records the phrase
// as read) and reports what the page was, a cut-off page as the network
// error a page that never answered is.
func TestSearchCutOffBeforeItsResultsFails(t *testing.T) {
	// The first document of the answer, broken off in its first story.
	first, _, _ := strings.Cut(string(readFixture(t, "search_posts.txt")), "\n")
	broken := []byte(first[:strings.Index(first, `"creation_time"`)])
	for _, tc := range []struct {
		name string
		pg   Page
		want func(helper.Signal) bool
	}{
		{"cut off by the time cap", Page{Status: 200, Head: "<!DOCTYPE html>", Answers: [][]byte{[]byte(`{"data":{"viewer":{"notifications_unseen_count":0}}}`)}, CutOff: "time"},
			func(s helper.Signal) bool { return s.NoResponse }},
		{"an answer that broke off", Page{Status: 200, Head: "<!DOCTYPE html>", Answers: [][]byte{broken}, CutOff: "time"},
			func(s helper.Signal) bool { return s.NoResponse }},
		{"a shell with no results", Page{Status: 200, Head: `<!DOCTYPE html><html id="facebook"><div id="mount_0_0_x"></div>`},
			func(s helper.Signal) bool { return !s.OK() && !s.NoResponse && strings.Contains(s.Body, "mount_0_0_x") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := readSearchPage(t, tc.pg)
			if err == nil || !strings.Contains(err.Error(), "no search results") {
				t.Fatalf("err %v, want the read to fail: the page showed no results", err)
			}
			if len(r.posts) != 0 || len(r.reports) != 1 || !tc.want(r.reports[0]) {
				t.Errorf("posts %v, reports %+v", r.posts, r.reports)
			}
		})
	}
}

// A login wall that comes in an answer of the page, the page's own
// address staying put, is the session's end, reported and paused on as
// the login wall of the document is.
func TestSearchLoginWallInAnAnswerPauses(t *testing.T) {
	r, err := readSearchPage(t, Page{Status: 200, Head: "<!DOCTYPE html>", Answers: [][]byte{readFixture(t, "login_required.txt")}})
	var p *helper.Paused
	if !errors.As(err, &p) {
		t.Fatalf("err %v, want the pause", err)
	}
	if len(r.posts) != 0 || len(r.reports) != 1 || r.reports[0].Status != 401 {
		t.Errorf("posts %v, reports %+v, want the 401 of a login wall", r.posts, r.reports)
	}
}

// A groups page cut off before it showed the list of joined groups is a
// failed read: no empty list is kept (which would leave every group
// unsearched until GroupsEvery passed), and the next read opens the
// groups page again. A list facebook showed empty is kept as it is.
func TestJoinedGroupsPageCutOffKeepsNoList(t *testing.T) {
	r := &run{since: map[string]string{}}
	answer := groupPages(t)
	cut := true
	pages := &fakePages{answer: func(u *url.URL) Page {
		if u.Path == "/groups/joins/" && cut {
			return Page{URL: u.String(), Status: 200, Head: "<!DOCTYPE html>", CutOff: "time",
				Answers: [][]byte{[]byte(`{"data":{"viewer":{"notifications_unseen_count":0}}}`)}}
		}
		return answer(u)
	}}
	in := r.in(nil)
	in.Phrases = in.Phrases[:1]
	in.Save = func(k, v string) error { r.since[k] = v; return nil }
	in.Report = func(ctx context.Context, s helper.Signal, wait time.Duration) error {
		r.reports = append(r.reports, s)
		return nil
	}
	rd := newReader(t, pages, r)
	err := rd.Read(context.Background(), in, r.emit)
	if err == nil || !strings.Contains(err.Error(), "groups") {
		t.Fatalf("err %v, want the groups page's failure", err)
	}
	if v, ok := r.since[groupsKey]; ok {
		t.Errorf("kept the list %s from a page that showed none", v)
	}
	if s := r.reports[len(r.reports)-1]; !s.NoResponse {
		t.Errorf("reported %+v, want noResponse", s)
	}
	cut = false
	pages.opened = nil
	if err := rd.Read(context.Background(), in, r.emit); err != nil {
		t.Fatal(err)
	}
	if got := paths(pages.opened); !strings.HasPrefix(got, "/search/posts/ /groups/joins/ /groups/") {
		t.Errorf("the next read opened %s, want the groups page again and its groups", got)
	}
	// A list facebook showed empty: no group joined.
	r.since = map[string]string{}
	pages.answer = func(u *url.URL) Page {
		if u.Path == "/groups/joins/" {
			return Page{URL: u.String(), Status: 200, Head: "<!DOCTYPE html>",
				Answers: [][]byte{[]byte(`{"data":{"viewer":{"groups_tab":{"tab_groups_list":{"edges":[],"page_info":{"has_next_page":false}}}}}}`)}}
		}
		return answer(u)
	}
	rd = newReader(t, pages, r)
	if err := rd.Read(context.Background(), in, r.emit); err != nil {
		t.Fatalf("a groups page with no group joined: %v", err)
	}
	var kept joinedGroups
	if err := json.Unmarshal([]byte(r.since[groupsKey]), &kept); err != nil || len(kept.Groups) != 0 || kept.At.IsZero() {
		t.Errorf("kept %q, want the empty list", r.since[groupsKey])
	}
}

// A search page's own words are not facebook's: a phrase that names a
// captcha or a block ("captcha solver"), which the page repeats in its
// title, or a post among the results that speaks of one, is no captcha
// or block page, and the account is not paused for it.
func TestPageWordsAreNoCaptcha(t *testing.T) {
	doc := strings.Replace(string(readFixture(t, "search_page.html")), "Is the acme grinder worth it for espresso at home?",
		"Facebook keeps asking me for a captcha and says I am temporarily blocked", 1)
	for name, pg := range map[string]Page{
		"the phrase in the title": {Status: 200, Head: "<!DOCTYPE html><title>captcha solver - Search | Facebook</title>",
			Answers: [][]byte{readFixture(t, "search_posts.txt")}},
		"a post of the results": {Status: 200, Head: doc, Document: []byte(doc)},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := searchOnce(t, pg, "captcha solver")
			if err != nil {
				t.Fatalf("the search read as a captcha or block page: %v", err)
			}
			if len(r.posts) == 0 || len(r.reports) != 1 || !r.reports[0].OK() {
				t.Errorf("%d posts, reports %+v", len(r.posts), r.reports)
			}
		})
	}
}
