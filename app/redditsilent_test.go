package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/ports"
)

// Reddit answers a group read (/r/a+b+c/new.json) without the items of a
// member it will not show and says nothing of it: its code as last
// published drops a name it does not find from the group and a banned
// member from the group's listing (reddit-archive/reddit,
// r2/r2/controllers/reddit_base.py set_subreddit, r2/r2/models/
// subreddit.py MultiReddit.kept_sr_ids). Read alone, a private member is
// a 403 with reddit's JSON reason, {"reason": "private", "message":
// "Forbidden", "error": 403} (the body redditjson.Reason reads). A member
// silent for a day in group reads has its posts read alone once: the
// private one is named, the readable quiet one is not, and is not read
// alone again the next cycle.
func TestRedditSilentGroupMemberIsNamed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, c, o := newRedditWorld(t)
	for _, name := range []string{"golang", "quietclub", "secretclub"} {
		w.phrase(t, o.ID, "generics", name)
	}
	f := newFakeReddit(t, c)
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/r/secretclub/") {
			rw.Header().Set("Content-Type", "application/json; charset=UTF-8")
			rw.WriteHeader(http.StatusForbidden)
			_, _ = rw.Write([]byte(`{"reason": "private", "message": "Forbidden", "error": 403}`))
			return
		}
		// Groups holding secretclub are answered by the fake, which
		// holds none of its items: left out silently.
		f.serveReddit(rw, r)
	}))
	t.Cleanup(srv.Close)
	const interval = 10 * time.Minute
	src, err := reddit.New(reddit.Config{BaseURL: srv.URL, UserAgent: "test", Interval: interval, Logger: quiet,
		Now: c.Now, Sleep: c.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	poller := w.poller(src, c, "r1", nil)
	health := NewRedditHealth(w.phrases, gormstore.NewRedditStore(w.db), c)

	// cycle reads once, after a lively post and comment in r/golang, and
	// returns the paths asked and the status by community.
	cycle := func(step string) ([]string, map[string]RedditStatus) {
		t.Helper()
		made := c.Now().Add(time.Second)
		f.add("golang", ports.RedditPosts, "generics again", made, made, time.Time{})
		f.add("golang", ports.RedditComments, "generics, said again", made, made, time.Time{})
		c.Advance(2 * time.Second)
		mu.Lock()
		before := len(paths)
		mu.Unlock()
		if _, err := poller.Cycle(ctx, interval); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		rows, err := health.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]RedditStatus{}
		for _, r := range rows {
			by[r.Community] = r
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(paths[before:]), by
	}
	alone := func(asked []string, name string) bool {
		return slices.Contains(asked, "/r/"+name+"/new.json")
	}

	asked, st := cycle("first cycle")
	if alone(asked, "secretclub") || alone(asked, "quietclub") || st["secretclub"].LastError != "" {
		t.Fatalf("first cycle: asked %v, secretclub %+v; want it read in a group, silently", asked, st["secretclub"])
	}
	c.Advance(12 * time.Hour)
	if asked, _ = cycle("half a day later"); alone(asked, "secretclub") || alone(asked, "quietclub") {
		t.Fatalf("half a day later: asked %v, want no community read alone yet", asked)
	}
	c.Advance(12 * time.Hour)
	asked, st = cycle("a day later")
	if !alone(asked, "secretclub") || !alone(asked, "quietclub") {
		t.Fatalf("a day later: asked %v, want the two silent communities' posts read alone", asked)
	}
	if got := st["secretclub"].LastError; got != "reddit says the community is private" {
		t.Errorf("secretclub's last error %q, want it named private", got)
	}
	if got := st["quietclub"].LastError; got != "" {
		t.Errorf("quietclub's last error %q, want none: it answered alone", got)
	}
	c.Advance(interval)
	asked, st = cycle("the next cycle")
	if alone(asked, "quietclub") || !alone(asked, "secretclub") {
		t.Errorf("the next cycle: asked %v, want only the closed community read alone", asked)
	}
	if got := st["secretclub"].LastError; got != "reddit says the community is private" {
		t.Errorf("the next cycle: secretclub's last error %q", got)
	}
}
