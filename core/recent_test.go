package core

import (
	"slices"
	"strings"
	"testing"
)

// The bounds Bounds gives split the text Post keeps back into the parts
// it joined, blank parts left out; the 2,000-character cut applies to the
// parts together, so a part it leaves out has no bound and the last part
// kept is cut. Bounds that do not fit the text read as one part.
func TestRecentPostBody(t *testing.T) {
	long := strings.Repeat("é", MaxPostText-3)
	for _, c := range []struct {
		name string
		body []string
		want []string
	}{
		{"one part", []string{"  just one  "}, []string{"just one"}},
		{"blank parts left out", []string{"a\n\nb", "", " ", "c d", "é z"}, []string{"a\n\nb", "c d", "é z"}},
		{"cut in the second part", []string{long, "abcdef"}, []string{long, "a"}},
		{"cut before the third", []string{long, "a", "b"}, []string{long, "a"}},
		{"cut at the second's start", []string{long + "x", "b"}, []string{long + "x\n\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ip := IngestPost{ExternalID: "1", Body: c.body, URL: "https://x.com/1"}
			p, err := ip.Post()
			if err != nil {
				t.Fatal(err)
			}
			if got := (RecentPost{Post: p, Bounds: ip.Bounds()}).Body(); !slices.Equal(got, c.want) {
				t.Fatalf("Body = %q (bounds %q), want %q", got, ip.Bounds(), c.want)
			}
		})
	}
	text := Post{Text: "ab\n\ncd"}
	for _, b := range []string{"", "4,", "x", "3", "2", "6", "4,4", "-1"} {
		if got := (RecentPost{Post: text, Bounds: b}).Body(); !slices.Equal(got, []string{"ab\n\ncd"}) {
			t.Errorf("bounds %q: Body = %q, want the text as one part", b, got)
		}
	}
	if got := (RecentPost{Post: text, Bounds: "4"}).Body(); !slices.Equal(got, []string{"ab", "cd"}) {
		t.Errorf("Body = %q", got)
	}
}
