package facebook

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
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
			rd := &Reader{Pages: pages, BaseURL: fb.URL, Pace: -1}
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
