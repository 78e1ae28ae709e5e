package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// windowWorld is a world with a window on a clock the test moves, the
// ingest and phrase services that feed it, and an event log of what the
// window announced.
type windowWorld struct {
	world
	clock   *handClock
	window  *Window
	ingest  *Ingest
	phrases *Phrases
	recent  *gormstore.RecentStore
	events  *eventLog
}

type eventLog struct {
	mu     sync.Mutex
	events []ports.Event
}

func (l *eventLog) Publish(_ context.Context, es ...ports.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, es...)
	return nil
}

// announced returns the match ids the events carried.
func (l *eventLog) announced() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		var me MatchEvent
		_ = json.Unmarshal(e.Payload, &me)
		out = append(out, me.MatchIDs...)
	}
	return out
}

// newWindowWorld counts each owner's backfills against
// cfg.BackfillsPerMinute on the world's clock when limit is set.
func newWindowWorld(t *testing.T, w world, cfg WindowConfig, limit bool) *windowWorld {
	t.Helper()
	ww := &windowWorld{world: w, clock: &handClock{now: time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)}, events: &eventLog{},
		recent: gormstore.NewRecentStore(w.db)}
	var limiter ports.RateLimiter
	if limit {
		limiter = ratelimit.NewMemory(ww.clock.Now)
	}
	ww.window = NewWindow(WindowDeps{Recent: ww.recent, Archives: gormstore.NewFilterArchiveStore(w.db), Phrases: w.phrases,
		Publisher: ww.events, Limiter: limiter, Leases: w.leases, Holder: "test", Clock: ww.clock, Log: quiet}, cfg)
	ww.phrases = NewPhrases(w.phrases, core.Limits{PhrasesPerPlatform: 100}, ww.clock)
	ww.phrases.OnAdd(ww.window.Added)
	ww.ingest = NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases),
		Log: quiet, Clock: ww.clock, Window: ww.window}, core.Limits{AccountsPerPlatform: 1})
	return ww
}

var week = WindowConfig{Days: 7, Posts: 1000}

// send ingests posts for the owner on x, each "id: text" with the author
// and likes of its place in the list.
func (ww *windowWorld) send(t *testing.T, owner string, posts ...string) {
	t.Helper()
	var batch []core.IngestPost
	for _, p := range posts {
		id, text, _ := strings.Cut(p, ": ")
		batch = append(batch, core.IngestPost{ExternalID: id, AuthorName: "ada", Body: []string{text}, URL: "https://x.com/ada/" + id, Likes: 5})
	}
	if _, n, _, err := ww.ingest.Ingest(context.Background(), owner, "x", batch); err != nil || n != len(posts) {
		t.Fatalf("Ingest = %d, %v", n, err)
	}
}

// kept lists the external ids of the owner's window on x, newest first.
func (ww *windowWorld) kept(t *testing.T, owner string) []string {
	t.Helper()
	var out []string
	if _, err := ww.recent.RecentPosts(context.Background(), ports.RecentQuery{OwnerID: owner, Platform: core.X, Limit: 1000},
		func(p core.RecentPost) bool { out = append(out, p.Post.ExternalID); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

func ids[T any](xs []T, id func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out
}

func postID(p core.RecentPost) string { return p.Post.ExternalID }
func matchPostID(m core.Match) string { return m.Post.ExternalID }

// Ingest keeps every post, matched or not, stamped by the clock; the
// sweep trims what was seen more than the days ago, and then each
// owner's oldest beyond the number. Without a window nothing is kept.
func TestWindowKeepsAndTrims(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, WindowConfig{Days: 7, Posts: 4}, false)
		o := w.owner(t, "keep@example.com")
		if _, _, err := ww.phrases.Add(ctx, o.ID, "acme", "x", "", ""); err != nil {
			t.Fatal(err)
		}
		ww.send(t, o.ID, "mon-1: acme is fine", "mon-2: nothing to see")
		ww.clock.add(3 * 24 * time.Hour)
		ww.send(t, o.ID, "thu-1: thursday", "thu-2: acme again")
		if err := ww.window.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got := ww.kept(t, o.ID); !slices.Equal(got, []string{"thu-2", "thu-1", "mon-2", "mon-1"}) {
			t.Fatalf("kept %v", got)
		}
		// Monday's posts are eight days old.
		ww.clock.add(5 * 24 * time.Hour)
		if n, err := ww.window.Trim(ctx); err != nil || n != 2 {
			t.Fatalf("Trim = %d, %v; want Monday's 2", n, err)
		}
		if got := ww.kept(t, o.ID); !slices.Equal(got, []string{"thu-2", "thu-1"}) {
			t.Fatalf("after a week: %v", got)
		}
		// Four at most: the oldest go first.
		ww.send(t, o.ID, "sat-1: a", "sat-2: b", "sat-3: c")
		if err := ww.window.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if got := ww.kept(t, o.ID); !slices.Equal(got, []string{"sat-3", "sat-2", "sat-1", "thu-2"}) {
			t.Fatalf("four kept: %v", got)
		}

		off := newWindowWorld(t, w, WindowConfig{Days: 0, Posts: 4}, false)
		p := w.owner(t, "off@example.com")
		off.send(t, p.ID, "x-1: acme")
		if got := off.kept(t, p.ID); len(got) != 0 {
			t.Fatalf("a window that is off kept %v", got)
		}
	})
}

