package core_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

func TestCleanPost(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   core.Post
		want core.Post // zero: invalid
	}{
		{"plain", core.Post{ExternalID: "t3_a", Author: "ada", Title: "T", Text: "acme", URL: "https://x.com/1"},
			core.Post{ExternalID: "t3_a", Author: "ada", Title: "T", Text: "acme", URL: "https://x.com/1"}},
		{"NUL in the text fields", core.Post{ExternalID: "1", Author: "a\x00da", Title: "\x00T\x00", Text: "ac\x00me\x00\x00", URL: "https://x.com/1"},
			core.Post{ExternalID: "1", Author: "ada", Title: "T", Text: "acme", URL: "https://x.com/1"}},
		{"not UTF-8 in the text fields", core.Post{ExternalID: "1", Author: "\xff", Text: "a\xc3", URL: "https://x.com/\xfe"},
			core.Post{ExternalID: "1", Author: "\uFFFD", Text: "a\uFFFD", URL: "https://x.com/\uFFFD"}},
		{"NUL in the id", core.Post{ExternalID: "t3_\x00", Text: "acme", URL: "https://x.com/1"}, core.Post{}},
		{"NUL alone as the id", core.Post{ExternalID: "\x00", Text: "acme", URL: "https://x.com/1"}, core.Post{}},
		{"id not UTF-8", core.Post{ExternalID: "t3_\xff", Text: "acme", URL: "https://x.com/1"}, core.Post{}},
		{"no id", core.Post{Text: "acme", URL: "https://x.com/1"}, core.Post{}},
		{"NUL in the url", core.Post{ExternalID: "1", Text: "acme", URL: "https://x.com/\x00"}, core.Post{}},
	} {
		got, err := core.CleanPost(tc.in)
		if tc.want == (core.Post{}) {
			if !core.IsKind(err, core.KindInvalid) {
				t.Errorf("%s: CleanPost = %+v, %v; want invalid", tc.name, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: CleanPost = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// A helper's post goes through the same rule after its own checks: a
// body part that is only NUL counts as empty.
func TestIngestPostNUL(t *testing.T) {
	p, err := core.IngestPost{ExternalID: " 7 ", AuthorName: " a\x00da ", Body: []string{"\x00", "ac\x00me\x00 "}, URL: "https://x.com/7"}.Post()
	if err != nil || p.Text != "acme" || p.Author != "ada" || p.ExternalID != "7" {
		t.Fatalf("Post = %+v, %v", p, err)
	}
	if parts := (core.IngestPost{Body: []string{"\x00", "ac\x00me"}}).Parts(); len(parts) != 1 || parts[0] != "acme" {
		t.Fatalf("Parts = %q, want the text as stored", parts)
	}
	for _, ip := range []core.IngestPost{
		{ExternalID: "7\x00", Body: []string{"acme"}, URL: "https://x.com/7"},
		{ExternalID: "7", Body: []string{"\x00", " \x00\t"}, URL: "https://x.com/7"},
		{ExternalID: "7", Body: []string{"acme"}, URL: "https://x.com/\x00"},
	} {
		if p, err := ip.Post(); !core.IsKind(err, core.KindInvalid) {
			t.Errorf("Post(%+v) = %+v, %v; want invalid", ip, p, err)
		}
	}
}

// Whatever a source sends, a post CleanPost takes holds no NUL and only
// UTF-8, so every database stores it as it is; cleaning it again
// changes nothing.
func FuzzCleanPost(f *testing.F) {
	f.Add("t3_a", "ada", "title", "ac\x00me", "https://x.com/1")
	f.Add("\x00", "\xff", "\x00\x00", "a\xc3", "https://x.com/\xfe")
	f.Fuzz(func(t *testing.T, id, author, title, text, url string) {
		p, err := core.CleanPost(core.Post{ExternalID: id, Author: author, Title: title, Text: text, URL: url})
		if err != nil {
			return
		}
		for _, s := range []string{p.ExternalID, p.Author, p.Title, p.Text, p.URL} {
			if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
				t.Fatalf("CleanPost left %q", s)
			}
		}
		if again, err := core.CleanPost(p); err != nil || again != p {
			t.Fatalf("CleanPost twice: %+v, %v", again, err)
		}
	})
}
