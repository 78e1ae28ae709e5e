package app

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// coverSource answers every read whole, saying it saw posts items of each
// community since its checkpoint; it stands for any of reddit's ways.
type coverSource struct {
	clock ports.Clock
	posts int
}

func (s coverSource) Read(_ context.Context, q ports.RedditQuery) (ports.RedditRead, error) {
	read := ports.RedditRead{Source: core.SourceReddit, Via: ports.RedditViaJSON, Remaining: -1}
	for _, w := range q.Want {
		read.Covered = append(read.Covered, ports.RedditCover{Community: w.Community, From: w.Since,
			Until: s.clock.Now(), Posts: s.posts, Complete: true})
	}
	return read, nil
}

// A listing's first read measures its rate: with no estimate before it,
// the measure is not averaged with a zero that was never an estimate
// (docs/reddit.md: "its rate is then measured"), or a busy new community
// is packed as if half as busy.
func TestRedditFirstReadMeasuresTheRate(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		a := w.owner(t, "a@example.com")
		p := w.phrase(t, a.ID, "generics", "golang")
		c := newSimClock()
		c.Set(p.LastCheckedAt.Add(time.Hour))
		poller := w.poller(coverSource{clock: c, posts: 60}, c, "replica-1", nil)
		if _, err := poller.Cycle(ctx, 10*time.Minute); err != nil {
			t.Fatal(err)
		}
		cps, err := gormstore.NewRedditStore(w.db).RedditCheckpoints(ctx)
		if err != nil || len(cps) != 2 {
			t.Fatalf("checkpoints %+v, %v", cps, err)
		}
		// 60 posts since the phrase was made, an hour and the overlap ago.
		want := 60 / (time.Hour + DefaultRedditOverlap).Hours()
		for _, cp := range cps {
			if math.Abs(cp.Rate-want) > 0.01 {
				t.Errorf("%s rate %.2f an hour, want %.2f", cp.Listing, cp.Rate, want)
			}
		}
	})
}
