package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// saveMatches stores n posts matching p for the owner and returns the
// matches, oldest first.
func saveMatches(t *testing.T, s Stores, ownerID string, p core.Phrase, n int) []core.Match {
	t.Helper()
	batch := make([]ports.PostMatches, n)
	for i := range batch {
		batch[i] = ports.PostMatches{Post: post(fmt.Sprintf("%s-%d-%s", p.ID, i, unique())), PhraseIDs: []string{p.ID}}
	}
	res, err := s.Matches.SaveMatches(ctx, ownerID, p.Platform, batch)
	if err != nil || len(res.Matches) != n {
		t.Fatalf("SaveMatches = %+v, %v", res, err)
	}
	return res.Matches
}

func ptr[T any](v T) *T { return &v }

// ids lists the match ids of items in order.
func ids(items []ports.InboxItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Match.ID
	}
	return out
}

func inbox(t *testing.T, st ports.TriageStore, ownerID string, f ports.InboxFilter) []ports.InboxItem {
	t.Helper()
	if f.Limit == 0 {
		f.Limit = 100
	}
	items, _, err := st.Inbox(ctx, ownerID, f)
	if err != nil {
		t.Fatalf("Inbox(%+v): %v", f, err)
	}
	return items
}

func testTriage(t *testing.T, s Stores, st ports.TriageStore) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "triage", "x", "")
	ms := saveMatches(t, s, o.ID, p, 3)
	if tr, err := st.Triage(ctx, o.ID, ms[0].ID); err != nil || tr != (core.Triage{}) {
		t.Fatalf("untouched Triage = %+v, %v", tr, err)
	}
	n, err := st.SetTriage(ctx, o.ID, []string{ms[0].ID, ms[1].ID, ms[1].ID, "no-such-match"}, core.TriageChange{Read: ptr(true)})
	if err != nil || n != 2 {
		t.Fatalf("SetTriage = %d, %v; want 2", n, err)
	}
	if _, err := st.SetTriage(ctx, o.ID, []string{ms[0].ID}, core.TriageChange{Starred: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if tr, _ := st.Triage(ctx, o.ID, ms[0].ID); tr != (core.Triage{Read: true, Starred: true}) {
		t.Fatalf("after read and star: %+v", tr)
	}
	if _, err := st.SetTriage(ctx, o.ID, []string{ms[0].ID}, core.TriageChange{Read: ptr(false), Archived: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if tr, _ := st.Triage(ctx, o.ID, ms[0].ID); tr != (core.Triage{Starred: true, Archived: true}) {
		t.Fatalf("after unread and archive: %+v", tr)
	}
	if n, err := st.SetTriage(ctx, o.ID, []string{ms[2].ID}, core.TriageChange{}); err != nil || n != 1 {
		t.Fatalf("empty change = %d, %v", n, err)
	}
	if tr, _ := st.Triage(ctx, o.ID, ms[2].ID); tr != (core.Triage{}) {
		t.Fatalf("an empty change changed %+v", tr)
	}
	if n, err := st.SetTriage(ctx, o.ID, nil, core.TriageChange{Read: ptr(true)}); err != nil || n != 0 {
		t.Fatalf("no ids = %d, %v", n, err)
	}
	_, err = st.Triage(ctx, o.ID, "no-such-match")
	wantKind(t, err, core.KindNotFound)

	items := inbox(t, st, o.ID, ports.InboxFilter{MinScore: -1})
	if len(items) != 3 || items[0].Match.ID != ms[2].ID || items[2].Triage != (core.Triage{Starred: true, Archived: true}) ||
		items[1].Triage != (core.Triage{Read: true}) || items[2].Match.Post.Text != ms[0].Post.Text {
		t.Fatalf("Inbox = %+v", items)
	}

	// Deleting the phrase takes its matches and their triage with it.
	if err := s.Phrases.DeletePhrase(ctx, o.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	_, err = st.Triage(ctx, o.ID, ms[0].ID)
	wantKind(t, err, core.KindNotFound)
}

func testInboxFilters(t *testing.T, s Stores, st ports.TriageStore) {
	o := newOwner(t, s)
	px := newPhrase(t, s, o.ID, "alpha", "x", "")
	pr := newPhrase(t, s, o.ID, "beta", "reddit", "golang")
	xs := saveMatches(t, s, o.ID, px, 4)
	rs := saveMatches(t, s, o.ID, pr, 2)
	before := time.Now().UTC().Add(-time.Second)
	for i, sc := range []core.Score{{Value: 90, Intent: core.IntentBuying, Reason: "r"}, {Value: 40, Intent: core.IntentQuestion, Reason: "r"}, {Value: 75, Intent: core.IntentBuying, Reason: "r"}} {
		scoreMatch(t, s, xs[i], sc)
	}
	if _, err := st.SetTriage(ctx, o.ID, []string{xs[0].ID, rs[1].ID}, core.TriageChange{Read: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetTriage(ctx, o.ID, []string{xs[1].ID}, core.TriageChange{Starred: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetTriage(ctx, o.ID, []string{xs[3].ID}, core.TriageChange{Archived: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	all := ports.InboxFilter{MinScore: -1}
	cases := []struct {
		name string
		f    func(f *ports.InboxFilter)
		want []core.Match
	}{
		{"all", func(*ports.InboxFilter) {}, []core.Match{rs[1], rs[0], xs[3], xs[2], xs[1], xs[0]}},
		{"platform", func(f *ports.InboxFilter) { f.Platform = core.Reddit }, []core.Match{rs[1], rs[0]}},
		{"min score", func(f *ports.InboxFilter) { f.MinScore = 75 }, []core.Match{xs[2], xs[0]}},
		{"min score 0 leaves out unscored", func(f *ports.InboxFilter) { f.MinScore = 0 }, []core.Match{xs[2], xs[1], xs[0]}},
		{"intent", func(f *ports.InboxFilter) { f.Intent = core.IntentBuying }, []core.Match{xs[2], xs[0]}},
		{"phrase", func(f *ports.InboxFilter) { f.PhraseID = pr.ID }, []core.Match{rs[1], rs[0]}},
		{"unread", func(f *ports.InboxFilter) { f.Read = ptr(false) }, []core.Match{rs[0], xs[3], xs[2], xs[1]}},
		{"read", func(f *ports.InboxFilter) { f.Read = ptr(true) }, []core.Match{rs[1], xs[0]}},
		{"starred", func(f *ports.InboxFilter) { f.Starred = ptr(true) }, []core.Match{xs[1]}},
		{"not archived", func(f *ports.InboxFilter) { f.Archived = ptr(false) }, []core.Match{rs[1], rs[0], xs[2], xs[1], xs[0]}},
		{"archived", func(f *ports.InboxFilter) { f.Archived = ptr(true) }, []core.Match{xs[3]}},
		{"combined", func(f *ports.InboxFilter) { f.Archived, f.Read, f.Platform = ptr(false), ptr(false), core.X },
			[]core.Match{xs[2], xs[1]}},
		{"before", func(f *ports.InboxFilter) { f.Before = xs[2].CreatedAt }, []core.Match{xs[1], xs[0]}},
		{"after", func(f *ports.InboxFilter) { f.After = xs[3].CreatedAt }, []core.Match{rs[1], rs[0]}},
		{"scored after", func(f *ports.InboxFilter) { f.ScoredAfter = before }, []core.Match{xs[2], xs[1], xs[0]}},
		{"scored later", func(f *ports.InboxFilter) { f.ScoredAfter = time.Now().Add(time.Hour) }, nil},
	}
	for _, c := range cases {
		f := all
		c.f(&f)
		got := inbox(t, st, o.ID, f)
		want := make([]string, len(c.want))
		for i, m := range c.want {
			want[i] = m.ID
		}
		if c.name == "scored after" { // scored in one instant or several: any order
			if len(got) != len(want) {
				t.Errorf("%s: got %v, want %v", c.name, ids(got), want)
			}
			continue
		}
		if fmt.Sprint(ids(got)) != fmt.Sprint(want) {
			t.Errorf("%s: got %v, want %v", c.name, ids(got), want)
		}
	}
	// A scored item carries its score and when it was scored.
	got := inbox(t, st, o.ID, ports.InboxFilter{MinScore: 90})
	if len(got) != 1 || got[0].Match.Score == nil || got[0].Match.Score.Intent != core.IntentBuying || got[0].ScoredAt.IsZero() {
		t.Fatalf("scored item = %+v", got)
	}
	// Paging: limit and more.
	page, more, err := st.Inbox(ctx, o.ID, ports.InboxFilter{MinScore: -1, Limit: 4})
	if err != nil || len(page) != 4 || !more {
		t.Fatalf("page of 4 = %d items, more %v, %v", len(page), more, err)
	}
	page, more, _ = st.Inbox(ctx, o.ID, ports.InboxFilter{MinScore: -1, Limit: 4, Before: page[3].Match.CreatedAt})
	if len(page) != 2 || more {
		t.Fatalf("second page = %d items, more %v", len(page), more)
	}
}

func testTriageIsolation(t *testing.T, s Stores, st ports.TriageStore) {
	a, b := newOwner(t, s), newOwner(t, s)
	p := newPhrase(t, s, a.ID, "secret", "x", "")
	ms := saveMatches(t, s, a.ID, p, 2)
	n, err := st.SetTriage(ctx, b.ID, []string{ms[0].ID, ms[1].ID}, core.TriageChange{Archived: ptr(true), Read: ptr(true)})
	if err != nil || n != 0 {
		t.Fatalf("B triaging A's matches = %d, %v; want 0", n, err)
	}
	if tr, _ := st.Triage(ctx, a.ID, ms[0].ID); tr != (core.Triage{}) {
		t.Fatalf("B changed A's triage: %+v", tr)
	}
	_, err = st.Triage(ctx, b.ID, ms[0].ID)
	wantKind(t, err, core.KindNotFound)
	for _, f := range []ports.InboxFilter{{MinScore: -1}, {MinScore: -1, Archived: ptr(true)}, {MinScore: -1, Read: ptr(true)}, {MinScore: -1, PhraseID: p.ID}} {
		if got := inbox(t, st, b.ID, f); len(got) != 0 {
			t.Fatalf("B's inbox %+v shows A's matches: %v", f, ids(got))
		}
	}
	// A's own triage is A's alone: B sharing a post makes a separate match.
	if _, err := st.SetTriage(ctx, a.ID, []string{ms[0].ID}, core.TriageChange{Starred: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if got := inbox(t, st, b.ID, ports.InboxFilter{MinScore: -1, Starred: ptr(true)}); len(got) != 0 {
		t.Fatalf("B sees A's star: %v", ids(got))
	}
}

// testInboxArchivedRuns pages the inbox past long runs of archived
// matches: every page is full, in order, and nothing archived shows.
func testInboxArchivedRuns(t *testing.T, s Stores, st ports.TriageStore) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "runs", "x", "")
	ms := saveMatches(t, s, o.ID, p, 60)
	var archived []string
	for i, m := range ms {
		if i >= 15 || i%4 == 0 { // the newest 45, and every fourth older one
			archived = append(archived, m.ID)
		}
	}
	if _, err := st.SetTriage(ctx, o.ID, archived, core.TriageChange{Archived: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 14; i >= 0; i-- {
		if i%4 != 0 {
			want = append(want, ms[i].ID)
		}
	}
	for _, limit := range []int{1, 2, 3, 5, 25} {
		var got []string
		f := ports.InboxFilter{MinScore: -1, Archived: ptr(false), Limit: limit}
		for range 20 {
			items, more, err := st.Inbox(ctx, o.ID, f)
			if err != nil {
				t.Fatal(err)
			}
			if more && len(items) != limit {
				t.Fatalf("limit %d: a page of %d with more", limit, len(items))
			}
			got = append(got, ids(items)...)
			if !more {
				break
			}
			f.Before = items[len(items)-1].Match.CreatedAt
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("limit %d: paged %v, want %v", limit, got, want)
		}
	}
}

// testTriageCounts: a bulk change counts the owner's matches it set,
// through the app as the API and the dashboard call it: an id of
// another owner's match, or of none, counts 0 and changes nothing.
func testTriageCounts(t *testing.T, s Stores, st ports.TriageStore) {
	inboxes := app.NewInbox(st)
	a, b := newOwner(t, s), newOwner(t, s)
	ams := saveMatches(t, s, a.ID, newPhrase(t, s, a.ID, "counted", "x", ""), 2)
	bms := saveMatches(t, s, b.ID, newPhrase(t, s, b.ID, "counted", "x", ""), 1)
	star := core.TriageChange{Starred: ptr(true)}
	for _, c := range []struct {
		ids  []string
		want int
	}{
		{[]string{bms[0].ID}, 0},
		{[]string{"no-such-match"}, 0},
		{[]string{ams[0].ID, bms[0].ID, "no-such-match", ams[0].ID}, 1},
		{[]string{ams[0].ID, ams[1].ID}, 2},
	} {
		if n, err := inboxes.SetMany(ctx, a.ID, c.ids, star); err != nil || n != c.want {
			t.Fatalf("SetMany(%v) = %d, %v; want %d", c.ids, n, err, c.want)
		}
	}
	if tr, _ := st.Triage(ctx, b.ID, bms[0].ID); tr != (core.Triage{}) {
		t.Fatalf("another owner's match was changed: %+v", tr)
	}
}
