package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// search parses q or fails the test.
func search(t *testing.T, q string) core.Search {
	t.Helper()
	s, err := core.ParseSearch(q)
	if err != nil {
		t.Fatalf("ParseSearch(%q): %v", q, err)
	}
	return s
}

// externalIDs lists the posts of ms in their order.
func externalIDs(ms []core.Match) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Post.ExternalID
	}
	return out
}

// searchPosts are posts with words in their title, text and author that
// the cases below look for, oldest first.
var searchPosts = []core.Post{
	{ExternalID: "s1", Title: "Acme CRM pricing", Text: "Is it worth it for a team of five?", Author: "maya_builds"},
	{ExternalID: "s2", Text: "We moved off acme-crm last year.", Author: "devon"},
	{ExternalID: "s3", Text: "The pricing page of acme.com says nothing.", Author: "priya"},
	{ExternalID: "s4", Text: "Free trial of acme crm, spam spam spam", Author: "spammer"},
	{ExternalID: "s5", Text: `<b>acme</b> & friends "OR" NEAR title`, Author: "html"},
	{ExternalID: "s6", Text: "Nothing to see here.", Author: "acme_fan"},
	{ExternalID: "s7", Text: "Ünïcode ACME café", Author: "zoë"},
}

// A search finds the matches whose title, text or author hold every
// word and quoted phrase, none excluded, without regard to case, newest
// first; words of parts (acme-crm, acme.com, maya_builds) are found as
// phrases of their parts; what would be syntax to the database is a
// word like any other.
func testSearch(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "acme", "x", "")
	for _, post := range searchPosts {
		post.URL = "https://x.com/" + post.ExternalID
		if _, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: post, PhraseIDs: []string{p.ID}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		q    string
		want []string // newest first
	}{
		{"acme", []string{"s7", "s6", "s5", "s4", "s3", "s2", "s1"}},
		{"ACME", []string{"s7", "s6", "s5", "s4", "s3", "s2", "s1"}},
		{`"acme crm"`, []string{"s4", "s2", "s1"}},
		{`"crm acme"`, nil},
		{"crm pricing", []string{"s1"}},
		{"pricing", []string{"s3", "s1"}},
		{"acme -spam", []string{"s7", "s6", "s5", "s3", "s2", "s1"}},
		{`acme -"free trial" -"nothing"`, []string{"s7", "s5", "s2", "s1"}},
		{`-"free trial" crm`, []string{"s2", "s1"}},
		{"maya_builds", []string{"s1"}},
		{"maya", []string{"s1"}},
		{"devon", []string{"s2"}},
		{"ACME.COM", []string{"s3"}},
		{"acme-crm", []string{"s4", "s2", "s1"}},
		{"b friends", []string{"s5"}},
		{`"OR" NEAR title`, []string{"s5"}},
		{"title:acme", nil}, // a phrase of two words, not a column
		{"acme*", []string{"s7", "s6", "s5", "s4", "s3", "s2", "s1"}},
		{"acm", nil},
		{"café", []string{"s7"}},
		{"cafe", nil},
		{"Ünïcode zoë", []string{"s7"}},
		{"nobody", nil},
	} {
		ms, more, err := s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 20, Search: search(t, c.q)})
		if err != nil {
			t.Fatalf("q %q: %v", c.q, err)
		}
		if got := externalIDs(ms); !slices.Equal(got, c.want) || more {
			t.Errorf("q %q found %v (more %v), want %v", c.q, got, more, c.want)
		}
	}
}

// A search combines with the listing's filters and pages with its
// cursor: every match it finds once, newest first, and no other owner's.
func testSearchPaging(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	x := newPhrase(t, s, o.ID, "widget", "x", "")
	fb := newPhrase(t, s, o.ID, "widget", "facebook", "")
	ox := newPhrase(t, s, other.ID, "widget", "x", "")
	var batch, otherBatch, fbBatch []ports.PostMatches
	for i := range 60 {
		words := "plain widget news"
		if i%2 == 0 {
			words = "a searched widget story"
		}
		post := core.Post{ExternalID: fmt.Sprint("p", i), Author: "ada", Text: fmt.Sprintf("%s number %d", words, i)}
		batch = append(batch, ports.PostMatches{Post: post, PhraseIDs: []string{x.ID}})
		otherBatch = append(otherBatch, ports.PostMatches{Post: post, PhraseIDs: []string{ox.ID}})
		if i < 5 {
			fbBatch = append(fbBatch, ports.PostMatches{Post: post, PhraseIDs: []string{fb.ID}})
		}
	}
	for _, b := range []struct {
		owner    string
		platform core.Platform
		batch    []ports.PostMatches
	}{{o.ID, core.X, batch}, {other.ID, core.X, otherBatch}, {o.ID, core.Facebook, fbBatch}} {
		if _, err := s.Matches.SaveMatches(ctx, b.owner, b.platform, b.batch); err != nil {
			t.Fatal(err)
		}
	}
	all, _, err := s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Platform: core.X, Limit: 100})
	if err != nil || len(all) != 60 {
		t.Fatalf("%d matches, %v", len(all), err)
	}
	// Score every third x match 80, the others 10.
	var updates []ports.ScoreUpdate
	for i, m := range all {
		v := 10
		if i%3 == 0 {
			v = 80
		}
		updates = append(updates, ports.ScoreUpdate{Match: m, Score: core.Score{Value: v, Intent: core.IntentQuestion, Reason: "r"}})
	}
	if _, err := s.Matches.SetScores(ctx, updates, nil); err != nil {
		t.Fatal(err)
	}
	want := func(keep func(i int, m core.Match) bool) []string {
		var out []string
		for i, m := range all {
			if strings.Contains(m.Post.Text, "searched") && keep(i, m) {
				out = append(out, m.ID)
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		f    ports.MatchFilter
		want []string
	}{
		{"x", ports.MatchFilter{Platform: core.X, MinScore: -1}, want(func(int, core.Match) bool { return true })},
		{"x, score 50 or more", ports.MatchFilter{Platform: core.X, MinScore: 50}, want(func(i int, _ core.Match) bool { return i%3 == 0 })},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.f.Search, c.f.Limit = search(t, `"searched widget"`), 7
			var got []string
			last := time.Time{}
			for pages := 0; ; pages++ {
				ms, more, err := s.Matches.Matches(ctx, o.ID, c.f)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range ms {
					if !last.IsZero() && !m.CreatedAt.Before(last) {
						t.Fatalf("not newest first: %v after %v", m.CreatedAt, last)
					}
					last = m.CreatedAt
					got = append(got, m.ID)
				}
				if !more {
					break
				}
				if len(ms) != c.f.Limit || pages > 20 {
					t.Fatalf("a page of %d with more after it (page %d)", len(ms), pages)
				}
				c.f.Before = ms[len(ms)-1].CreatedAt
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("paged search found %d matches, want %d:\n%v\n%v", len(got), len(c.want), got, c.want)
			}
		})
	}
	// Every platform: the facebook matches are found too.
	ms, _, err := s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 100, Search: search(t, "searched")})
	if err != nil || len(ms) != 33 {
		t.Fatalf("every platform: %d matches, %v; want 33", len(ms), err)
	}
}

