package reddit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

func TestNumber(t *testing.T) {
	cases := map[string]struct {
		in   string
		want float64
		bad  bool
	}{
		"float":      {in: "1767225500.0", want: 1767225500},
		"integer":    {in: "42", want: 42},
		"string":     {in: `"1767225500"`, want: 1767225500},
		"null":       {in: "null"},
		"empty text": {in: `""`},
		"overflow":   {in: "1e400", bad: true},
		"word":       {in: `"soon"`, bad: true},
		"bool":       {in: "true", bad: true},
	}
	for name, tc := range cases {
		var n number
		err := n.UnmarshalJSON([]byte(tc.in))
		if (err != nil) != tc.bad || !tc.bad && float64(n) != tc.want {
			t.Errorf("%s: %v, %v", name, float64(n), err)
		}
	}
	if got := number(1e30).int(); got != 1<<31-1 {
		t.Errorf("huge score = %d", got)
	}
	if !number(1000).time().IsZero() || !number(1e12).time().IsZero() {
		t.Error("implausible creation times accepted")
	}
}

func TestFullnameAndLink(t *testing.T) {
	cases := []struct {
		kind, name, id, want string
		ok                   bool
	}{
		{kindPost, "t3_1hx0a1", "1hx0a1", "t3_1hx0a1", true},
		{kindPost, "", "1hx0a1", "t3_1hx0a1", true},
		{kindComment, "", "t1_kq1c01", "t1_kq1c01", true},
		{kindComment, "t3_abc", "abc", "t1_abc", true}, // a name of the wrong kind is not trusted
		{kindPost, "", "", "", false},
		{kindPost, "", "ABC", "", false},
		{kindPost, "", "a/b", "", false},
	}
	for _, tc := range cases {
		got, ok := fullname(tc.kind, tc.name, tc.id)
		if got != tc.want || ok != tc.ok {
			t.Errorf("fullname(%s, %q, %q) = %q, %v", tc.kind, tc.name, tc.id, got, ok)
		}
	}
	links := []struct{ kind, id, permalink, linkID, want string }{
		{kindPost, "t3_abc", "/r/go/comments/abc/x/", "", "https://www.reddit.com/r/go/comments/abc/x/"},
		{kindPost, "t3_abc", "//evil.example/x", "", "https://www.reddit.com/r/go/comments/abc/"},
		{kindPost, "t3_abc", "https://evil.example/r/go/", "", "https://www.reddit.com/r/go/comments/abc/"},
		{kindComment, "t1_def", "", "t3_abc", "https://www.reddit.com/r/go/comments/abc/comment/def/"},
		{kindComment, "t1_def", "", "", "https://www.reddit.com/r/go/"},
	}
	for _, tc := range links {
		if got := link(tc.kind, tc.id, "go", tc.permalink, tc.linkID); got != tc.want {
			t.Errorf("link(%q, %q) = %q, want %q", tc.permalink, tc.linkID, got, tc.want)
		}
	}
}

func TestEntities(t *testing.T) {
	if got := entities.Replace("a &amp; b &lt;c&gt; &amp;lt; &copy;"); got != "a & b <c> &lt; &copy;" {
		t.Errorf("got %q", got)
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
	if !strings.HasPrefix(p.Post.URL, publicSite+"/") {
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
		p, err := decodeListing(b)
		if err != nil {
			return
		}
		for _, it := range p.items {
			if rp, ok := it.post("fallback"); ok {
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
		kind := kindPost
		if comments {
			kind = kindComment
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
