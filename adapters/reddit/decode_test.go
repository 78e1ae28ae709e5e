package reddit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/redditjson"
)

// link keeps a site-relative or reddit permalink and builds the rest from
// ids, never pointing off reddit.
func TestLink(t *testing.T) {
	links := []struct{ kind, id, permalink, linkID, want string }{
		{redditjson.KindPost, "t3_abc", "/r/go/comments/abc/x/", "", "https://www.reddit.com/r/go/comments/abc/x/"},
		{redditjson.KindPost, "t3_abc", "//evil.example/x", "", "https://www.reddit.com/r/go/comments/abc/"},
		{redditjson.KindPost, "t3_abc", "https://evil.example/r/go/", "", "https://www.reddit.com/r/go/comments/abc/"},
		{redditjson.KindComment, "t1_def", "", "t3_abc", "https://www.reddit.com/r/go/comments/abc/comment/def/"},
		{redditjson.KindComment, "t1_def", "", "", "https://www.reddit.com/r/go/"},
	}
	for _, tc := range links {
		if got := link(tc.kind, tc.id, "go", tc.permalink, tc.linkID); got != tc.want {
			t.Errorf("link(%q, %q) = %q, want %q", tc.permalink, tc.linkID, got, tc.want)
		}
	}
}

// checkPost holds for every post the decoders let through, whatever the
// input.
func checkPost(t *testing.T, p ports.RedditPost) {
	t.Helper()
	id := p.Post.ExternalID
	if !strings.HasPrefix(id, "t3_") && !strings.HasPrefix(id, "t1_") {
		t.Errorf("external id %q is not a fullname", id)
	}
	if !strings.HasPrefix(p.Post.URL, redditjson.PublicSite+"/") {
		t.Errorf("URL %q is not on reddit", p.Post.URL)
	}
	if utf8.RuneCountInString(p.Post.Text) > core.MaxPostText {
		t.Errorf("text of %d characters", utf8.RuneCountInString(p.Post.Text))
	}
	if !validCommunity(p.Community) {
		t.Errorf("community %q", p.Community)
	}
	if p.CreatedAt.IsZero() || !p.CreatedAt.Equal(p.Post.PostedAt) {
		t.Errorf("created %v, posted %v", p.CreatedAt, p.Post.PostedAt)
	}
}

func seed(f *testing.F, names ...string) [][]byte {
	var out [][]byte
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func FuzzDecodeListing(f *testing.F) {
	for _, b := range seed(f, "listing_new.json", "listing_comments.json", "blocked.html") {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := redditjson.DecodeListing(b)
		if err != nil {
			return
		}
		for _, it := range l.Items {
			if rp, ok := item(it).post("fallback"); ok {
				checkPost(t, rp)
			}
		}
	})
}

func FuzzDecodeMirror(f *testing.F) {
	for _, b := range seed(f, "arcticshift_posts.json", "pullpush_submissions.json") {
		f.Add(b, false)
	}
	for _, b := range seed(f, "arcticshift_comments.json", "pullpush_comments.json") {
		f.Add(b, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, comments bool) {
		kind := redditjson.KindPost
		if comments {
			kind = redditjson.KindComment
		}
		items, err := decodeMirror(b, kind)
		if err != nil {
			return
		}
		for _, it := range items {
			if rp, ok := it.post("fallback"); ok {
				checkPost(t, rp)
			}
		}
	})
}
