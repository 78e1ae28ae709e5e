package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
	"github.com/earshothq/earshot/ports"
)

// keep is what a reader keeps of p, seen at at.
func keep(_ core.Post, community string, at time.Time) *ports.RecentKeep {
	return &ports.RecentKeep{Community: community, SeenAt: at}
}

// seenNow is a time the store keeps to the microsecond.
func seenNow() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// recent lists the posts q passes, by external id, newest first.
func recent(t *testing.T, s Stores, q ports.RecentQuery) (ids []string, more bool) {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 1000
	}
	more, err := s.Recent.RecentPosts(ctx, q, func(p core.RecentPost) bool {
		ids = append(ids, p.Post.ExternalID)
		return true
	})
	if err != nil {
		t.Fatalf("RecentPosts(%+v): %v", q, err)
	}
	return ids, more
}

// indexAll brings the text index up to date, as the window's sweep
// does: each post's words as the matcher cuts them.
func indexAll(t *testing.T, s Stores) {
	t.Helper()
	for {
		ps, err := s.Recent.Unindexed(ctx, 50)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) == 0 {
			return
		}
		words := make([]ports.RecentWords, len(ps))
		for i, p := range ps {
			words[i] = ports.RecentWords{Seq: p.Seq, Words: string(match.AppendWords(match.AppendWords(nil, p.Post.Title), p.Post.Text))}
		}
		if err := s.Recent.IndexRecent(ctx, words); err != nil {
			t.Fatal(err)
		}
	}
}

