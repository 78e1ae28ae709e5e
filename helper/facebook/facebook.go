// Package facebook is the helper's facebook reader: the newest posts for
// each facebook phrase that the owner's own session can see, read as the
// owner's browser sees them. A browser opens facebook's posts search
// (/search/posts/?q=PHRASE, newest first) and, for a phrase that names a
// group, the group's own search (/groups/GROUP/search/?q=PHRASE), with
// the owner's cookies, and the reader takes the GraphQL answers
// (/api/graphql/) the page itself receives.
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
)

// Page is what a browser saw of one page.
type Page struct {
	// URL is the address the page ended on, after redirects; Status the
	// document's status; Head the start of the document's body.
	URL    string
	Status int
	Head   string
	// Header is the document's answer header (a 429's Retry-After).
	Header http.Header
	// Answers are the bodies of the answers the page received whose
	// address matched, in the order they came.
	Answers [][]byte
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
	// Now and Sleep are the clock; nil uses the system's.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	next time.Time
}

var _ helper.Reader = (*Reader)(nil)

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
// since each checkpoint. The posts search already shows the posts of the
// groups the owner joined that match; a group's own search reaches
// further back in that group.
func (r *Reader) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	// The browser lives for this read only: a helper runs one browser at
	// a time, and the next platform's reader starts its own.
	if c, ok := r.Pages.(interface{ Close() error }); ok {
		defer c.Close()
	}
	base := strings.TrimRight(r.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	type search struct{ phrase, group string }
	var searches []search
	for _, p := range in.Phrases {
		ph := strings.TrimSpace(p.Phrase)
		if ph == "" {
			continue
		}
		searches = append(searches, search{ph, ""})
		if g := strings.Trim(strings.TrimSpace(p.Community), "/"); g != "" && !strings.ContainsAny(g, "/?#") {
			searches = append(searches, search{ph, g})
		}
	}
	slices.SortFunc(searches, func(a, b search) int { return strings.Compare(a.group+"\x00"+a.phrase, b.group+"\x00"+b.phrase) })
	searches = slices.Compact(searches)
	for _, s := range searches {
		q := url.Values{"q": {s.phrase}}
		var u string
		if s.group == "" {
			q.Set("filters", recentFilter)
			u = base + "/search/posts/?" + q.Encode()
		} else {
			u = base + "/groups/" + url.PathEscape(s.group) + "/search/?" + q.Encode()
		}
		if err := r.readSearch(ctx, in, u, Key(s.phrase, s.group), s.group, emit); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reader) readSearch(ctx context.Context, in helper.In, pageURL, key, group string, emit func(helper.Post, helper.Mark) error) error {
	if err := r.pace(ctx); err != nil {
		return err
	}
	req := PageRequest{URL: pageURL, Cookies: in.Session, Match: IsGraphQL}
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
			return ctx.Err()
		}
		if rep := in.Report(ctx, helper.Signal{NoResponse: true}, 0); rep != nil {
			return rep
		}
		// The error names the page, never a cookie.
		return fmt.Errorf("facebook: %s: no answer (through the proxy: %t): %w", pathOf(pageURL), in.ViaProxy, err)
	}
	issue, sig := Health(pg.URL, pg.Status, pg.Head)
	wait := time.Duration(0)
	if n, err := strconv.Atoi(strings.TrimSpace(pg.Header.Get("Retry-After"))); err == nil && n > 0 && issue == RateLimited {
		wait = time.Duration(n) * time.Second // the wait facebook named
	}
	if err := in.Report(ctx, sig, wait); err != nil {
		return err
	}
	if issue != "" || !sig.OK() {
		return fmt.Errorf("facebook: %s: the page answered %d (%s), not search results", pathOf(pageURL), pg.Status, orUnknown(issue))
	}
	since, _ := strconv.ParseInt(in.Since(key), 10, 64)
	stories := parseAnswers(pg.Answers)
	slices.SortStableFunc(stories, func(a, b story) int { return int(a.created - b.created) })
	for _, s := range stories {
		if s.created < since {
			continue
		}
		if err := emit(r.post(s, group), helper.Mark{Key: key, Value: strconv.FormatInt(s.created, 10)}); err != nil {
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
	p := helper.Post{ExternalID: s.id, AuthorName: s.author, Body: []string{s.text}, URL: link,
		Likes: s.likes, Comments: s.comments, PostedAt: s.created * 1000, Community: s.group}
	if p.Community == "" {
		p.Community = group
	}
	return p
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

// pace waits until the account's next page may open.
func (r *Reader) pace(ctx context.Context) error {
	return helper.Pace(ctx, &r.next, cmp.Or(r.Pace, DefaultPace), r.Now, r.Sleep)
}