// A preview says exactly what matching would have made of the window: an
// owner whose phrase listened all along has the same matches as the
// preview of that phrase, filters and all, finds in another owner's
// window of the same posts.
func TestWindowPreviewIsWhatMatchingDoes(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, week, false)
		listening, trying := w.owner(t, "listening@example.com"), w.owner(t, "trying@example.com")
		filters := core.PhraseFilters{Exclude: []string{"hiring"}, Require: []string{"price"}}
		if _, _, err := ww.phrases.AddWithFilters(ctx, listening.ID, "Acme CRM", "x", "", filters, ""); err != nil {
			t.Fatal(err)
		}
		posts := []string{
			"1: acme crm price went up",
			"2: ACME  CRM, price?",
			"3: acme crm price, we are hiring",
			"4: acme crm is free",
			"5: acme-crm price",
			"6: acme_crm price",
			"7: the price of acme, the crm",
			"8: Acme CRM's price list",
			"9: nothing at all",
			"10: acme crmprice",
		}
		for _, o := range []string{listening.ID, trying.ID} {
			ww.send(t, o, posts[:5]...)
			ww.send(t, o, posts[5:]...)
		}
		if err := ww.window.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		var made []string
		ms, _, _ := w.matches.Matches(ctx, listening.ID, ports.MatchFilter{MinScore: -1, Limit: 100})
		for _, m := range ms {
			made = append(made, m.Post.ExternalID)
		}
		pv, err := ww.window.Preview(ctx, trying.ID, "  acme   CRM ", "x", "", filters)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(pv.Window.First, postID); !slices.Equal(got, made) || pv.Window.Count != len(made) || pv.Window.Partial {
			t.Fatalf("preview found %v (count %d, partial %v), matching made %v", got, pv.Window.Count, pv.Window.Partial, made)
		}
		if pv.Phrase.Phrase != "acme CRM" || pv.Days != 7 || pv.Posts != 1000 || len(pv.Dropped.First) != 0 {
			t.Fatalf("preview: %+v", pv)
		}
		if !slices.Equal(made, []string{"8", "2", "1"}) {
			t.Fatalf("matching made %v", made)
		}

		_, err = ww.window.Preview(ctx, trying.ID, "", "x", "", core.PhraseFilters{})
		wantKind(t, err, core.KindInvalid)
		_, err = ww.window.Preview(ctx, trying.ID, "acme", "x", "", core.PhraseFilters{MinLikes: -1})
		wantKind(t, err, core.KindInvalid)

		// A phrase with no word of its own is tried on every post.
		if pv, err := ww.window.Preview(ctx, trying.ID, "?", "x", "", core.PhraseFilters{}); err != nil || pv.Window.Count != 1 ||
			pv.Window.Read != len(posts) || pv.Window.First[0].Post.ExternalID != "2" {
			t.Fatalf("preview of ?: %+v, %v", pv.Window, err)
		}
		// The reading is bounded, and says so.
		small := NewWindow(WindowDeps{Recent: ww.recent, Archives: gormstore.NewFilterArchiveStore(w.db), Phrases: w.phrases, Clock: ww.clock},
			WindowConfig{Days: 7, Posts: 1000, Reads: 3})
		pv, err = small.Preview(ctx, trying.ID, "acme crm", "x", "", filters)
		if err != nil || pv.Window.Read != 3 || !pv.Window.Partial || pv.Window.Count > 3 {
			t.Fatalf("bounded preview: %+v, %v", pv.Window, err)
		}
		off := NewWindow(WindowDeps{Recent: ww.recent, Archives: gormstore.NewFilterArchiveStore(w.db), Phrases: w.phrases}, WindowConfig{})
		if pv, err := off.Preview(ctx, trying.ID, "acme crm", "x", "", filters); err != nil || pv.Window.Read != 0 || pv.Days != 0 {
			t.Fatalf("a preview with the window off: %+v, %v", pv, err)
		}
	})
}

