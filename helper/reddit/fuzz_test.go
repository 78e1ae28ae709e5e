package reddit

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/redditjson"
)

// FuzzListingPosts hands the helper's reader any listing answer, seeded
// with the listings the server's reader is tested with
// (adapters/reddit/testdata, the shape of reddit's /r/NAME/new.json and
// /comments.json with raw_json=1) and hostile variants, and checks what
// item.post promises of each post it keeps: a fullname, a community of
// the group read, a body, a plausible time, and a post the server's
// ingest takes as it is (core.IngestPost's checks), since a post it
// refuses is lost to the checkpoint that moved past it.
func FuzzListingPosts(f *testing.F) {
	for _, name := range []string{"listing_new.json", "listing_comments.json"} {
		b, err := os.ReadFile("../../adapters/reddit/testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	const one = `{"kind":"Listing","data":{"after":"t3_x","children":[{"kind":"%k","data":%d}]}}`
	for _, c := range []struct{ kind, data string }{
		{"t3", `{"id":"abc","subreddit":"GoLang","author":"a","title":"&amp;` + strings.Repeat("ß", 2500) + `","selftext":"","created_utc":"1767225500.5","score":-3,"num_comments":1e300,"permalink":"//evil.example/x"}`},
		{"t1", `{"name":"t1_zz","id":"ZZ","subreddit":"","author":"","body":" \u0000 ","created_utc":1767225500}`},
		{"t1", `{"name":"t3_zz","id":"t1_q","subreddit":"golang","author":"b","body":"hi","created_utc":1e11,"permalink":"/r/golang/comments/q/ x"}`},
		{"t3", `{"id":"abc","subreddit":"golang","author":"[deleted]","selftext":"x","created_utc":1767225500}`},
		{"t3", `{"id":"abc","subreddit":"golang","author":"c","selftext":"x","created_utc":1767225500,"removed_by_category":"moderator"}`},
		{"t3", `{"id":"abc","subreddit":"golang","author":"c","selftext":"x","created_utc":"NaN"}`},
		{"t3", `{"id":"abc","subreddit":"golang","author":"c","selftext":"x","created_utc":1767225500,"permalink":"/r/golang/\u0001"}`},
	} {
		b := strings.Replace(strings.Replace(one, "%k", c.kind, 1), "%d", c.data, 1)
		f.Add([]byte(b), false)
		f.Add([]byte(b), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, two bool) {
		pg, err := redditjson.DecodeListing(body)
		if err != nil {
			return
		}
		group := []string{"golang"}
		if two {
			group = append(group, "smallbusiness")
		}
		for _, it := range pg.Items {
			p, community, ok := item(it).post(group)
			if !ok {
				continue
			}
			if !strings.HasPrefix(p.ExternalID, it.Kind+"_") || !redditjson.Base36(strings.TrimPrefix(p.ExternalID, it.Kind+"_")) {
				t.Errorf("id %q for a %s", p.ExternalID, it.Kind)
			}
			if community != p.Community || !strings.Contains(strings.Join(group, " "), community) {
				t.Errorf("community %q (post's %q) outside %v", community, p.Community, group)
			}
			if len(p.Body) != 1 || p.Body[0] == "" || utf8.RuneCountInString(p.Body[0]) > core.MaxPostText || utf8.RuneCountInString(p.Title) > core.MaxPostText {
				t.Errorf("body %q, title of %d characters", p.Body, utf8.RuneCountInString(p.Title))
			}
			if p.PostedAt <= 0 || p.Likes < 0 || p.Comments < 0 {
				t.Errorf("postedAt %d, likes %d, comments %d", p.PostedAt, p.Likes, p.Comments)
			}
			if !strings.HasPrefix(p.URL, redditjson.PublicSite+"/") {
				t.Errorf("url %q is not reddit's", p.URL)
			}
			at := float64(p.PostedAt)
			in := core.IngestPost{ExternalID: p.ExternalID, AuthorName: p.AuthorName, Body: p.Body, URL: p.URL, Likes: p.Likes,
				Comments: p.Comments, Title: p.Title, PostedAt: &at, Community: p.Community}
			// A body of NUL alone is blank to the server, which skips the
			// row; reddit sends no such text, and it holds nothing to match.
			if _, err := in.Post(); err != nil && strings.TrimSpace(strings.ReplaceAll(p.Body[0], "\x00", "")) != "" {
				t.Errorf("the server refuses %+v: %v", p, err)
			}
			if _, err := in.CommunityOn(core.Reddit); err != nil {
				t.Errorf("the server refuses community %q: %v", p.Community, err)
			}
		}
	})
}