// testRecentKeep: a post new to the owner is kept once, matched or not,
// with every field; one sent again, one sent without Keep and one of
// another owner are not kept for the owner.
func testRecentKeep(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	p := newPhrase(t, s, o.ID, "kept", "reddit", "golang")
	at := seenNow()
	titled := post("titled")
	untitled := core.Post{ExternalID: "untitled", Author: "", Text: "no title \"quoted\" σοφία", URL: "https://example.com/u",
		PostedAt: at.Add(-time.Hour)}
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.Reddit, []ports.PostMatches{
		{Post: titled, PhraseIDs: []string{p.ID}, Keep: keep(titled, "golang", at)},
		{Post: untitled, Keep: keep(untitled, "golang", at.Add(time.Millisecond))},
		{Post: post("unkept")},
		{Post: titled, Keep: keep(titled, "golang", at)}, // twice in one batch
	})
	if err != nil || res.Saved != 3 || len(res.Matches) != 1 {
		t.Fatalf("SaveMatches = %+v, %v", res, err)
	}
	if _, err := s.Matches.SaveMatches(ctx, o.ID, core.Reddit, []ports.PostMatches{{Post: titled, Keep: keep(titled, "golang", at.Add(time.Hour))}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Matches.SaveMatches(ctx, other.ID, core.Reddit, []ports.PostMatches{{Post: post("others"), Keep: keep(post("others"), "golang", at)}}); err != nil {
		t.Fatal(err)
	}
	var got []core.RecentPost
	more, err := s.Recent.RecentPosts(ctx, ports.RecentQuery{OwnerID: o.ID, Platform: core.Reddit, Community: "golang", Limit: 10},
		func(p core.RecentPost) bool { got = append(got, p); return true })
	if err != nil || more || len(got) != 2 {
		t.Fatalf("RecentPosts = %+v, %v, %v", got, more, err)
	}
	want := []core.RecentPost{
		{OwnerID: o.ID, Platform: core.Reddit, Community: "golang", Post: untitled, SeenAt: at.Add(time.Millisecond)},
		{OwnerID: o.ID, Platform: core.Reddit, Community: "golang", Post: titled, SeenAt: at},
	}
	for i := range got {
		want[i].Seq = got[i].Seq
		if got[i] != want[i] {
			t.Errorf("post %d = %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if got[0].Seq <= got[1].Seq {
		t.Errorf("the later post has Seq %d, the earlier %d", got[0].Seq, got[1].Seq)
	}
	for _, q := range []ports.RecentQuery{
		{OwnerID: o.ID, Platform: core.Reddit, Community: "other"},
		{OwnerID: o.ID, Platform: core.X},
	} {
		if ids, _ := recent(t, s, q); len(ids) != 0 {
			t.Errorf("RecentPosts(%+v) = %v", q, ids)
		}
	}
	if ids, _ := recent(t, s, ports.RecentQuery{OwnerID: other.ID, Platform: core.Reddit, Community: "golang"}); !slices.Equal(ids, []string{"others"}) {
		t.Errorf("the other owner's window: %v", ids)
	}
}

// testRecentSearch: a search passes every post that holds the words one
// after another, newest first, before the index has them and after; once
// the index is up to date, no post that lacks them; and only the owner's
// posts of the platform and community.
func testRecentSearch(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	at := seenNow()
	texts := map[string]string{
		"both":      "we tried Acme CRM last week",
		"split":     "acme is a crm of sorts",
		"reversed":  "crm acme",
		"symbols":   "acme-crm, the cheap one",
		"case":      "ACME   crm\nis fine",
		"underline": "acme_crm",
		"greek":     "ΣΟΦΊΑ acme crm σοφία",
		"none":      "nothing here",
	}
	var batch []ports.PostMatches
	for id, text := range texts {
		p := core.Post{ExternalID: id, Text: text, URL: "https://x.com/" + id}
		batch = append(batch, ports.PostMatches{Post: p, Keep: keep(p, "", at)})
	}
	slices.SortFunc(batch, func(a, b ports.PostMatches) int { return strings.Compare(a.Post.ExternalID, b.Post.ExternalID) })
	rank := map[string]int{} // the order kept in, oldest first
	for i := range batch {
		batch[i].Keep.SeenAt = at.Add(time.Duration(i) * time.Millisecond)
		rank[batch[i].Post.ExternalID] = i
	}
	if _, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch); err != nil {
		t.Fatal(err)
	}
	p := core.Post{ExternalID: "theirs", Text: "acme crm", URL: "https://x.com/theirs"}
	if _, err := s.Matches.SaveMatches(ctx, other.ID, core.X, []ports.PostMatches{{Post: p, Keep: keep(p, "", at)}}); err != nil {
		t.Fatal(err)
	}
	q := ports.RecentQuery{OwnerID: o.ID, Platform: core.X, Words: match.Words("Acme CRM")}
	holding := []string{"underline", "symbols", "greek", "case", "both"} // newest first: the batch's order by id, reversed
	check := func(when string, exact bool) {
		t.Helper()
		ids, more := recent(t, s, q)
		if more {
			t.Errorf("%s: more with no limit reached", when)
		}
		for _, id := range holding {
			if !slices.Contains(ids, id) {
				t.Errorf("%s: %q holds the words but was not passed: %v", when, id, ids)
			}
		}
		if slices.Contains(ids, "theirs") {
			t.Errorf("%s: another owner's post passed", when)
		}
		if exact && !slices.Equal(ids, holding) {
			t.Errorf("%s: passed %v, want %v", when, ids, holding)
		}
		for i := 1; i < len(ids); i++ {
			if rank[ids[i-1]] < rank[ids[i]] {
				t.Errorf("%s: not newest first: %v", when, ids)
			}
		}
	}
	check("before indexing", false)
	indexAll(t, s)
	check("indexed", true)
	q.Words = match.Words("σοφία")
	if ids, _ := recent(t, s, q); !slices.Equal(ids, []string{"greek"}) {
		t.Errorf("a Greek word, folded: %v", ids)
	}
	// Limits: the newest first, and more says what is left.
	q.Words, q.Limit = match.Words("acme crm"), 2
	if ids, more := recent(t, s, q); !slices.Equal(ids, holding[:2]) || !more {
		t.Errorf("limit 2: %v, more %v", ids, more)
	}
	q.Limit = len(holding)
	if ids, more := recent(t, s, q); len(ids) != len(holding) || more {
		t.Errorf("limit %d: %v, more %v", q.Limit, ids, more)
	}
	// each can stop the walk.
	n := 0
	if _, err := s.Recent.RecentPosts(ctx, ports.RecentQuery{OwnerID: o.ID, Platform: core.X, Limit: 100},
		func(core.RecentPost) bool { n++; return n < 3 }); err != nil || n != 3 {
		t.Errorf("stopping after 3: %d, %v", n, err)
	}
	// No words: every post.
	if ids, _ := recent(t, s, ports.RecentQuery{OwnerID: o.ID, Platform: core.X}); len(ids) != len(texts) {
		t.Errorf("no words: %v", ids)
	}
	// Posts kept after the index caught up are found too.
	late := core.Post{ExternalID: "late", Text: "acme crm again", URL: "https://x.com/late"}
	if _, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: late, Keep: keep(late, "", at.Add(time.Second))}}); err != nil {
		t.Fatal(err)
	}
	q.Limit = 100
	if ids, _ := recent(t, s, q); len(ids) == 0 || ids[0] != "late" {
		t.Errorf("a post kept after indexing: %v", ids)
	}
}

