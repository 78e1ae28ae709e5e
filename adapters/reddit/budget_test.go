package reddit_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/ports"
)

// One 429 that names no time halves the keyless budget; a day of
// answers later, reddit's budget is spent at its full rate again.
func TestBudgetRecoversAfterA429(t *testing.T) {
	c := newClock()
	var mu sync.Mutex
	first := true
	srv, _ := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		f := first
		first = false
		mu.Unlock()
		if f {
			status(http.StatusTooManyRequests, `{"message": "Too Many Requests", "error": 429}`)(w, r)
			return
		}
		writeJSON(w, http.StatusOK, listing(t, ""))
	}))
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})
	read := func() {
		_, _ = src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
			Want: []ports.RedditWant{{Community: community, Since: since}}})
	}
	read()                             // 429: rests both keyless ways
	c.Set(c.Now().Add(24 * time.Hour)) // a day of quiet
	for range 100 {                    // and many answers
		read()
	}
	n := len(c.Sleeps())
	read()
	read()
	want := time.Minute / reddit.DefaultKeylessPerMinute
	if s := c.Sleeps(); len(s) == n || s[len(s)-1] != want {
		t.Errorf("sleeps after a day = %v, want requests spaced the budget's %v", s[n:], want)
	}
}
