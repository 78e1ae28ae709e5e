package reddit

import (
	"slices"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/redditjson"
)

// item is a post or comment of a listing, with what the helper makes of it.
type item redditjson.Item

// post maps the item to an ingest post keyed by its fullname; ok is
// false for a deleted or removed one, one without a plausible creation
// time, or one outside group.
func (it item) post(group []string) (helper.Post, string, bool) {
	id, ok := redditjson.Fullname(it.Kind, it.Name, it.ID)
	if !ok {
		return helper.Post{}, "", false
	}
	text := it.Selftext
	if it.Kind == redditjson.KindComment {
		text = it.Body
	}
	rc := strings.TrimSpace(string(it.RemovedByCategory))
	if redditjson.Gone(it.Author) || redditjson.Gone(text) || (rc != "" && rc != "null" && rc != `""`) ||
		// As the server's reader: a time that is not plausible would make
		// a checkpoint that hides the community's later posts.
		it.CreatedUTC.Time().IsZero() {
		return helper.Post{}, "", false
	}
	community := strings.ToLower(it.Subreddit)
	if !slices.Contains(group, community) {
		if len(group) != 1 || it.Subreddit != "" {
			return helper.Post{}, "", false
		}
		community = group[0]
	}
	text = strings.TrimSpace(redditjson.Entities.Replace(text))
	p := helper.Post{
		ExternalID: id,
		AuthorName: it.Author,
		URL:        link(it.Permalink, community, id),
		Likes:      helper.Count(float64(it.Score)),
		PostedAt:   int64(float64(it.CreatedUTC) * 1000),
		Community:  community,
	}
	if it.Kind == redditjson.KindPost {
		p.Title = core.Cut(redditjson.Entities.Replace(it.Title), core.MaxPostText)
		p.Comments = helper.Count(float64(it.NumComments))
		if text == "" {
			// A link post has no text of its own; a body is required.
			text = p.Title
		}
	}
	if text == "" {
		return helper.Post{}, "", false
	}
	// The server keeps MaxPostText characters of a body: no more is sent.
	p.Body = []string{core.Cut(text, core.MaxPostText)}
	return p, community, true
}

// link is the post's address on reddit.
func link(permalink, community, id string) string {
	if l, ok := redditjson.SiteLink(permalink); ok {
		return l
	}
	kind, bare, _ := strings.Cut(id, "_")
	if kind == redditjson.KindPost {
		return redditjson.PostLink(community, bare)
	}
	return redditjson.CommunityLink(community)
}

// validCommunity reports whether s is a subreddit name as phrases store
// it: 3 to 21 letters, digits or underscores.
func validCommunity(s string) bool {
	if len(s) < 2 || len(s) > 21 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
