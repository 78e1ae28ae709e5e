package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/reddit"
)

// redditFeed is an Atom page in the shape reddit serves its feeds
// (adapters/reddit/testdata/feed_new.xml, feed_comments.xml), holding
// one entry with id fullname, the text in its <div class="md">, made at
// made, and inner inside the entry.
func redditFeed(community, fullname, text string, made time.Time, inner string) string {
	at := made.UTC().Format(time.RFC3339)
	link := fmt.Sprintf("https://www.reddit.com/r/%s/comments/%s/a_title/", community, strings.TrimPrefix(fullname, "t3_"))
	return `<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xmlns:x="urn:x">` +
		`<category term="` + community + `" label="r/` + community + `"/><updated>` + at + `</updated><id>/r/` + community + `/new/.rss</id>` +
		`<title>newest : ` + community + `</title><entry><author><name>/u/gopher</name><uri>https://www.reddit.com/user/gopher</uri></author>` +
		`<category term="` + community + `" label="r/` + community + `"/><content type="html">&lt;div class=&quot;md&quot;&gt;&lt;p&gt;` + text +
		`&lt;/p&gt; &lt;/div&gt;</content><id>` + fullname + `</id><link href="` + link + `" /><updated>` + at + `</updated>` +
		`<published>` + at + `</published><title>/u/gopher on a title</title>` + inner + `</entry></feed>`
}

// A posts feed nested 100,000 deep, which once overflowed the stack and
// ended the process, is refused with a short reason that the source
// health shows; the comments of the same community are still read, the
// posts checkpoint stays, and the posts are read once the feed is sound.
func TestRedditDeepFeedShowsInHealth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, c, o := newRedditWorld(t)
	w.phrase(t, o.ID, "generics", "golang")
	made := c.Now().Add(time.Second)
	c.Advance(2 * time.Second)

	deep := strings.Repeat("<x:a>", 100_000) + strings.Repeat("</x:a>", 100_000)
	var sound atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r/golang/new/.rss":
			rw.Header().Set("Content-Type", "application/atom+xml; charset=UTF-8")
			inner := deep
			if sound.Load() {
				inner = ""
			}
			fmt.Fprint(rw, redditFeed("golang", "t3_p1", "generics in a post", made, inner))
		case "/r/golang/comments/.rss":
			rw.Header().Set("Content-Type", "application/atom+xml; charset=UTF-8")
			fmt.Fprint(rw, redditFeed("golang", "t1_c1", "generics in a comment", made, ""))
		default:
			// reddit's block page for JSON from a server's address
			// (adapters/reddit/testdata/blocked.html).
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			rw.WriteHeader(http.StatusForbidden)
			fmt.Fprint(rw, "<!doctype html><html><body>You've been blocked by network security.</body></html>")
		}
	}))
	t.Cleanup(srv.Close)
	src, err := reddit.New(reddit.Config{BaseURL: srv.URL, UserAgent: "test", Interval: time.Minute, Logger: quiet,
		Now: c.Now, Sleep: c.Sleep})
	if err != nil {
		t.Fatal(err)
	}
	poller := w.poller(src, c, "r1", nil)

	st, err := poller.Cycle(ctx, time.Minute)
	if err != nil || st.Failed != 1 {
		t.Fatalf("cycle with the deep feed: %+v %v", st, err)
	}
	if got := w.matchedIDs(t, o.ID); !slices.Equal(got, []string{"t1_c1"}) {
		t.Fatalf("matched %v, want the comment only", got)
	}
	rows, err := NewRedditHealth(w.phrases, gormstore.NewRedditStore(w.db), c).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !strings.Contains(rows[0].LastError, "feed: answer nests deeper than 32 elements") ||
		len(rows[0].LastError) > 200 || !rows[0].LastSuccessAt.IsZero() {
		t.Fatalf("status: %+v", rows)
	}

	sound.Store(true)
	c.Advance(time.Minute)
	if st, err := poller.Cycle(ctx, time.Minute); err != nil || st.Failed != 0 {
		t.Fatalf("cycle once the feed is sound: %+v %v", st, err)
	}
	if got := w.matchedIDs(t, o.ID); !slices.Equal(got, []string{"t1_c1", "t3_p1"}) {
		t.Fatalf("matched %v, want the post too", got)
	}
}