// Deleting a phrase takes its matches out of the search, and matches
// saved after the index was made are in it.
func testSearchAfterDelete(t *testing.T, s Stores) {
	o := newOwner(t, s)
	a := newPhrase(t, s, o.ID, "gizmo", "x", "")
	b := newPhrase(t, s, o.ID, "gadget", "x", "")
	save := func(p core.Phrase, id, text string) {
		t.Helper()
		if _, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: core.Post{ExternalID: id, Text: text}, PhraseIDs: []string{p.ID}}}); err != nil {
			t.Fatal(err)
		}
	}
	save(a, "a1", "a gizmo for invoices")
	save(b, "b1", "a gadget for invoices")
	find := func(q string) []string {
		t.Helper()
		ms, _, err := s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 10, Search: search(t, q)})
		if err != nil {
			t.Fatal(err)
		}
		return externalIDs(ms)
	}
	if got := find("invoices"); !slices.Equal(got, []string{"b1", "a1"}) {
		t.Fatalf("before the delete: %v", got)
	}
	if err := s.Phrases.DeletePhrase(ctx, o.ID, a.ID); err != nil {
		t.Fatal(err)
	}
	if got := find("invoices"); !slices.Equal(got, []string{"b1"}) {
		t.Fatalf("after the delete: %v", got)
	}
	if got := find("gizmo"); len(got) != 0 {
		t.Fatalf("the deleted phrase's match is still found: %v", got)
	}
	save(b, "b2", "another gadget for invoices")
	if got := find("invoices"); !slices.Equal(got, []string{"b2", "b1"}) {
		t.Fatalf("after a new match: %v", got)
	}
}

// The inbox's search combines with its triage filters, the flagged walk
// over match_triage included.
func testInboxSearch(t *testing.T, s Stores, st ports.TriageStore) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "acme", "x", "")
	var batch []ports.PostMatches
	for i, text := range []string{"acme pricing question", "acme outage", "acme pricing again", "acme pricing, archived"} {
		batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint("i", i), Text: text}, PhraseIDs: []string{p.ID}})
	}
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	ms := res.Matches
	if _, err := st.SetTriage(ctx, o.ID, []string{ms[3].ID}, core.TriageChange{Archived: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SetTriage(ctx, o.ID, []string{ms[0].ID, ms[1].ID}, core.TriageChange{Starred: ptr(true)}); err != nil {
		t.Fatal(err)
	}
	pricing := search(t, "pricing")
	for _, c := range []struct {
		name string
		f    ports.InboxFilter
		want []string
	}{
		{"search", ports.InboxFilter{MinScore: -1, Search: pricing}, []string{"i3", "i2", "i0"}},
		{"not archived", ports.InboxFilter{MinScore: -1, Archived: ptr(false), Search: pricing}, []string{"i2", "i0"}},
		{"archived", ports.InboxFilter{MinScore: -1, Archived: ptr(true), Search: pricing}, []string{"i3"}},
		{"starred", ports.InboxFilter{MinScore: -1, Starred: ptr(true), Search: pricing}, []string{"i0"}},
		{"excluded", ports.InboxFilter{MinScore: -1, Search: search(t, "acme -pricing")}, []string{"i1"}},
		{"before", ports.InboxFilter{MinScore: -1, Before: ms[2].CreatedAt, Search: pricing}, []string{"i0"}},
		{"after", ports.InboxFilter{MinScore: -1, After: ms[0].CreatedAt, Search: pricing}, []string{"i3", "i2"}},
	} {
		c.f.Limit = 10
		items, _, err := st.Inbox(ctx, o.ID, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.Match.Post.ExternalID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
