package x

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// FuzzParseSearch hands the parser any SearchTimeline answer, seeded
// with the fixtures of testdata/ (their shape is described in
// testdata/README.md) and hostile variants, and checks what it
// promises of each tweet it keeps: one of x's ids, a handle, a text
// that is not blank and at most core.MaxPostText characters, counts
// within 0 to 2^31-1; and no more tweets than the answer can hold.
func FuzzParseSearch(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	if len(files) == 0 {
		f.Fatal("no fixture in testdata/")
	}
	const entry = `{"data":{"search_by_raw_query":{"search_timeline":{"timeline":{"instructions":[{"entries":[{"entryId":"tweet-1","content":{"itemContent":{"tweet_results":{"result":%s}}}}]}]}}}}}`
	for _, r := range []string{
		`{"rest_id":"1","core":{"user_results":{"result":{"legacy":{"screen_name":"a"}}}},"legacy":{"full_text":"&amp;lt;","favorite_count":1e300,"reply_count":-5,"created_at":"Wed Oct 10 20:19:24 +0000 2018"}}`,
		`{"rest_id":"","tweet":{"rest_id":"9223372036854775807","core":{"user_results":{"result":{"core":{"screen_name":"b"}}}},"note_tweet":{"note_tweet_results":{"result":{"text":"` + strings.Repeat("ü", 3000) + `"}}},"legacy":{"full_text":" "}}}`,
		`{"rest_id":"01","legacy":{"full_text":"x"}}`,
		`{"rest_id":"12345678901234567890","legacy":{"full_text":"x"}}`,
		`{"tweet":{"tweet":{"tweet":null}}}`,
		`{"rest_id":"5","core":{"user_results":{"result":{"legacy":{"screen_name":"c"}}}},"legacy":{"full_text":"\u0000\ud800","favorite_count":"7","reply_count":[1]}}`,
		`[]`,
	} {
		f.Add([]byte(strings.Replace(entry, "%s", r, 1)))
	}
	f.Add([]byte(`{"errors":[{"code":131,"path":["entries"]},{"code":326}]}`))
	f.Add([]byte(`{"data":{"search_by_raw_query":{"search_timeline":{"timeline":{"instructions":[{"entry":{"content":{"cursorType":"Bottom","value":"DAAC"}}}]}}}}}`))
	f.Add([]byte(`null`))
	f.Add([]byte(strings.Repeat("[", 20000)))
	f.Fuzz(func(t *testing.T, body []byte) {
		pg, err := parseSearch(body)
		if err != nil {
			if len(pg.tweets) != 0 || pg.bottom != "" || pg.errCode != 0 {
				t.Fatalf("an error (%v) with a page: %+v", err, pg)
			}
			return
		}
		// A tweet's keys alone (content, itemContent, tweet_results,
		// result, rest_id, core, user_results, screen_name, legacy,
		// full_text) take over 100 bytes of its entry.
		if len(pg.tweets) > len(body)/100 {
			t.Errorf("%d tweets from an answer of %d bytes", len(pg.tweets), len(body))
		}
		for _, tw := range pg.tweets {
			if !isID(tw.ID) || tw.Handle == "" || strings.TrimSpace(tw.Text) == "" {
				t.Errorf("a tweet without id, handle or text: %+v", tw)
			}
			if n := utf8.RuneCountInString(tw.Text); n > core.MaxPostText {
				t.Errorf("a text of %d characters", n)
			}
			if tw.Likes < 0 || tw.Replies < 0 || tw.Likes > 1<<31-1 || tw.Replies > 1<<31-1 {
				t.Errorf("counts %d, %d", tw.Likes, tw.Replies)
			}
		}
	})
}
