package reddit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// feedPage is a feed in reddit's shape (testdata/feed_new.xml: the Atom
// and media namespaces, the feed's own elements, then entries), whose
// entries are n copies of entry with ids t3_0, t3_1, ...
func feedPage(n int, entry string) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xmlns:x="urn:x">`)
	b.WriteString(`<category term="golang" label="r/golang"/><updated>2026-01-01T00:00:00+00:00</updated><id>/r/golang/new/.rss</id><title>newest submissions : golang</title>`)
	for i := range n {
		b.WriteString(strings.ReplaceAll(entry, "ID", fmt.Sprint(i)))
	}
	b.WriteString(`</feed>`)
	return b.Bytes()
}

// feedEntry is one post entry as reddit writes it (testdata/feed_new.xml),
// with inner inside it and text as the post's own text.
func feedEntry(text, inner string) string {
	return `<entry><author><name>/u/gopher</name><uri>https://www.reddit.com/user/gopher</uri></author>` +
		`<category term="golang" label="r/golang"/><content type="html">&lt;!-- SC_OFF --&gt;&lt;div class=&quot;md&quot;&gt;&lt;p&gt;` +
		text + `&lt;/p&gt; &lt;/div&gt;&lt;!-- SC_ON --&gt; &amp;#32; submitted by &amp;#32; &lt;a href=&quot;https://www.reddit.com/user/gopher&quot;&gt; /u/gopher &lt;/a&gt;` +
		` &lt;br/&gt; &lt;span&gt;&lt;a href=&quot;https://www.reddit.com/r/golang/comments/ID/a_title/&quot;&gt;[link]&lt;/a&gt;&lt;/span&gt; &amp;#32;` +
		` &lt;span&gt;&lt;a href=&quot;https://www.reddit.com/r/golang/comments/ID/a_title/&quot;&gt;[comments]&lt;/a&gt;&lt;/span&gt;</content>` +
		`<id>t3_ID</id><media:thumbnail url="https://b.thumbs.redditmedia.com/x.jpg" /><link href="https://www.reddit.com/r/golang/comments/ID/a_title/" />` +
		`<updated>2025-12-31T23:59:50+00:00</updated><published>2025-12-31T23:58:20+00:00</published><title>A title</title>` +
		inner + `</entry>`
}

// nested is depth extension elements, one inside the other.
func nested(depth int) string {
	return strings.Repeat("<x:a>", depth) + strings.Repeat("</x:a>", depth)
}

// attrs is n attributes, each named apart.
func attrs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, ` a%d=""`, i)
	}
	return b.String()
}

// A feed nesting extension elements without end used to be parsed by
// recursion as deep as the answer went: 3,000,000 levels overflowed the
// stack and ended the process. It is refused before it is parsed, in
// memory bounded by the answer and not by the depth.
func TestDecodeFeedRefusesDeepFeed(t *testing.T) {
	b := feedPage(1, feedEntry("hello", nested(100_000)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	es, err := decodeFeed(b, "golang")
	runtime.ReadMemStats(&after)
	if err == nil || err.Error() != "answer nests deeper than 32 elements" {
		t.Fatalf("decodeFeed = %d entries, %v; want the depth refused", len(es), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4*uint64(len(b)) {
		t.Errorf("refusing a %d-byte feed allocated %d bytes", len(b), alloc)
	}
}

func TestDecodeFeedBounds(t *testing.T) {
	// A long self post: 30,000 bytes of escaped HTML, about 30,000
	// characters of text, three quarters of reddit's 40,000.
	long := strings.Repeat("a long self post about go modules &amp;amp; generics. ", 30_000/54)
	cases := []struct {
		name string
		feed []byte
		err  string // empty: accepted
		n    int
	}{
		{"fixture-like page", feedPage(3, feedEntry("hi", "")), "", 3},
		{"32 deep", feedPage(1, feedEntry("hi", nested(maxFeedDepth-2))), "", 1},
		{"33 deep", feedPage(1, feedEntry("hi", nested(maxFeedDepth-1))), "answer nests deeper than 32 elements", 0},
		{"deep after an unclosed root", []byte(`<feed xmlns="http://www.w3.org/2005/Atom">` + strings.Repeat("<a>", 40)), "answer nests deeper than 32 elements", 0},
		{"a full page of long posts", feedPage(pageSize, feedEntry(long, "")), "", pageSize},
		{"too many entries", feedPage(maxFeedEntries+1, feedEntry("hi", "")), fmt.Sprintf("answer has more than %d entries", maxFeedEntries), 0},
		{"too many elements", feedPage(1, feedEntry("hi", strings.Repeat("<x:a/>", maxFeedElements))), fmt.Sprintf("answer has more than %d elements and attributes", maxFeedElements), 0},
		{"too many attributes", feedPage(1, feedEntry("hi", "<x:a"+attrs(maxFeedElements)+"/>")), fmt.Sprintf("answer has more than %d elements and attributes", maxFeedElements), 0},
		{"too large", feedPage(1, feedEntry(strings.Repeat("a", maxFeedBody), "")), "answer is larger than 4 MB", 0},
		{"control character before the depth", feedPage(1, feedEntry("hi", "\x01"+nested(100))), "answer nests deeper than 32 elements", 0},
	}
	for _, tc := range cases {
		es, err := decodeFeed(tc.feed, "golang")
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		case tc.err == "" && len(es) != tc.n:
			t.Errorf("%s: %d entries, want %d", tc.name, len(es), tc.n)
		}
		if tc.name == "a full page of long posts" {
			t.Logf("a page of %d entries of %d-byte posts is %d bytes", pageSize, len(long), len(tc.feed))
		}
	}
}

// FuzzDecodeFeed holds the decoder to its bounds and its posts to the
// rules every decoder keeps, whatever reddit (or what poses as it)
// answers.
func FuzzDecodeFeed(f *testing.F) {
	for _, b := range seed(f, "feed_new.xml", "feed_comments.xml", "blocked.html") {
		f.Add(b)
		f.Add(b[:len(b)/2])
		f.Add(b[:len(b)-len("</feed>")])
	}
	f.Add(feedPage(1, feedEntry("deep", nested(200))))
	f.Add(feedPage(1, feedEntry("open", strings.Repeat("<x:a>", 200))))
	f.Add(feedPage(1, feedEntry("wide", strings.Repeat(`<x:a k="v">t</x:a>`, 2000))))
	f.Add(feedPage(maxFeedEntries+1, feedEntry("many", "")))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := decodeFeed(b, "fallback")
		if err != nil {
			if n := utf8.RuneCountInString(err.Error()); n > maxFeedError {
				t.Fatalf("error of %d characters", n)
			}
			if reason := feedFailure(err, 200).Error(); len(reason) > 60 {
				t.Fatalf("refusal %q", reason)
			}
			return
		}
		if len(es) > maxFeedEntries {
			t.Fatalf("%d entries let through", len(es))
		}
		for _, e := range es {
			if !e.sortable || e.created.IsZero() {
				t.Fatalf("entry %q without a time", e.id)
			}
			if !e.ok {
				continue
			}
			checkPost(t, e.post)
			if strings.HasPrefix(e.post.Post.Author, "/u/") || e.post.Post.ExternalID != e.id {
				t.Fatalf("feed post %+v", e.post.Post)
			}
		}
	})
}

// The fixtures pass the bounds, and a real page of them would too.
func TestDecodeFeedFixturesWithinBounds(t *testing.T) {
	for _, name := range []string{"feed_new.xml", "feed_comments.xml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := checkFeed(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
