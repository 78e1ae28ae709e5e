package facebook

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/browser"
)

// fakeFacebook serves what the browser opens: the search and group
// search pages, whose script asks /api/graphql/ first for the page's
// chrome and then for the results (answered with the fixtures, in the
// shape testdata/README.md describes), and the pages facebook sends an
// account it stops to.
func fakeFacebook(t *testing.T, checkpoint bool) *httptest.Server {
	search, group := readFixture(t, "search_posts.txt"), readFixture(t, "group_search.txt")
	page := func(w http.ResponseWriter, query string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html id="facebook"><body><div id="results"></div><script>
fetch('/api/graphql/', {method: 'POST', body: 'fb_api_req_friendly_name=CometNotificationsBadgeCountQuery'})
  .then(() => fetch('/api/graphql/', {method: 'POST', body: 'fb_api_req_friendly_name=%s'}))
  .then(r => r.text()).then(t => { document.getElementById('results').textContent = t.length; });
</script></body></html>`, query)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("c_user")
		signedIn := err == nil && c.Value == "1000"
		switch {
		case strings.HasPrefix(r.URL.Path, "/login"), strings.HasPrefix(r.URL.Path, "/checkpoint"):
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!DOCTYPE html><title>Facebook</title>")
		case !signedIn && r.URL.Path != "/api/graphql/":
			http.Redirect(w, r, "/login/?next="+r.URL.Path, http.StatusFound)
		case checkpoint && r.URL.Path != "/api/graphql/":
			http.Redirect(w, r, "/checkpoint/828281030927956/?next=%2F", http.StatusFound)
		case r.URL.Path == "/search/posts/":
			page(w, "SearchCometResultsInitialResultsQuery")
		case r.URL.Path == "/groups/1242309506256283/search/":
			page(w, "GroupsCometSearchResultsQuery")
		case r.URL.Path == "/api/graphql/" && r.Method == http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/html; charset=utf-8") // as facebook labels them
			switch name := strings.TrimPrefix(string(body), "fb_api_req_friendly_name="); name {
			case "SearchCometResultsInitialResultsQuery":
				w.Write(search)
			case "GroupsCometSearchResultsQuery":
				w.Write(group)
			default:
				fmt.Fprint(w, `{"data":{"viewer":{"notifications_unseen_count":0}}}`)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func needBrowser(t *testing.T) {
	if os.Getenv("EARSHOT_TEST_BROWSER") == "" {
		t.Skip("Chromium tests run with EARSHOT_TEST_BROWSER=1")
	}
}

func TestBrowserReadsSearchAndGroup(t *testing.T) {
	needBrowser(t)
	for _, tc := range []struct {
		name       string
		checkpoint bool
		jar        string
		posts      int
		location   string
	}{
		{"signed in", false, "1000", 4, ""},
		{"session expired", false, "stale", 0, ""},
		{"checkpoint", true, "1000", 0, "/checkpoint/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := fakeFacebook(t, tc.checkpoint)
			pages := &Browser{Options: browser.Options{NoSandbox: true, Timeout: 30 * time.Second}}
			defer pages.Close()
			r := &run{since: map[string]string{}}
			in := r.in([]core.Cookie{{Name: "c_user", Value: tc.jar, Domain: ".facebook.com"}, {Name: "xs", Value: "s3", Domain: ".facebook.com"}})
			rd := &Reader{Pages: pages, BaseURL: fb.URL, Pace: -1, Groups: -1}
			err := rd.Read(context.Background(), in, r.emit)
			if len(r.posts) != tc.posts {
				t.Fatalf("%d posts (err %v), want %d", len(r.posts), err, tc.posts)
			}
			if tc.posts > 0 {
				if err != nil {
					t.Fatal(err)
				}
				if r.posts[3].ExternalID != "1995955427558351" || r.posts[3].Community != "Home Baristas" {
					t.Errorf("group post %+v", r.posts[3])
				}
				return
			}
			if err == nil || len(r.reports) != 1 {
				t.Fatalf("err %v, reports %+v", err, r.reports)
			}
			sig := r.reports[0]
			if tc.location != "" && !strings.Contains(sig.Location, tc.location) {
				t.Errorf("signal %+v, want a location with %s", sig, tc.location)
			}
			if tc.location == "" && sig.Status != 401 {
				t.Errorf("signal %+v, want the login wall as a 401", sig)
			}
		})
	}
}

// A posts search whose first results are only in the page's HTML, and
// the groups the owner joined, learned from /groups/joins/ and searched:
// each page is done as soon as it holds what it was opened for, well
// before the read's time cap.
func TestBrowserReadsHTMLResultsAndJoinedGroups(t *testing.T) {
	needBrowser(t)
	searchPage, joins, more, group := readFixture(t, "search_page.html"), readFixture(t, "groups_joins.html"),
		readFixture(t, "groups_joins_more.txt"), readFixture(t, "group_search.txt")
	var mu sync.Mutex
	var opened []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/graphql/" && r.URL.Path != "/favicon.ico" {
			mu.Lock()
			opened = append(opened, r.URL.Path)
			mu.Unlock()
		}
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		switch {
		case r.URL.Path == "/search/posts/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(searchPage)
		case r.URL.Path == "/groups/joins/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(joins)
		case len(parts) == 3 && parts[0] == "groups" && parts[2] == "search":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!DOCTYPE html><html id="facebook"><body><script>
fetch('/api/graphql/', {method: 'POST', body: 'fb_api_req_friendly_name=GroupsCometSearchResultsQuery&group=%s'});
</script></body></html>`, parts[1])
		case r.URL.Path == "/api/graphql/":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			switch b := string(body); {
			case strings.Contains(b, "GroupsCometJoinsRootQueryPaginationQuery"):
				w.Write(more)
			case strings.Contains(b, "group=1242309506256283"):
				w.Write(group)
			case strings.Contains(b, "GroupsCometSearchResultsQuery"):
				fmt.Fprint(w, `{"data":{"node":{"__typename":"Group","id":"880011223344556","name":"Espresso Nerds","group_feed":{"edges":[]}}}}`)
			default:
				fmt.Fprint(w, `{"data":{"viewer":{"notifications_unseen_count":0}}}`)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	const timeout = 20 * time.Second
	pages := &Browser{Options: browser.Options{NoSandbox: true, Timeout: timeout}}
	defer pages.Close()
	r := &run{since: map[string]string{}}
	in := r.in([]core.Cookie{{Name: "c_user", Value: "1000", Domain: ".facebook.com"}})
	in.Phrases = in.Phrases[:1]
	rd := &Reader{Pages: pages, BaseURL: srv.URL, Pace: -1, Groups: 2}
	began := time.Now()
	if err := rd.Read(context.Background(), in, r.emit); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took >= timeout {
		t.Errorf("four pages took %s: a page waited out its time cap", took)
	}
	if got := postIDs(r.posts); got != "1600000000000001,1600000000000002,1995955427558351" {
		t.Fatalf("posts %s", got)
	}
	if r.posts[2].Community != "Home Baristas" {
		t.Errorf("the group's post: %+v", r.posts[2])
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(opened, " "); got != "/search/posts/ /groups/joins/ /groups/1242309506256283/search/ /groups/880011223344556/search/" {
		t.Errorf("pages opened: %s", got)
	}
}

// A page whose document never answers within the read's time is no
// answer: it is reported as noResponse, as the server takes it, not as a
// status 0 that POST /account-status refuses with 400, which failed the
// pass with the report's error and left the account's network error
// unrecorded and unpaused.
func TestBrowserPageThatNeverAnswersIsNoResponse(t *testing.T) {
	needBrowser(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	pages := &Browser{Options: browser.Options{NoSandbox: true, Timeout: 2 * time.Second}}
	defer pages.Close()
	r := &run{since: map[string]string{}}
	in := r.in([]core.Cookie{{Name: "c_user", Value: "1000", Domain: ".facebook.com"}})
	in.Phrases = in.Phrases[:1]
	rd := &Reader{Pages: pages, BaseURL: srv.URL, Pace: -1, Groups: -1}
	if err := rd.Read(context.Background(), in, r.emit); err == nil {
		t.Fatal("a page that never answered was read")
	}
	if len(r.reports) != 1 || !r.reports[0].NoResponse {
		t.Fatalf("reports %+v, want one noResponse", r.reports)
	}
	s := r.reports[0]
	if err := health.CheckSignal(health.Signal{Platform: core.Facebook, Status: s.Status, NoResponse: s.NoResponse}); err != nil {
		t.Errorf("the server refuses the report: %v", err)
	}
}

// In Chromium, a search page is read as "no results" only when facebook
// answered with its empty list; a page whose results answer never came,
// or came as the login wall, or that moved to a checkpoint while it
// loaded, fails the read and reports what it was.
func TestBrowserSearchCutOffBeforeItsResults(t *testing.T) {
	needBrowser(t)
	empty, login := readFixture(t, "search_empty.txt"), readFixture(t, "login_required.txt")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/search/posts/":
			// The page's script asks for the results as facebook's does;
			// q names how the fake answers.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!DOCTYPE html><html id="facebook"><body><div id="mount_0_0_x"></div><script>
fetch('/api/graphql/', {method: 'POST', body: 'fb_api_req_friendly_name=CometNotificationsBadgeCountQuery'})
  .then(() => fetch('/api/graphql/', {method: 'POST', body: %q}))
  .then(r => r.text()).then(t => { if (t === 'checkpoint') location.href = '/checkpoint/828281030927956/?next=%%2F'; });
</script></body></html>`, r.URL.Query().Get("q"))
		case "/checkpoint/828281030927956/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!DOCTYPE html><title>Confirm your identity</title>")
		case "/api/graphql/":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			switch string(body) {
			case "empty":
				w.Write(empty)
			case "login":
				w.Write(login)
			case "checkpoint":
				fmt.Fprint(w, "checkpoint")
			case "never":
				select {
				case <-r.Context().Done():
				case <-release:
				}
			default:
				fmt.Fprint(w, `{"data":{"viewer":{"notifications_unseen_count":0}}}`)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	// The page that never gets its results waits out a short cap; the
	// others have the time a busy machine needs.
	pages := &Browser{Options: browser.Options{NoSandbox: true, Timeout: 30 * time.Second}}
	defer pages.Close()
	short := &Browser{Options: browser.Options{NoSandbox: true, Timeout: 3 * time.Second}}
	defer short.Close()
	for _, tc := range []struct {
		q    string
		ok   bool
		want func(s helper.Signal) bool
	}{
		{"empty", true, helper.Signal.OK},
		{"never", false, func(s helper.Signal) bool { return s.NoResponse }},
		{"login", false, func(s helper.Signal) bool { return s.Status == 401 }},
		{"checkpoint", false, func(s helper.Signal) bool { return strings.Contains(s.Location, "/checkpoint/") }},
	} {
		t.Run(tc.q, func(t *testing.T) {
			r := &run{since: map[string]string{}}
			in := r.in([]core.Cookie{{Name: "c_user", Value: "1000", Domain: ".facebook.com"}})
			in.Phrases = []helper.Phrase{{Phrase: tc.q}}
			in.Report = func(ctx context.Context, s helper.Signal, wait time.Duration) error {
				r.reports = append(r.reports, s)
				return nil
			}
			rd := &Reader{Pages: pages, BaseURL: srv.URL, Pace: -1, Groups: -1}
			if tc.q == "never" {
				rd.Pages = short
			}
			err := rd.Read(context.Background(), in, r.emit)
			if (err == nil) != tc.ok {
				t.Fatalf("err %v, want a failed read: %t", err, !tc.ok)
			}
			if len(r.posts) != 0 || len(r.reports) != 1 || !tc.want(r.reports[0]) {
				t.Errorf("posts %v, reports %+v", r.posts, r.reports)
			}
		})
	}
}