// testRecentTrim runs alone, as trims bound every owner at once: a trim
// deletes the posts seen before its time, then
// each owner's oldest beyond the number, at most limit at a time, and
// what it deleted is found no more, in the index either.
func testRecentTrim(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	save := func(owner string, prefix string, n int, at time.Time) {
		var batch []ports.PostMatches
		for i := range n {
			p := core.Post{ExternalID: fmt.Sprintf("%s-%d", prefix, i), Text: "trim me " + prefix, URL: "https://x.com/t"}
			batch = append(batch, ports.PostMatches{Post: p, Keep: keep(p, "", at.Add(time.Duration(i)*time.Second))})
		}
		if _, err := s.Matches.SaveMatches(ctx, owner, core.X, batch); err != nil {
			t.Fatal(err)
		}
	}
	save(o.ID, "day1", 5, old)
	save(other.ID, "theirs", 3, old.Add(5*time.Second))
	save(o.ID, "day3", 5, old.Add(48*time.Hour))
	indexAll(t, s)
	all := func(owner string, words ...string) []string {
		ids, _ := recent(t, s, ports.RecentQuery{OwnerID: owner, Platform: core.X, Words: words})
		return ids
	}
	// Seen before the second day: at most 4 at a time.
	cut := old.Add(24 * time.Hour)
	total := 0
	for {
		n, err := s.Recent.TrimRecent(ctx, cut, 0, 4)
		if err != nil {
			t.Fatal(err)
		}
		if total += n; n < 4 {
			break
		}
	}
	if total != 8 {
		t.Errorf("trimmed %d posts seen before %v, want 8", total, cut)
	}
	if got := all(o.ID); len(got) != 5 || got[4] != "day3-0" {
		t.Errorf("left: %v", got)
	}
	if got := all(other.ID); len(got) != 0 {
		t.Errorf("another owner's old posts left: %v", got)
	}
	if got := all(o.ID, "trim", "me", "day1"); len(got) != 0 {
		t.Errorf("the index still finds %v", got)
	}
	// The owner's newest 2 stay.
	if _, err := s.Recent.TrimRecent(ctx, old, 2, 1000); err != nil {
		t.Fatal(err)
	}
	if got := all(o.ID); !slices.Equal(got, []string{"day3-4", "day3-3"}) {
		t.Errorf("after keeping 2: %v", got)
	}
	if got := all(o.ID, "trim", "me", "day3"); !slices.Equal(got, []string{"day3-4", "day3-3"}) {
		t.Errorf("the index after keeping 2: %v", got)
	}
	// Trims take the oldest kept first: leave none of these for the
	// cases after this one.
	if _, err := s.Recent.TrimRecent(ctx, old.Add(72*time.Hour), 0, 1000); err != nil {
		t.Fatal(err)
	}
}