func wantKind(t *testing.T, err error, k core.Kind) {
	t.Helper()
	if !core.IsKind(err, k) {
		t.Fatalf("error %v, want kind %s", err, k)
	}
}

// A phrase added is filled from the window in the background: its
// matches there are stored, marked as backfilled, announced for scoring,
// newest post newest, never twice, and each owner's backfills are
// rate limited (the rest wait for a later minute).
func TestWindowBackfill(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, WindowConfig{Days: 7, Posts: 1000, BackfillsPerMinute: 1}, true)
		clock := ww.clock
		o := w.owner(t, "fill@example.com")
		live, _, err := ww.phrases.Add(ctx, o.ID, "widgets", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		ww.send(t, o.ID, "old-1: acme and widgets", "old-2: nothing", "old-3: acme again")
		ww.send(t, o.ID, "old-4: more acme")
		if err := ww.window.Sweep(ctx); err != nil { // the live phrase's request: nothing to fill yet
			t.Fatal(err)
		}
		acme, _, err := ww.phrases.Add(ctx, o.ID, "acme", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		second, _, err := ww.phrases.Add(ctx, o.ID, "nothing", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		// The adds woke the sweep.
		select {
		case <-ww.window.wake:
		default:
			t.Fatal("adding a phrase did not wake the sweep")
		}
		clock.add(time.Minute) // the first sweep's backfill took this minute's one
		if err := ww.window.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		ms, _, _ := w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 100})
		byPhrase := map[string][]string{}
		for _, m := range ms {
			byPhrase[m.PhraseID] = append(byPhrase[m.PhraseID], m.Post.ExternalID)
			if m.Backfilled != (m.PhraseID == acme.ID) {
				t.Errorf("match %s of %q: backfilled %v", m.Post.ExternalID, m.Phrase, m.Backfilled)
			}
		}
		if !slices.Equal(byPhrase[acme.ID], []string{"old-4", "old-3", "old-1"}) || !slices.Equal(byPhrase[live.ID], []string{"old-1"}) {
			t.Fatalf("matches by phrase: %v", byPhrase)
		}
		for _, m := range ms {
			if m.PhraseID == acme.ID && !slices.Contains(ww.events.announced(), m.ID) {
				t.Errorf("backfilled match %s was not announced", m.ID)
			}
		}
		if p, _ := ww.phrases.Get(ctx, o.ID, acme.ID); p.Matches != 3 {
			t.Errorf("the phrase counts %d matches", p.Matches)
		}
		// One backfill a minute: the second phrase waits.
		pending, _ := ww.recent.Backfills(ctx, 10, 10)
		if !slices.ContainsFunc(pending, func(p core.Phrase) bool { return p.ID == second.ID }) {
			t.Fatalf("the second phrase was filled within the rate: pending %v", pending)
		}
		clock.add(time.Minute)
		if err := ww.window.Backfill(ctx); err != nil {
			t.Fatal(err)
		}
		if pending, _ := ww.recent.Backfills(ctx, 10, 10); len(pending) != 0 {
			t.Fatalf("still pending a minute later: %v", pending)
		}
		// A post matched as it is read after the add is not matched again.
		ww.send(t, o.ID, "new-1: acme today")
		if err := ww.window.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ww.recent.RequestBackfill(ctx, acme.ID, clock.Now()); err != nil {
			t.Fatal(err)
		}
		clock.add(time.Minute)
		if err := ww.window.Backfill(ctx); err != nil {
			t.Fatal(err)
		}
		ms, _, _ = w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 100})
		seen := map[string]bool{}
		for _, m := range ms {
			key := m.PhraseID + "/" + m.Post.ExternalID
			if seen[key] {
				t.Fatalf("%s matched twice", key)
			}
			seen[key] = true
		}
		if !seen[acme.ID+"/new-1"] {
			t.Fatal("the new post was not matched")
		}
	})
}

