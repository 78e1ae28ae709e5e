package reddit_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/reddit"
)

// stateCommunities returns the communities that have a checkpoint in
// the state file, read as the file is on disk.
func stateCommunities(t *testing.T, g *rig) map[string]int {
	t.Helper()
	b, err := os.ReadFile(g.state)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string]string
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for k := range all[g.earshot.srv.URL] {
		for _, l := range reddit.Listings {
			if c, ok := strings.CutPrefix(k, reddit.Key(l, "")); ok {
				out[c]++
			}
		}
	}
	return out
}

// An owner who moves their phrase to another community every day
// leaves the state file the checkpoints of the communities watched in
// the last week, not of every community ever read: the file is written
// whole at every batch.
func TestStateForgetsCommunitiesNoLongerWatched(t *testing.T) {
	g := newRig(t)
	for day := range 20 {
		sub := fmt.Sprintf("sub%02d", day)
		g.earshot.set(func(f *earshotFake) { f.phrases = []helper.Phrase{{Phrase: "acme", Community: sub}} })
		now := float64(g.clock.Now().Unix())
		g.reddit.add("new", thing{kind: "t3", id: "p" + sub, sub: sub, title: "acme", text: "x", created: now - 30})
		g.reddit.add("comments", thing{kind: "t1", id: "c" + sub, sub: sub, text: "acme", created: now - 30})
		pass(t, g)
		g.clock.move(24 * time.Hour)
	}
	got := stateCommunities(t, g)
	for day := range 20 {
		sub := fmt.Sprintf("sub%02d", day)
		switch {
		case day <= 11 && got[sub] > 0:
			t.Errorf("r/%s, left %d days before the last pass, still has %d checkpoints", sub, 19-day, got[sub])
		case day >= 13 && got[sub] != 2:
			t.Errorf("r/%s, left %d days before the last pass, has %d checkpoints, want its 2", sub, 19-day, got[sub])
		}
	}
}

// A community removed and added back within a week is caught up from
// its checkpoint; one added back after a week is read as a new one is,
// its checkpoint forgotten.
func TestCommunityAddedBack(t *testing.T) {
	g := quietRig(t)
	pass(t, g)
	both := []helper.Phrase{{Phrase: "acme", Community: "golang"}, {Phrase: "acme crm", Community: "sales"}}
	for _, c := range []struct {
		away  time.Duration
		pages int
	}{{6 * 24 * time.Hour, reddit.MaxPages}, {8 * 24 * time.Hour, 1}} {
		g.earshot.set(func(f *earshotFake) { f.phrases = both[1:] })
		g.clock.move(10 * time.Minute)
		pass(t, g)
		g.clock.move(c.away)
		pass(t, g)
		g.earshot.set(func(f *earshotFake) { f.phrases = both })
		g.clock.move(10 * time.Minute)
		before := g.reddit.count()
		pass(t, g)
		if n := newListed(g, before); n != c.pages {
			t.Errorf("r/golang added back after %s: the pass asked for %d pages of the new listing, want %d", c.away, n, c.pages)
		}
		if err := g.runner.State.Set(map[string]string{reddit.Key("new", "golang"): "1767000000"}); err != nil {
			t.Fatal(err)
		}
	}
}

// A pass over the same communities with nothing new to keep leaves the
// state file as it was: the time a community was last watched is kept
// to the hour, not rewritten, and the file synced, at every read.
func TestPassWithNothingNewLeavesTheStateFile(t *testing.T) {
	g := newRig(t)
	pass(t, g)
	g.clock.move(10 * time.Minute)
	pass(t, g)
	before, err := os.Stat(g.state)
	if err != nil {
		t.Fatal(err)
	}
	g.clock.move(10 * time.Minute)
	pass(t, g)
	after, err := os.Stat(g.state)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Error("a pass with nothing new wrote the state file again")
	}
}
