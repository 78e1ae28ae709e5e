package facebook

import (
	"context"
	"errors"
	"net/http"
	"net/url"
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
}

func (f *fakePages) Read(ctx context.Context, r PageRequest) (Page, error) {
	pageURL, match := r.URL, r.Match
	f.mu.Lock()
	f.opened = append(f.opened, pageURL)
	f.cookies = append(f.cookies, r.Cookies)
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
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
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