// One owner's phrases waiting beyond its rate hold no other owner's
// back: a phrase of an owner within its rate is filled at the next sweep.
func TestWindowBackfillOwnersApart(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, WindowConfig{Days: 7, Posts: 1000, BackfillsPerMinute: 1}, true)
		busy, quiet := w.owner(t, "busy@example.com"), w.owner(t, "quiet@example.com")
		ww.send(t, quiet.ID, "q-1: acme is here")
		for i := range 60 {
			if _, _, err := ww.phrases.Add(ctx, busy.ID, fmt.Sprintf("phrase %d", i), "x", "", ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := ww.phrases.Add(ctx, quiet.ID, "acme", "x", "", ""); err != nil {
			t.Fatal(err)
		}
		if err := ww.window.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if ms, _, _ := w.matches.Matches(ctx, quiet.ID, ports.MatchFilter{MinScore: -1, Limit: 10}); len(ms) != 1 || !ms[0].Backfilled {
			t.Fatalf("the quiet owner's phrase was not filled: %d matches", len(ms))
		}
	})
}

// A change of filters is previewed against the phrase's matches, and
// applying the filters archives, in one step, exactly the matches they
// drop that were not archived; undoing restores that set.
func TestWindowApplyFilters(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, week, false)
		o := w.owner(t, "apply@example.com")
		p, _, err := ww.phrases.Add(ctx, o.ID, "acme", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("lorem ", core.MaxPostText/6) + "acme, hiring"
		ww.send(t, o.ID, "a: acme hiring now", "b: acme is nice", "c: acme HIRING", "d: "+long, "e: acme price")
		ms, _, _ := w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 100})
		byPost := map[string]string{}
		for _, m := range ms {
			byPost[m.Post.ExternalID] = m.ID
		}
		if len(byPost) != 5 {
			t.Fatalf("matches: %v", byPost)
		}
		// The owner archived c by hand.
		inbox := NewInbox(gormstore.NewTriageStore(w.db))
		yes := true
		if _, err := inbox.Set(ctx, o.ID, byPost["c"], core.TriageChange{Archived: &yes}); err != nil {
			t.Fatal(err)
		}
		hiring := []string{"hiring"}
		pv, err := ww.window.PreviewChange(ctx, o.ID, p.ID, core.PhraseFiltersChange{Exclude: &hiring})
		if err != nil {
			t.Fatal(err)
		}
		// d's phrase and word lie past the stored text's end: it stays.
		if got := ids(pv.Dropped.First, matchPostID); !slices.Equal(got, []string{"c", "a"}) || pv.Dropped.Count != 2 ||
			pv.Archivable != 1 || pv.Dropped.Read != 5 || pv.Dropped.Partial {
			t.Fatalf("dropped %v (%+v), archivable %d", got, pv.Dropped, pv.Archivable)
		}
		// In the window, d's stored text ends before its phrase.
		if got := ids(pv.Window.First, postID); !slices.Equal(got, []string{"e", "b"}) || pv.Window.Count != 2 {
			t.Fatalf("the window finds %v (%+v)", got, pv.Window)
		}
		_, err = ww.window.PreviewChange(ctx, o.ID, "no-such-phrase", core.PhraseFiltersChange{})
		wantKind(t, err, core.KindNotFound)
		bad := []string{""}
		_, err = ww.window.PreviewChange(ctx, o.ID, p.ID, core.PhraseFiltersChange{Exclude: &bad})
		wantKind(t, err, core.KindInvalid)

		if _, err := ww.phrases.Update(ctx, o.ID, p.ID, nil, core.PhraseFiltersChange{Exclude: &hiring}); err != nil {
			t.Fatal(err)
		}
		// c, archived by hand, is not judged: Read counts the other four.
		applied, err := ww.window.ApplyFilters(ctx, o.ID, p.ID)
		if err != nil || applied.Set.Matches != 1 || applied.Read != 4 || applied.Partial {
			t.Fatalf("ApplyFilters = %+v, %v", applied, err)
		}
		archived := func() []string {
			var out []string
			for post, id := range byPost {
				if tr, _ := inbox.Item(ctx, o.ID, id); tr.Archived {
					out = append(out, post)
				}
			}
			slices.Sort(out)
			return out
		}
		if got := archived(); !slices.Equal(got, []string{"a", "c"}) {
			t.Fatalf("archived after applying: %v", got)
		}
		if last, err := ww.window.LastApplied(ctx, o.ID, p.ID); err != nil || last.ID != applied.Set.ID {
			t.Fatalf("LastApplied = %+v, %v", last, err)
		}
		// Applying again finds nothing more to archive, and keeps the set.
		if again, err := ww.window.ApplyFilters(ctx, o.ID, p.ID); err != nil || again.Set.ID != "" {
			t.Fatalf("applying again = %+v, %v", again, err)
		}
		_, err = ww.window.UndoApply(ctx, "someone-else", p.ID, applied.Set.ID)
		wantKind(t, err, core.KindNotFound)
		if n, err := ww.window.UndoApply(ctx, o.ID, p.ID, applied.Set.ID); err != nil || n != 1 {
			t.Fatalf("UndoApply = %d, %v", n, err)
		}
		if got := archived(); !slices.Equal(got, []string{"c"}) {
			t.Fatalf("archived after undoing: %v", got)
		}
		_, err = ww.window.UndoApply(ctx, o.ID, p.ID, applied.Set.ID)
		wantKind(t, err, core.KindNotFound)
	})
}

