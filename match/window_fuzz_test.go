package match

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// FuzzWindowFindsWhatIngestMatches checks the promise of the window of
// recent posts (docs/recent-posts.md): a post kept as ingest keeps it
// (core.IngestPost.Post, Bounds) and read back (core.RecentPost.Body)
// holds every phrase ingest found in the post as it came
// (core.IngestPost.SearchTexts), and the text index, which holds the
// kept post's words (AppendWords of the title, then of the text), holds
// the phrase's words one after another, so a preview's search for them
// passes the post. Posts longer than the kept text are left out: a
// phrase found only past the cut is documented as not found.
func FuzzWindowFindsWhatIngestMatches(f *testing.F) {
	f.Add("acme crm", "Acme", "we use ACME\tCRM\x00here", "and ❤️acme")
	f.Add("東京", "", "東京タワー", "x")
	f.Add("c++", "  ", "\xffc++\xfe", "")
	f.Add("a\u0301", "A\u0301!", "", " a\u0301 ")
	f.Add("acme crm", "ac\u00adme\u200e crm", "\ufeffacme \u200b crm", "acme\u2060crm")
	f.Fuzz(func(t *testing.T, phrase, title, body1, body2 string) {
		ip := core.IngestPost{ExternalID: "1", URL: "https://x.com/1", Title: title, Body: []string{body1, body2}}
		p, err := ip.Post()
		if err != nil {
			return
		}
		if utf8.RuneCountInString(title) > core.MaxPostText || utf8.RuneCountInString(body1)+utf8.RuneCountInString(body2)+2 > core.MaxPostText {
			return
		}
		set := Compile([]string{phrase})
		liveTitle, liveBody := ip.SearchTexts()
		if len(set.Find(append([]string{liveTitle}, liveBody...)...)) == 0 {
			return
		}
		kept := core.RecentPost{Post: p, Bounds: ip.Bounds()}
		if len(set.Find(append([]string{p.Title}, kept.Body()...)...)) == 0 {
			t.Fatalf("%q is found in %q %q as it came, not in %q %q as kept", phrase, liveTitle, liveBody, p.Title, kept.Body())
		}
		index := strings.Fields(string(AppendWords(AppendWords(nil, p.Title), p.Text)))
		want := Words(phrase)
		if !holdsRun(index, want) {
			t.Fatalf("%q is found in %q %q, but the index's words %q do not hold its words %q", phrase, p.Title, kept.Body(), index, want)
		}
	})
}

// holdsRun reports whether words holds run, one word after another.
func holdsRun(words, run []string) bool {
	for i := 0; i+len(run) <= len(words); i++ {
		if slices.Equal(words[i:i+len(run)], run) {
			return true
		}
	}
	return len(run) == 0
}
