package reddit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/earshothq/earshot/helper"
)

// longPage is a full page of reddit's /r/NAME/new.json (limit=100,
// raw_json=1) of long self posts in communities, cycled: each child is
// the first post of adapters/reddit/testdata/listing_new.json (taken
// from reddit's www.reddit.com/r/NAME/new.json answer), with reddit's
// own selftext_html beside its selftext, as reddit's listing carries
// both, and both at the 40,000 characters reddit allows a self post. The
// page weighs about 8 MB, as such a page does on reddit.
func longPage(t *testing.T, communities []string, created float64) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "adapters", "reddit", "testdata", "listing_new.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Kind string `json:"kind"`
		Data struct {
			Children []struct {
				Kind string         `json:"kind"`
				Data map[string]any `json:"data"`
			} `json:"children"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	tmpl := l.Data.Children[0]
	text := strings.Repeat("acme is the crm we use. ", 40000/24)
	// reddit's selftext_html: the markdown rendered, between its
	// SC_OFF/SC_ON markers.
	html := `<!-- SC_OFF --><div class="md"><p>` + text + "</p>\n</div><!-- SC_ON -->"
	var children []any
	for i := range 100 {
		d := map[string]any{}
		for k, v := range tmpl.Data {
			d[k] = v
		}
		sub := communities[i%len(communities)]
		id := fmt.Sprintf("big%03d", i)
		d["id"], d["name"], d["subreddit"] = id, "t3_"+id, sub
		d["subreddit_name_prefixed"] = "r/" + sub
		d["permalink"] = "/r/" + sub + "/comments/" + id + "/long/"
		d["url"] = "https://www.reddit.com/r/" + sub + "/comments/" + id + "/long/"
		d["selftext"], d["selftext_html"] = text, html
		d["created_utc"], d["created"] = created-float64(i), created-float64(i)
		children = append(children, map[string]any{"kind": tmpl.Kind, "data": d})
	}
	b, err := json.Marshal(map[string]any{"kind": l.Kind, "data": map[string]any{
		"after": "t3_big099", "dist": 100, "modhash": "", "geo_filter": nil, "children": children, "before": nil}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bigRig watches 51 communities, c00 to c50: reddit's listings are read
// in two groups, c00 to c49 together (MaxGroup) and c50 alone.
func bigRig(t *testing.T) (*rig, []string) {
	g := newRig(t)
	var names []string
	var phrases []helper.Phrase
	for i := range 51 {
		names = append(names, fmt.Sprintf("c%02d", i))
		phrases = append(phrases, helper.Phrase{Phrase: "acme", Community: names[i]})
	}
	g.earshot.set(func(f *earshotFake) { f.phrases = phrases })
	g.reddit.add("new", thing{kind: "t3", id: "late", sub: "c50", title: "acme", text: "after the big group", created: 1767225500})
	return g, names
}

// A page of 100 long self posts is about 8 MB: it is read, where a 4 MB
// bound failed the pass at that group, and every pass after it until the
// listing moved on.
func TestLongSelfPostsAreRead(t *testing.T) {
	g, names := bigRig(t)
	page := longPage(t, names[:50], 1767225400)
	if len(page) < 4<<20 || len(page) > 16<<20 {
		t.Fatalf("the page is %d bytes; the test wants between 4 and 16 MB", len(page))
	}
	g.reddit.mu.Lock()
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/r/"+strings.Join(names[:50], "+")+"/new.json" {
			return false
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write(page)
		return true
	}
	g.reddit.mu.Unlock()

	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatalf("pass: %v", err)
	}
	posts, _, _ := g.earshot.snapshot()
	if len(posts) != 101 {
		t.Errorf("%d posts sent, want the page's 100 and r/c50's", len(posts))
	}
	if p := posts["t3_big007"]; p.Community != "c07" || len(p.Body) != 1 || !strings.HasPrefix(p.Body[0], "acme is the crm") {
		t.Errorf("a long post sent as community %q, body %d", p.Community, len(p.Body))
	}
	if last := lastUnread(t, g.earshot); last != nil {
		t.Errorf("the last batch names %v unread, want none", last)
	}
}

// An answer over the bound still fails its group, but not the groups
// after it: they are read, and the pass reports the one that failed,
// whose communities the batches name as unread.
func TestAnswerOverTheBoundDoesNotStopTheGroupsAfter(t *testing.T) {
	g, names := bigRig(t)
	g.reddit.mu.Lock()
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/r/"+strings.Join(names[:50], "+")+"/new.json" {
			return false
		}
		// Past any bound a listing has: 17 MB of a listing that never
		// ends, so no more of it need be made.
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.Write([]byte(`{"kind": "Listing", "data": {"after": null, "children": [{"kind": "t3", "data": {"selftext": "`))
		chunk := []byte(strings.Repeat("x", 1<<20))
		for range 17 {
			if _, err := w.Write(chunk); err != nil {
				break
			}
		}
		return true
	}
	g.reddit.mu.Unlock()

	err := g.runner.Pass(context.Background())
	if err == nil || !strings.Contains(err.Error(), "c00+c01") || !strings.Contains(err.Error(), "over") {
		t.Errorf("pass: %v; want the big group's answer named", err)
	}
	posts, reports, _ := g.earshot.snapshot()
	if _, ok := posts["t3_late"]; !ok {
		t.Errorf("r/c50, read after the big group, was not sent")
	}
	for _, s := range reports {
		if s.Status != http.StatusOK {
			t.Errorf("reported %+v: one big answer is not the account's", s)
		}
	}
	if last := lastUnread(t, g.earshot); !slices.Equal(last, names[:50]) {
		t.Errorf("the last batch names %v unread, want c00 to c49", last)
	}
	if n := g.reddit.count(); n != 3 {
		t.Errorf("%d requests, want 3 (the big group's new, r/c50's new and comments)", n)
	}
}

// lastUnread is what the last batch named unread.
func lastUnread(t *testing.T, f *earshotFake) []string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.unread) == 0 {
		t.Fatal("no batch was sent")
	}
	return f.unread[len(f.unread)-1]
}