// The reddit reader keeps every post it reads for each owner whose
// phrase watches the post's community, matched or not, once.
func TestWindowRedditKeepsEveryPost(t *testing.T) {
	t.Parallel()
	w, c, a := newRedditWorld(t)
	ctx := context.Background()
	b := w.owner(t, "b@example.com")
	w.phrase(t, a.ID, "generics", "golang")
	w.phrase(t, b.ID, "modules", "golang")
	w.phrase(t, b.ID, "borrow checker", "rust")
	recent := gormstore.NewRecentStore(w.db)
	window := NewWindow(WindowDeps{Recent: recent, Clock: c}, week)
	f := newFakeReddit(t, c)
	made := c.Now().Add(time.Second)
	p1 := f.add("golang", ports.RedditPosts, "generics again", made, made, time.Time{})
	p2 := f.add("golang", ports.RedditComments, "nothing anyone tracks", made, made, time.Time{})
	p3 := f.add("rust", ports.RedditPosts, "lifetimes", made, made, time.Time{})
	c.Advance(2 * time.Second)
	deps := w.pollerDeps(f.source(t, false, time.Minute, false), c, "r", nil)
	deps.Window = window
	poller := NewReddit(deps)
	for range 2 { // the second cycle reads the overlap again
		if _, err := poller.Cycle(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Minute)
	}
	kept := func(owner, community string) []string {
		var out []string
		if _, err := recent.RecentPosts(ctx, ports.RecentQuery{OwnerID: owner, Platform: core.Reddit, Community: community, Limit: 100},
			func(p core.RecentPost) bool { out = append(out, p.Post.ExternalID); return true }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	golang := []string{p1, p2}
	slices.Sort(golang)
	if got := kept(a.ID, "golang"); !slices.Equal(got, golang) {
		t.Errorf("a's golang window: %v, want %v", got, golang)
	}
	if got := kept(b.ID, "golang"); !slices.Equal(got, golang) {
		t.Errorf("b's golang window: %v, want %v", got, golang)
	}
	if got := kept(b.ID, "rust"); !slices.Equal(got, []string{p3}) {
		t.Errorf("b's rust window: %v", got)
	}
	if got := kept(a.ID, "rust"); len(got) != 0 {
		t.Errorf("a keeps rust posts: %v", got)
	}
}
