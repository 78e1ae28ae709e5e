package x_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/x"
)

// A read that stops at the second of three phrases (x sends its search
// to the checkpoint, /account/access) names the second and third
// unread: the server leaves their lastCheckedAt. While the first
// phrase's posts are emitted, it is unread too, its search not done; a
// read that searches every phrase names none.
func TestUnreadPhrasesOfAReadThatStops(t *testing.T) {
	h := newHarness(t)
	h.r.Pace = -1
	var during [][]string
	emit := func(p helper.Post, m helper.Mark) error {
		during = append(during, h.r.UnreadPhrases())
		h.posts = append(h.posts, p)
		return nil
	}
	read := func(phrases ...string) error {
		var ps []helper.Phrase
		for _, p := range phrases {
			ps = append(ps, helper.Phrase{Phrase: p})
		}
		in := helper.In{Phrases: ps, Session: jar, ViaProxy: true, Proxy: h.proxy.URL(), Since: func(string) string { return "" },
			Report: func(_ context.Context, s helper.Signal, _ time.Duration) error {
				if !s.OK() {
					return &helper.Paused{Platform: "x", Issue: "seen", NeedsOwner: true}
				}
				return nil
			}}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		return h.r.Read(ctx, in, emit)
	}

	h.fake.refuse.Store("beta")
	err := read("gamma", "alpha", " beta ", "alpha")
	var p *helper.Paused
	if !errors.As(err, &p) {
		t.Fatalf("Read = %v, want the pause of the checkpoint", err)
	}
	if got := h.r.UnreadPhrases(); !slices.Equal(got, []string{"beta", "gamma"}) {
		t.Errorf("after stopping at beta, unread %q; want beta and gamma", got)
	}
	// The fixture answers alpha with its two posts.
	if len(h.posts) != 2 || len(during) != 2 || !slices.Equal(during[0], []string{"alpha", "beta", "gamma"}) {
		t.Errorf("%d posts; unread while alpha's were emitted: %q; want alpha among them", len(h.posts), during)
	}

	// emit failing (the batch was refused) stops the read in alpha.
	h.fake.refuse.Store("")
	stop := errors.New("the server refused the batch")
	emit = func(helper.Post, helper.Mark) error { return stop }
	if err := read("alpha", "beta"); !errors.Is(err, stop) {
		t.Fatalf("Read = %v, want emit's error", err)
	}
	if got := h.r.UnreadPhrases(); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Errorf("after emit failed in alpha, unread %q", got)
	}

	// All searched: none.
	emit = func(helper.Post, helper.Mark) error { return nil }
	if err := read("alpha", "beta"); err != nil {
		t.Fatal(err)
	}
	if got := h.r.UnreadPhrases(); got != nil {
		t.Errorf("a whole read left %q unread", got)
	}
}

var _ helper.PhraseUnreader = (*x.Reader)(nil)