// testRecentConcurrent runs alone too: keeping, indexing, trimming and
// searching at once lose nothing that should stay and keep the index
// whole. Posts seen long ago, kept first, are for the trims to take.
func testRecentConcurrent(t *testing.T, s Stores) {
	o := newOwner(t, s)
	at, old := seenNow(), time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	busy := ports.RecentQuery{OwnerID: o.ID, Platform: core.X, Words: []string{"busy", "words"}, Limit: 1000}
	save := func(prefix string, n int, seen time.Time) error {
		var batch []ports.PostMatches
		for i := range n {
			p := core.Post{ExternalID: fmt.Sprintf("%s-%d", prefix, i), Text: "busy words here", URL: "https://x.com/c"}
			batch = append(batch, ports.PostMatches{Post: p, Keep: keep(p, "", seen)})
		}
		_, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
		return err
	}
	if err := save("old", 100, old); err != nil {
		t.Fatal(err)
	}
	indexAll(t, s)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range 5 {
				if err := save(fmt.Sprintf("c%d-%d", w, b), 20, at); err != nil {
					errs <- err
				}
				ps, err := s.Recent.Unindexed(ctx, 7)
				if err == nil {
					words := make([]ports.RecentWords, len(ps))
					for i, p := range ps {
						words[i] = ports.RecentWords{Seq: p.Seq, Words: "busy words here"}
					}
					err = s.Recent.IndexRecent(ctx, words)
				}
				if err != nil {
					errs <- err
				}
				if _, err := s.Recent.TrimRecent(ctx, old.Add(time.Hour), 0, 7); err != nil {
					errs <- err
				}
				if _, err := s.Recent.RecentPosts(ctx, busy, func(core.RecentPost) bool { return true }); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for {
		n, err := s.Recent.TrimRecent(ctx, old.Add(time.Hour), 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		if n < 64 {
			break
		}
	}
	if ids, _ := recent(t, s, busy); len(ids) != 400 {
		t.Errorf("found %d of 400 posts before indexing the rest", len(ids))
	}
	indexAll(t, s)
	if ids, _ := recent(t, s, busy); len(ids) != 400 {
		t.Errorf("found %d of 400 posts", len(ids))
	}
	for {
		n, err := s.Recent.TrimRecent(ctx, old, 100, 64)
		if err != nil {
			t.Fatal(err)
		}
		if n < 64 {
			break
		}
	}
	if ids, _ := recent(t, s, busy); len(ids) != 100 {
		t.Errorf("after trimming to 100: %d", len(ids))
	}
}

// testBackfill: a phrase's request is listed until it is filled; filling
// stores a match of each post the phrase has none of, marked and in
// order, counts them on the phrase and ends the request.
func testBackfill(t *testing.T, s Stores) {
	t.Run("PerOwner", func(t *testing.T) { testBackfillPerOwner(t, s) })
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "acme "+unique(), "x", "")
	at := seenNow()
	wantKind(t, s.Recent.RequestBackfill(ctx, "no-such-phrase", at), core.KindNotFound)
	if err := s.Recent.RequestBackfill(ctx, p.ID, at); err != nil {
		t.Fatal(err)
	}
	if err := s.Recent.RequestBackfill(ctx, p.ID, at.Add(time.Second)); err != nil {
		t.Fatalf("a second request: %v", err)
	}
	pending, err := s.Recent.Backfills(ctx, 1000, 1000)
	if err != nil || !slices.ContainsFunc(pending, func(q core.Phrase) bool { return q.ID == p.ID && q.Phrase == p.Phrase }) {
		t.Fatalf("Backfills = %+v, %v", pending, err)
	}
	// Three posts; the phrase matched the middle one already.
	posts := []core.Post{post("b-new"), post("b-mid"), post("b-old")}
	var batch []ports.PostMatches
	for i := len(posts) - 1; i >= 0; i-- {
		pm := ports.PostMatches{Post: posts[i], Keep: keep(posts[i], "", at)}
		if i == 1 {
			pm.PhraseIDs = []string{p.ID}
		}
		batch = append(batch, pm)
	}
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil || len(res.Matches) != 1 {
		t.Fatalf("SaveMatches = %+v, %v", res, err)
	}
	var window []core.RecentPost
	if _, err := s.Recent.RecentPosts(ctx, ports.RecentQuery{OwnerID: o.ID, Platform: core.X, Limit: 10},
		func(rp core.RecentPost) bool { window = append(window, rp); return true }); err != nil || len(window) != 3 {
		t.Fatalf("window: %+v, %v", window, err)
	}
	ms, err := s.Recent.SaveBackfill(ctx, p, window)
	if err != nil || len(ms) != 2 {
		t.Fatalf("SaveBackfill = %+v, %v", ms, err)
	}
	if ms[0].Post.ExternalID != "b-old" || ms[1].Post.ExternalID != "b-new" || !ms[1].CreatedAt.After(ms[0].CreatedAt) ||
		!ms[0].CreatedAt.After(res.Matches[0].CreatedAt) {
		t.Fatalf("backfilled matches out of order: %+v", ms)
	}
	for _, m := range ms {
		got, err := s.Matches.Match(ctx, o.ID, m.ID)
		if err != nil || !got.Backfilled || got.PhraseID != p.ID || got.Post != window[0].Post && got.Post != window[2].Post || got.Score != nil {
			t.Fatalf("stored backfill %+v, %v", got, err)
		}
	}
	if live, _ := s.Matches.Match(ctx, o.ID, res.Matches[0].ID); live.Backfilled {
		t.Fatal("a match found as its post was read is marked backfilled")
	}
	if got, _ := s.Phrases.Phrase(ctx, o.ID, p.ID); got.Matches != 3 {
		t.Fatalf("phrase counts %d matches, want 3", got.Matches)
	}
	pending, _ = s.Recent.Backfills(ctx, 1000, 1000)
	if slices.ContainsFunc(pending, func(q core.Phrase) bool { return q.ID == p.ID }) {
		t.Fatal("the request stayed after filling")
	}
	// Filling again finds nothing new.
	if ms, err := s.Recent.SaveBackfill(ctx, p, window); err != nil || len(ms) != 0 {
		t.Fatalf("second fill = %+v, %v", ms, err)
	}
	// A fill read before another's ended the request (a replica's list
	// of waiting phrases gone stale) stores nothing: the phrase would
	// hold two fills.
	late := newPhrase(t, s, o.ID, "late "+unique(), "x", "")
	if err := s.Recent.RequestBackfill(ctx, late.ID, at); err != nil {
		t.Fatal(err)
	}
	if ms, err := s.Recent.SaveBackfill(ctx, late, window[:1]); err != nil || len(ms) != 1 {
		t.Fatalf("first fill = %+v, %v", ms, err)
	}
	if ms, err := s.Recent.SaveBackfill(ctx, late, window[1:]); err != nil || len(ms) != 0 {
		t.Fatalf("a fill after the request was served = %+v, %v", ms, err)
	}
	// A request ended without filling, and one whose phrase went.
	q := newPhrase(t, s, o.ID, "ended "+unique(), "x", "")
	gone := newPhrase(t, s, o.ID, "gone "+unique(), "x", "")
	for _, ph := range []core.Phrase{q, gone} {
		if err := s.Recent.RequestBackfill(ctx, ph.ID, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Recent.EndBackfill(ctx, q.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Phrases.DeletePhrase(ctx, o.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	pending, _ = s.Recent.Backfills(ctx, 1000, 1000)
	if slices.ContainsFunc(pending, func(ph core.Phrase) bool { return ph.ID == q.ID || ph.ID == gone.ID }) {
		t.Fatalf("ended or deleted requests listed: %+v", pending)
	}
	if ms, err := s.Recent.SaveBackfill(ctx, gone, window); err != nil || len(ms) != 0 {
		t.Fatalf("filling a deleted phrase = %+v, %v", ms, err)
	}
	if ms, err := s.Recent.SaveBackfill(ctx, q, window); err != nil || len(ms) != 0 {
		t.Fatalf("filling an ended request = %+v, %v", ms, err)
	}
}

// testBackfillPerOwner: the requests listed are at most perOwner of each
// owner, its oldest, so an owner with many older requests leaves room for
// another's. The requests are dated long ago, before any other case's,
// and only these owners' phrases are looked at.
func testBackfillPerOwner(t *testing.T, s Stores) {
	busy, quiet := newOwner(t, s), newOwner(t, s)
	at := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	var want []string
	for i := range 3 {
		p := newPhrase(t, s, busy.ID, fmt.Sprintf("busy %d %s", i, unique()), "x", "")
		if err := s.Recent.RequestBackfill(ctx, p.ID, at.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			want = append(want, p.ID)
		}
	}
	q := newPhrase(t, s, quiet.ID, "quiet "+unique(), "x", "")
	if err := s.Recent.RequestBackfill(ctx, q.ID, at.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	want = append(want, q.ID)
	pending, err := s.Recent.Backfills(ctx, 2, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pending {
		if p.OwnerID == busy.ID || p.OwnerID == quiet.ID {
			got = append(got, p.ID)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Backfills(2, 1000) listed %v of these owners' requests, want %v (the busy owner's two oldest, then the quiet one's)", got, want)
	}
}

// testFilterArchive: applying a phrase's filters archives the named
// matches that were not archived, as a set of the phrase's; restoring the
// set unarchives exactly them, once; another owner sees and changes
// nothing.
func testFilterArchive(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	p := newPhrase(t, s, o.ID, "archive "+unique(), "x", "")
	q := newPhrase(t, s, o.ID, "neighbour "+unique(), "x", "")
	ms := saveMatches(t, s, o.ID, p, 5)
	qs := saveMatches(t, s, o.ID, q, 1)
	flags := func() map[string]bool {
		out := map[string]bool{}
		more, err := s.FilterArchives.PhraseMatches(ctx, o.ID, p.ID, 100, false, func(m core.Match, archived bool) bool {
			out[m.ID] = archived
			return true
		})
		if err != nil || more {
			t.Fatalf("PhraseMatches: %v, more %v", err, more)
		}
		return out
	}
	var order []string
	more, err := s.FilterArchives.PhraseMatches(ctx, o.ID, p.ID, 3, false, func(m core.Match, _ bool) bool { order = append(order, m.ID); return true })
	if err != nil || !more || !slices.Equal(order, []string{ms[4].ID, ms[3].ID, ms[2].ID}) {
		t.Fatalf("PhraseMatches limit 3 = %v, more %v, %v", order, more, err)
	}
	_, err = s.FilterArchives.ArchiveSet(ctx, other.ID, p.ID, []string{ms[0].ID}, time.Now())
	wantKind(t, err, core.KindNotFound)
	// The owner archived ms[0] by hand first: the set leaves it out.
	first, err := s.FilterArchives.ArchiveSet(ctx, o.ID, p.ID, []string{ms[0].ID}, time.Now())
	if err != nil || first.Matches != 1 {
		t.Fatalf("first set = %+v, %v", first, err)
	}
	set, err := s.FilterArchives.ArchiveSet(ctx, o.ID, p.ID, []string{ms[0].ID, ms[1].ID, ms[2].ID, ms[2].ID, qs[0].ID, "no-such-match"}, time.Now())
	if err != nil || set.Matches != 2 || set.PhraseID != p.ID || set.OwnerID != o.ID {
		t.Fatalf("ArchiveSet = %+v, %v", set, err)
	}
	want := map[string]bool{ms[0].ID: true, ms[1].ID: true, ms[2].ID: true, ms[3].ID: false, ms[4].ID: false}
	if got := flags(); !equalFlags(got, want) {
		t.Fatalf("archived %v, want %v", got, want)
	}
	if latest, err := s.FilterArchives.LatestArchiveSet(ctx, o.ID, p.ID); err != nil || latest.ID != set.ID || latest.Matches != 2 {
		t.Fatalf("LatestArchiveSet = %+v, %v", latest, err)
	}
	_, err = s.FilterArchives.LatestArchiveSet(ctx, other.ID, p.ID)
	wantKind(t, err, core.KindNotFound)
	_, err = s.FilterArchives.RestoreArchiveSet(ctx, o.ID, first.ID)
	wantKind(t, err, core.KindNotFound) // replaced by the second set
	_, err = s.FilterArchives.RestoreArchiveSet(ctx, other.ID, set.ID)
	wantKind(t, err, core.KindNotFound)
	n, err := s.FilterArchives.RestoreArchiveSet(ctx, o.ID, set.ID)
	if err != nil || n != 2 {
		t.Fatalf("RestoreArchiveSet = %d, %v", n, err)
	}
	want[ms[1].ID], want[ms[2].ID] = false, false
	if got := flags(); !equalFlags(got, want) {
		t.Fatalf("after restoring: %v, want %v", got, want)
	}
	// Matches unarchived again are walked as those never archived.
	if got, more := unarchivedWalk(t, s, o.ID, p.ID, 10); more || !slices.Equal(got, []string{ms[4].ID, ms[3].ID, ms[2].ID, ms[1].ID}) {
		t.Fatalf("unarchived after restoring = %v, more %v", got, more)
	}
	_, err = s.FilterArchives.RestoreArchiveSet(ctx, o.ID, set.ID)
	wantKind(t, err, core.KindNotFound)
	_, err = s.FilterArchives.LatestArchiveSet(ctx, o.ID, p.ID)
	wantKind(t, err, core.KindNotFound)
}

// testFilterArchiveUnarchived: a walk of a phrase's matches not
// archived leaves the archived ones out of its limit and of more, so it
// goes on past the newest, archived, to older ones. Applying filters
// again relies on it to reach the matches an earlier application left
// unread.
func testFilterArchiveUnarchived(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	p := newPhrase(t, s, o.ID, "walk "+unique(), "x", "")
	ms := saveMatches(t, s, o.ID, p, 4)
	if _, err := s.FilterArchives.ArchiveSet(ctx, o.ID, p.ID, []string{ms[3].ID, ms[1].ID}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, more := unarchivedWalk(t, s, o.ID, p.ID, 1); !more || !slices.Equal(got, []string{ms[2].ID}) {
		t.Fatalf("unarchived, limit 1 = %v, more %v", got, more)
	}
	if got, more := unarchivedWalk(t, s, o.ID, p.ID, 2); more || !slices.Equal(got, []string{ms[2].ID, ms[0].ID}) {
		t.Fatalf("unarchived, limit 2 = %v, more %v", got, more)
	}
	if got, more := unarchivedWalk(t, s, other.ID, p.ID, 10); more || len(got) != 0 {
		t.Fatalf("another owner's unarchived walk = %v, more %v", got, more)
	}
}

// unarchivedWalk lists the ids the walk of the phrase's matches not
// archived passes, at most limit, and whether it stopped there.
func unarchivedWalk(t *testing.T, s Stores, ownerID, phraseID string, limit int) ([]string, bool) {
	t.Helper()
	var out []string
	more, err := s.FilterArchives.PhraseMatches(ctx, ownerID, phraseID, limit, true, func(m core.Match, archived bool) bool {
		if archived {
			t.Errorf("the unarchived walk passed %s as archived", m.ID)
		}
		out = append(out, m.ID)
		return true
	})
	if err != nil {
		t.Fatalf("PhraseMatches unarchived: %v", err)
	}
	return out, more
}

func equalFlags(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// testFilterArchiveNothing: a set that would archive nothing (its
// matches archived already, unknown, or none named) is not made: the
// phrase keeps its set, which still undoes, and the answer is a set with
// an empty ID and no matches.
func testFilterArchiveNothing(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "keep set "+unique(), "x", "")
	ms := saveMatches(t, s, o.ID, p, 3)
	first, err := s.FilterArchives.ArchiveSet(ctx, o.ID, p.ID, []string{ms[0].ID, ms[1].ID}, time.Now())
	if err != nil || first.ID == "" || first.Matches != 2 {
		t.Fatalf("first set = %+v, %v", first, err)
	}
	for _, none := range [][]string{{ms[0].ID, ms[1].ID, "no-such-match"}, nil} {
		set, err := s.FilterArchives.ArchiveSet(ctx, o.ID, p.ID, none, time.Now())
		if err != nil || set != (core.ArchiveSet{}) {
			t.Fatalf("ArchiveSet(%v), nothing to archive = %+v, %v; want the zero set", none, set, err)
		}
	}
	if latest, err := s.FilterArchives.LatestArchiveSet(ctx, o.ID, p.ID); err != nil || latest.ID != first.ID || latest.Matches != 2 {
		t.Fatalf("LatestArchiveSet after archiving nothing = %+v, %v; want the first set", latest, err)
	}
	if n, err := s.FilterArchives.RestoreArchiveSet(ctx, o.ID, first.ID); err != nil || n != 2 {
		t.Fatalf("RestoreArchiveSet(first) = %d, %v", n, err)
	}
	if got, more := unarchivedWalk(t, s, o.ID, p.ID, 10); more || !slices.Equal(got, []string{ms[2].ID, ms[1].ID, ms[0].ID}) {
		t.Fatalf("unarchived after restoring = %v, more %v", got, more)
	}
}
