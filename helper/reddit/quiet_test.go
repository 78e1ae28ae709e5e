package reddit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/reddit"
)

// pageAnswers makes the fake reddit page its listings as reddit does:
// the things of the communities asked for, newest created first (so a
// thing added late is listed at its own time, as reddit lists a post a
// moderator approved late), at most limit (100) a page, with data.after
// the fullname of the page's last child while more follow and null at
// the end (the shape of adapters/reddit/testdata's listing_new.json,
// taken from reddit's /r/NAME/new.json). failPage, when not nil, may
// answer a request instead (a 500, say).
func pageAnswers(f *redditFake, failPage func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer = func(w http.ResponseWriter, r *http.Request) bool {
		if failPage != nil && failPage(w, r) {
			return true
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/r/"), "/")
		if len(parts) != 2 {
			return false
		}
		subs := strings.Split(parts[0], "+")
		listing := strings.TrimSuffix(parts[1], ".json")
		f.mu.Lock()
		var all []thing
		for _, th := range f.things[listing] {
			if contains(subs, th.sub) {
				all = append(all, th)
			}
		}
		f.mu.Unlock()
		slices.SortStableFunc(all, func(a, b thing) int {
			switch {
			case a.created > b.created:
				return -1
			case a.created < b.created:
				return 1
			}
			return 0
		})
		start := 0
		if after := r.URL.Query().Get("after"); after != "" {
			start = slices.IndexFunc(all, func(th thing) bool { return th.kind+"_"+th.id == after }) + 1
		}
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		end := min(start+max(limit, 1), len(all))
		children := []map[string]any{}
		for _, th := range all[start:end] {
			children = append(children, th.child())
		}
		var after any
		if end < len(all) {
			after = all[end-1].kind + "_" + all[end-1].id
		}
		writeJSON(w, 200, map[string]any{"kind": "Listing", "data": map[string]any{"after": after, "dist": len(children), "children": children}})
		return true
	}
}

// newListed counts the requests of the new listing since the i-th request.
func newListed(g *rig, i int) int {
	n := 0
	for _, p := range g.reddit.paths(i) {
		if strings.HasSuffix(p, "/new.json") {
			n++
		}
	}
	return n
}

// quietRig is the case seen on a live group: r/golang's checkpoint is
// days back and it posts nothing, r/sales posts every minute (350 posts
// listed, more than MaxPages pages), its checkpoint reached on page 1.
func quietRig(t *testing.T) *rig {
	g := newRig(t)
	if err := g.runner.State.Set(map[string]string{
		reddit.Key("new", "golang"): "1767000000", reddit.Key("new", "sales"): "1767225000",
	}); err != nil {
		t.Fatal(err)
	}
	for i := 349; i >= 0; i-- {
		g.reddit.add("new", thing{kind: "t3", id: fmt.Sprintf("s%03d", i), sub: "sales", title: "acme crm", text: "x", created: float64(1767225590 - 60*i)})
	}
	pageAnswers(g.reddit, nil)
	return g
}

func pass(t *testing.T, g *rig) {
	t.Helper()
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A quiet community in a group does not make every pass page the
// listing to MaxPages: once a pass has read the group's listing down to
// where it goes, the next pass reads back only to where that one began.
// The mark is kept with the checkpoints: a restart reads as few pages.
func TestQuietCommunityDoesNotPageEveryPass(t *testing.T) {
	g := quietRig(t)
	pass(t, g)
	if n := newListed(g, 0); n != reddit.MaxPages {
		t.Fatalf("the first pass asked for %d pages of the new listing, want %d: r/golang's checkpoint is caught up with as before", n, reddit.MaxPages)
	}
	if posts, _, _ := g.earshot.snapshot(); len(posts) != 10 {
		t.Fatalf("%d posts sent, want r/sales' 10 after its checkpoint", len(posts))
	}
	for round := range 3 {
		g.clock.move(10 * time.Minute)
		g.reddit.add("new", thing{kind: "t3", id: fmt.Sprintf("n%d", round), sub: "sales", title: "acme", text: "x", created: float64(g.clock.Now().Unix() - 30)})
		if round == 2 {
			// A restart: a new runner and reader over the state file.
			st, err := helper.OpenState(g.state, g.earshot.srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			g.runner = &helper.Runner{Client: g.runner.Client, State: st, Now: g.clock.Now,
				Readers: []helper.Reader{&reddit.Reader{BaseURL: g.reddit.srv.URL, Now: g.clock.Now, Sleep: g.clock.Sleep}}}
		}
		before := g.reddit.count()
		pass(t, g)
		if n := newListed(g, before); n != 1 {
			t.Errorf("pass %d asked for %d pages of the new listing, want 1", round+2, n)
		}
		if posts, _, _ := g.earshot.snapshot(); posts[fmt.Sprintf("t3_n%d", round)].Body == nil {
			t.Errorf("pass %d did not send the new post", round+2)
		}
	}
}

// A first run reads one page of each listing, as before, and the pass
// after it one page too, the group's communities having been read to
// where that page began.
func TestFirstRunReadsOnePage(t *testing.T) {
	g := newRig(t)
	for i := 349; i >= 0; i-- {
		g.reddit.add("new", thing{kind: "t3", id: fmt.Sprintf("s%03d", i), sub: "sales", title: "acme", text: "x", created: float64(1767225590 - 60*i)})
	}
	pageAnswers(g.reddit, nil)
	pass(t, g)
	if n := newListed(g, 0); n != 1 {
		t.Fatalf("a first run asked for %d pages of the new listing, want 1", n)
	}
	g.clock.move(10 * time.Minute)
	before := g.reddit.count()
	pass(t, g)
	if n := newListed(g, before); n != 1 {
		t.Fatalf("the pass after a first run asked for %d pages, want 1", n)
	}
}

// A community added to the group has no mark: it is read as before, its
// own checkpoint caught up with (every page, once), and after that pass
// it has one. A community removed takes its mark with it: re-added, it
// is caught up with from its checkpoint again. The others keep theirs.
func TestAddedAndRemovedCommunities(t *testing.T) {
	g := quietRig(t)
	pass(t, g)
	// r/rust was followed once: its checkpoint is days back, no mark.
	if err := g.runner.State.Set(map[string]string{reddit.Key("new", "rust"): "1767000000"}); err != nil {
		t.Fatal(err)
	}
	withRust := []helper.Phrase{{Phrase: "acme", Community: "golang"}, {Phrase: "acme crm", Community: "sales"}, {Phrase: "acme", Community: "rust"}}
	g.earshot.set(func(f *earshotFake) { f.phrases = withRust })
	g.clock.move(10 * time.Minute)
	before := g.reddit.count()
	pass(t, g)
	if n := newListed(g, before); n != reddit.MaxPages {
		t.Fatalf("the pass that added r/rust asked for %d pages, want %d: its checkpoint is caught up with as before", n, reddit.MaxPages)
	}
	g.clock.move(10 * time.Minute)
	before = g.reddit.count()
	pass(t, g)
	if n := newListed(g, before); n != 1 {
		t.Fatalf("the pass after asked for %d pages, want 1", n)
	}
	// r/golang removed: r/sales and r/rust keep their marks.
	g.earshot.set(func(f *earshotFake) { f.phrases = withRust[1:] })
	g.clock.move(10 * time.Minute)
	before = g.reddit.count()
	pass(t, g)
	if n := newListed(g, before); n != 1 {
		t.Fatalf("the pass without r/golang asked for %d pages, want 1", n)
	}
	// Re-added, r/golang has no mark: its checkpoint is caught up with.
	g.earshot.set(func(f *earshotFake) { f.phrases = withRust })
	g.clock.move(10 * time.Minute)
	before = g.reddit.count()
	pass(t, g)
	if n := newListed(g, before); n != reddit.MaxPages {
		t.Fatalf("the pass that re-added r/golang asked for %d pages, want %d", n, reddit.MaxPages)
	}
	// A community never read (no checkpoint, no mark) adds no page.
	g.earshot.set(func(f *earshotFake) {
		f.phrases = append(withRust, helper.Phrase{Phrase: "acme", Community: "python"})
	})
	g.clock.move(10 * time.Minute)
	before = g.reddit.count()
	pass(t, g)
	if n := newListed(g, before); n != 1 {
		t.Fatalf("the pass that added r/python asked for %d pages, want 1", n)
	}
}

// A read that failed part way moves no mark: the next pass pages back
// to the checkpoints as before. A read whose batch the server refused
// keeps the checkpoint of the posts it found, and the next pass, which
// reads back to that checkpoint, sends them again.
func TestFailedReadMovesNoMark(t *testing.T) {
	g := quietRig(t)
	var fail atomic.Bool
	fail.Store(true)
	pageAnswers(g.reddit, func(w http.ResponseWriter, r *http.Request) bool {
		if fail.Load() && r.URL.Query().Get("after") != "" && strings.HasSuffix(r.URL.Path, "/new.json") && newListed(g, 0) == reddit.MaxPages {
			w.WriteHeader(http.StatusInternalServerError)
			return true
		}
		return false
	})
	var p *helper.Paused
	if err := g.runner.Pass(context.Background()); !errors.As(err, &p) {
		t.Fatalf("pass: %v, want a pause after the 500", err)
	}
	fail.Store(false)
	g.clock.move(time.Hour)
	before := g.reddit.count()
	pass(t, g)
	if n := newListed(g, before); n != reddit.MaxPages {
		t.Fatalf("the pass after a failed read asked for %d pages, want %d: no mark moved", n, reddit.MaxPages)
	}

	g.runner.Client.Attempts = 1
	g.reddit.add("new", thing{kind: "t3", id: "late1", sub: "sales", title: "acme", text: "x", created: float64(g.clock.Now().Unix() - 60)})
	g.earshot.set(func(f *earshotFake) { f.ingestFail = 1 })
	g.clock.move(10 * time.Minute)
	if err := g.runner.Pass(context.Background()); err == nil {
		t.Fatal("the pass succeeded while its batch was refused")
	}
	g.clock.move(10 * time.Minute)
	pass(t, g)
	if posts, _, _ := g.earshot.snapshot(); posts["t3_late1"].Body == nil {
		t.Fatal("the post of the refused batch was not sent again")
	}
}

// A post listed late with an older time (a moderator approved it hours
// after it was made, and reddit lists it at the time it was made) is
// kept when it is after its community's own checkpoint and on a page the
// pass reads: a mark bounds the paging, not what is kept. A pass reads
// back to where the last one began, so a quiet community's late post on
// the first page is sent, as before, and one deeper than where the last
// pass began is not; before, the quiet community made every pass read
// MaxPages pages, which caught it there.
func TestQuietCommunitysLatePost(t *testing.T) {
	g := quietRig(t)
	pass(t, g)
	g.clock.move(10 * time.Minute)
	// r/golang's late posts: on page 1 among r/sales' posts, and on page 2.
	g.reddit.add("new", thing{kind: "t3", id: "gshallow", sub: "golang", title: "acme", text: "late", created: 1767225000})
	g.reddit.add("new", thing{kind: "t3", id: "gdeep", sub: "golang", title: "acme", text: "late", created: 1767215000})
	before := g.reddit.count()
	pass(t, g)
	posts, _, _ := g.earshot.snapshot()
	if posts["t3_gshallow"].Body == nil {
		t.Error("r/golang's late post on the page read was not sent")
	}
	if posts["t3_gdeep"].Body != nil {
		t.Error("r/golang's late post past where the last pass began was sent: the pass read deeper than it needs to")
	}
	if n := newListed(g, before); n != 1 {
		t.Errorf("the pass asked for %d pages, want 1", n)
	}
}

// A community that posted in the last pass has no mark: the pass reads
// back to its checkpoint as before, so its late post is sent however
// deep it lies within MaxPages, though the group's other communities
// were read to where the last pass began.
func TestPostingCommunitysLatePost(t *testing.T) {
	g := newRig(t)
	if err := g.runner.State.Set(map[string]string{
		reddit.Key("new", "golang"): "1767000000", reddit.Key("new", "sales"): "1767200000",
	}); err != nil {
		t.Fatal(err)
	}
	g.earshot.set(func(f *earshotFake) {
		f.phrases = append(f.phrases, helper.Phrase{Phrase: "acme", Community: "rust"})
	})
	// Pass 1: r/sales' newest at 1767220000, 100 of r/rust's above it,
	// the newest at 1767225590; r/golang is quiet.
	for i := 199; i >= 0; i-- {
		g.reddit.add("new", thing{kind: "t3", id: fmt.Sprintf("s%03d", i), sub: "sales", title: "acme", text: "x", created: float64(1767220000 - 60*i)})
	}
	for i := 99; i >= 0; i-- {
		g.reddit.add("new", thing{kind: "t3", id: fmt.Sprintf("r%03d", i), sub: "rust", title: "acme", text: "x", created: float64(1767225590 - 50*i)})
	}
	pageAnswers(g.reddit, nil)
	pass(t, g)
	// Pass 2: 150 new posts of r/rust on top, and r/sales' late post
	// just after its checkpoint, on page 3.
	g.clock.move(time.Hour)
	for i := 149; i >= 0; i-- {
		g.reddit.add("new", thing{kind: "t3", id: fmt.Sprintf("q%03d", i), sub: "rust", title: "acme", text: "x", created: float64(1767229000 - 10*i)})
	}
	g.reddit.add("new", thing{kind: "t3", id: "slate", sub: "sales", title: "acme", text: "late", created: 1767220001})
	before := g.reddit.count()
	pass(t, g)
	if posts, _, _ := g.earshot.snapshot(); posts["t3_slate"].Body == nil {
		t.Error("r/sales' late post (it posted in the last pass) was not sent")
	}
	if n := newListed(g, before); n != reddit.MaxPages {
		t.Errorf("the pass asked for %d pages, want %d: back to r/sales' checkpoint", n, reddit.MaxPages)
	}
}

// A batch refused while the read still hands on its posts (the first
// 100 of r/sales' 151, two pages back) ends the read: no mark moves, and
// the next pass pages back to r/golang's checkpoint as before and sends
// the posts.
func TestBatchRefusedWithinTheReadMovesNoMark(t *testing.T) {
	g := quietRig(t)
	if err := g.runner.State.Set(map[string]string{reddit.Key("new", "sales"): "1767216590"}); err != nil {
		t.Fatal(err)
	}
	g.runner.Client.Attempts = 1
	g.earshot.set(func(f *earshotFake) { f.ingestFail = 1 })
	if err := g.runner.Pass(context.Background()); err == nil {
		t.Fatal("the pass succeeded while its first batch was refused")
	}
	g.clock.move(10 * time.Minute)
	before := g.reddit.count()
	pass(t, g)
	if n := newListed(g, before); n != reddit.MaxPages {
		t.Fatalf("the pass after the refused batch asked for %d pages, want %d: no mark moved", n, reddit.MaxPages)
	}
	if posts, _, _ := g.earshot.snapshot(); len(posts) != 151 {
		t.Fatalf("%d posts sent, want r/sales' 151 after its checkpoint", len(posts))
	}
}
