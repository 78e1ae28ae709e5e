package facebook

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"testing"

	"github.com/earshothq/earshot/helper"
)

var _ helper.PhraseUnreader = (*Reader)(nil)

// A read that stops at a phrase (facebook sends its posts search to a
// checkpoint) names it and the phrases not come to unread: the server
// leaves their lastCheckedAt. A phrase that names a group is read only
// once its group's search is done too, which comes after every posts
// search; the joined groups' rotation, a few searches a pass, does not
// count. A read that does every search names none.
func TestUnreadPhrasesOfAReadThatStops(t *testing.T) {
	r := &run{since: map[string]string{}}
	refuse := ""
	fixtures := results(t)
	pages := &fakePages{answer: func(u *url.URL) Page {
		if u.Path == "/search/posts/" && u.Query().Get("q") == refuse {
			// facebook's checkpoint, as TestReadCheckpointReportsAndStops serves it.
			return Page{URL: "https://fb.test/checkpoint/828281030927956/?next=%2F", Status: 200, Head: "<title>Confirm your identity</title>"}
		}
		if u.Path == "/search/posts/" || u.Path == "/groups/1242309506256283/search/" {
			return fixtures(u)
		}
		return Page{URL: u.String(), Status: 404}
	}}
	rd := newReader(t, pages, r)
	rd.Groups = -1
	var during [][]string
	emit := func(p helper.Post, m helper.Mark) error {
		during = append(during, rd.UnreadPhrases())
		return r.emit(p, m)
	}
	in := r.in(nil)
	// acme grinder names the group; alpha and zeta do not.
	in.Phrases = append(in.Phrases, helper.Phrase{Phrase: "zeta"}, helper.Phrase{Phrase: " alpha "})

	refuse = "zeta"
	err := rd.Read(context.Background(), in, emit)
	var p *helper.Paused
	if !errors.As(err, &p) {
		t.Fatalf("Read = %v, want the checkpoint's pause", err)
	}
	// acme grinder's posts search was done, its group's search not come
	// to: it is unread with zeta; alpha was searched.
	if got := rd.UnreadPhrases(); !slices.Equal(got, []string{"acme grinder", "zeta"}) {
		t.Errorf("after stopping at zeta, unread %q; want acme grinder and zeta", got)
	}
	if len(during) == 0 || !slices.Equal(during[0], []string{"acme grinder", "alpha", "zeta"}) {
		t.Errorf("unread while acme grinder's posts were emitted: %q; want every phrase", during)
	}

	// Every search done: none, though the joined groups' list cannot be
	// read (a 404): the rotation is no phrase's own search.
	refuse = ""
	rd.Groups = 0
	if err := rd.Read(context.Background(), in, emit); err == nil {
		t.Fatalf("Read = nil; want the joined groups' page refused")
	}
	if got := rd.UnreadPhrases(); got != nil {
		t.Errorf("a read that did every phrase's searches left %q unread", got)
	}

	// Stopped in the group's search: acme grinder alone is unread.
	rd.Groups = -1
	pages.answer = func(u *url.URL) Page {
		if u.Path == "/groups/1242309506256283/search/" {
			return Page{URL: "https://fb.test/checkpoint/828281030927956/?next=%2F", Status: 200, Head: "<title>Confirm your identity</title>"}
		}
		return fixtures(u)
	}
	if err := rd.Read(context.Background(), in, emit); !errors.As(err, &p) {
		t.Fatalf("Read = %v, want the checkpoint's pause", err)
	}
	if got := rd.UnreadPhrases(); !slices.Equal(got, []string{"acme grinder"}) {
		t.Errorf("after stopping in the group's search, unread %q; want acme grinder", got)
	}
}
