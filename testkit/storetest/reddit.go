package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// RunReddit runs the cases of ports.RedditStore. Each case uses community
// names of its own, so runs share a database.
func RunReddit(t *testing.T, st ports.RedditStore) {
	t.Run("Checkpoints", func(t *testing.T) { t.Parallel(); testRedditCheckpoints(t, st) })
	t.Run("CheckpointsConcurrent", func(t *testing.T) { t.Parallel(); testRedditCheckpointsConcurrent(t, st) })
	t.Run("CheckpointNamedTwice", func(t *testing.T) { t.Parallel(); testRedditCheckpointNamedTwice(t, st) })
}

func checkpointsOf(t *testing.T, st ports.RedditStore, names ...string) map[string]ports.RedditCheckpoint {
	t.Helper()
	all, err := st.RedditCheckpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]ports.RedditCheckpoint{}
	for _, cp := range all {
		if want[cp.Community] {
			out[cp.Community+"/"+string(cp.Listing)] = cp
		}
	}
	return out
}

func testRedditCheckpoints(t *testing.T, st ports.RedditStore) {
	a, b := "c"+unique(), "c"+unique()
	t1 := time.UnixMicro(1767225600123456).UTC()
	in := []ports.RedditCheckpoint{
		{Community: a, Listing: ports.RedditPosts, Until: t1, Rate: 12.5, LastVia: ports.RedditViaFeed,
			LastReadAt: t1.Add(time.Second), LastSuccessAt: t1.Add(time.Second)},
		{Community: a, Listing: ports.RedditComments, Until: t1.Add(-time.Minute), LastVia: ports.RedditViaArchive,
			LastReadAt: t1, LastError: "json: http 403", LastErrorAt: t1, ArchiveLag: 90 * time.Minute},
		{Community: b, Listing: ports.RedditPosts},
	}
	if err := st.SaveRedditCheckpoints(ctx, in); err != nil {
		t.Fatal(err)
	}
	got := checkpointsOf(t, st, a, b)
	if len(got) != 3 {
		t.Fatalf("stored %d checkpoints, want 3: %+v", len(got), got)
	}
	for _, w := range in {
		g := got[w.Community+"/"+string(w.Listing)]
		if !g.Until.Equal(w.Until) || g.Rate != w.Rate || g.LastVia != w.LastVia || !g.LastReadAt.Equal(w.LastReadAt) ||
			!g.LastSuccessAt.Equal(w.LastSuccessAt) || g.LastError != w.LastError || !g.LastErrorAt.Equal(w.LastErrorAt) ||
			g.ArchiveLag != w.ArchiveLag {
			t.Errorf("checkpoint\n got %+v\nwant %+v", g, w)
		}
	}

	// Until never moves back; the rest is replaced.
	back := in[0]
	back.Until, back.LastError, back.Rate = t1.Add(-time.Hour), "feed: timeout", 3
	fwd := in[1]
	fwd.Until, fwd.LastError = t1.Add(time.Hour), ""
	if err := st.SaveRedditCheckpoints(ctx, []ports.RedditCheckpoint{back, fwd}); err != nil {
		t.Fatal(err)
	}
	got = checkpointsOf(t, st, a)
	if g := got[a+"/new"]; !g.Until.Equal(t1) || g.LastError != "feed: timeout" || g.Rate != 3 {
		t.Errorf("after an older Until: %+v", g)
	}
	if g := got[a+"/comments"]; !g.Until.Equal(t1.Add(time.Hour)) || g.LastError != "" {
		t.Errorf("after a newer Until: %+v", g)
	}

	// A bad listing stores nothing of the batch.
	c := "c" + unique()
	err := st.SaveRedditCheckpoints(ctx, []ports.RedditCheckpoint{{Community: c, Listing: ports.RedditPosts}, {Community: c, Listing: "hot"}})
	if !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("listing hot: err = %v, want invalid", err)
	}
	if got := checkpointsOf(t, st, c); len(got) != 0 {
		t.Errorf("a refused batch stored %+v", got)
	}
	if err := st.SaveRedditCheckpoints(ctx, nil); err != nil {
		t.Errorf("empty batch: %v", err)
	}

	// More rows than one statement takes.
	var many []ports.RedditCheckpoint
	var names []string
	for range 250 {
		n := "c" + unique()
		names = append(names, n)
		many = append(many, ports.RedditCheckpoint{Community: n, Listing: ports.RedditComments, Until: t1})
	}
	if err := st.SaveRedditCheckpoints(ctx, many); err != nil {
		t.Fatal(err)
	}
	if got := checkpointsOf(t, st, names...); len(got) != 250 {
		t.Errorf("stored %d of 250", len(got))
	}
}

// Writers racing on one checkpoint leave the latest Until.
func testRedditCheckpointsConcurrent(t *testing.T, st ports.RedditStore) {
	name := "c" + unique()
	base := time.UnixMicro(1767225600000000).UTC()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cp := ports.RedditCheckpoint{Community: name, Listing: ports.RedditPosts, Until: base.Add(time.Duration(i) * time.Minute)}
			if err := st.SaveRedditCheckpoints(ctx, []ports.RedditCheckpoint{cp}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if g := checkpointsOf(t, st, name)[name+"/new"]; !g.Until.Equal(base.Add(7 * time.Minute)) {
		t.Errorf("after racing writers Until = %v, want %v", g.Until, base.Add(7*time.Minute))
	}
}

// testRedditCheckpointNamedTwice: a call that names a checkpoint twice
// stores what two calls in turn would (the later's fields, the later
// Until), on every database, rather than failing the whole call.
func testRedditCheckpointNamedTwice(t *testing.T, st ports.RedditStore) {
	a := "c" + unique()
	t1 := time.UnixMicro(1767225600123456).UTC()
	in := []ports.RedditCheckpoint{
		{Community: a, Listing: ports.RedditPosts, Until: t1.Add(time.Minute), Rate: 1, LastReadAt: t1},
		{Community: a, Listing: ports.RedditComments, Until: t1},
		{Community: a, Listing: ports.RedditPosts, Until: t1, Rate: 2, LastReadAt: t1.Add(time.Second), LastError: "late"},
	}
	if err := st.SaveRedditCheckpoints(ctx, in); err != nil {
		t.Fatalf("SaveRedditCheckpoints naming one twice: %v", err)
	}
	got := checkpointsOf(t, st, a)
	if len(got) != 2 {
		t.Fatalf("stored %d checkpoints, want 2: %+v", len(got), got)
	}
	g := got[a+"/"+string(ports.RedditPosts)]
	if !g.Until.Equal(t1.Add(time.Minute)) || g.Rate != 2 || !g.LastReadAt.Equal(t1.Add(time.Second)) || g.LastError != "late" {
		t.Errorf("the checkpoint named twice: %+v", g)
	}
}
