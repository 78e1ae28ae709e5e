package reddit

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/redditjson"
)

// item is a post or comment, from a listing or a mirror, with what the
// server makes of it. Reddit's listings and both mirrors use reddit's own
// field names, so one struct reads all three; fields a source leaves out
// stay empty.
type item redditjson.Item

// decodeMirror reads a mirror's answer, {"data": [...]}, in which every
// element is of the given kind (the endpoint says which). Arctic Shift
// reports trouble as {"error": "..."}, sometimes with status 200.
func decodeMirror(b []byte, kind string) ([]item, error) {
	items, _, err := decodeMirrorPage(b, kind)
	return items, err
}

// decodeMirrorPage is decodeMirror that also says how many elements the
// answer held, decoded or not: a page is the archive's end only when it
// held fewer than a full page, whatever was left out of it.
func decodeMirrorPage(b []byte, kind string) ([]item, int, error) {
	var m struct {
		Data  *[]json.RawMessage `json:"data"`
		Error json.RawMessage    `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, 0, err
	}
	if e := bytes.TrimSpace(m.Error); len(e) > 0 && string(e) != "null" {
		return nil, 0, errors.New("mirror reported an error")
	}
	if m.Data == nil {
		return nil, 0, errors.New("no data in answer")
	}
	items := make([]item, 0, len(*m.Data))
	for _, raw := range *m.Data {
		var t redditjson.Thing
		if err := json.Unmarshal(raw, &t); err != nil {
			continue
		}
		items = append(items, item{Kind: kind, Thing: t})
	}
	return items, len(*m.Data), nil
}

// post maps it to a RedditPost. ok is false for a post that is deleted or
// removed, or that lacks an id or a creation time; such posts are skipped.
// community is the name that was read, used when the item names none.
func (it item) post(community string) (ports.RedditPost, bool) {
	id, ok := redditjson.Fullname(it.Kind, it.Name, it.ID)
	if !ok {
		return ports.RedditPost{}, false
	}
	text := it.Selftext
	if it.Kind == redditjson.KindComment {
		text = it.Body
	}
	if redditjson.Gone(it.Author) || redditjson.Gone(text) || removed(it.RemovedByCategory) {
		return ports.RedditPost{}, false
	}
	created := it.CreatedUTC.Time()
	if created.IsZero() {
		return ports.RedditPost{}, false
	}
	sub := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(it.Subreddit, "r/"), "/r/"))
	if !validCommunity(sub) {
		sub = community
	}
	p := core.Post{
		ExternalID: id,
		Author:     it.Author,
		// The whole text is matched; the store cuts what a match keeps.
		// 40,000 characters is reddit's own limit on self text.
		Text:     core.Cut(redditjson.Entities.Replace(text), maxText),
		URL:      link(it.Kind, id, sub, it.Permalink, it.LinkID),
		Likes:    it.Score.Int(),
		PostedAt: created,
	}
	// A comment has no title of its own. Its post's title (link_title) is
	// left out on purpose: matching it would turn every comment under a
	// matching post into a match of its own.
	if it.Kind == redditjson.KindPost {
		p.Title = core.Cut(redditjson.Entities.Replace(it.Title), core.MaxPostText)
		p.Comments = it.NumComments.Int()
	}
	return ports.RedditPost{Post: p, Community: sub, CreatedAt: created}, true
}

// removed reports whether removed_by_category is set: null or absent for a
// visible post, a reason ("moderator", "deleted", ...) otherwise.
func removed(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s != "" && s != "null" && s != `""` && s != "false"
}

// link is the post's address on reddit: its permalink when the source gave
// a site-relative one, else built from the ids (archived comments often
// lack a permalink).
func link(kind, id, sub, permalink, linkID string) string {
	if l, ok := redditjson.SiteLink(permalink); ok {
		return l
	}
	if rest, ok := strings.CutPrefix(permalink, redditjson.PublicSite+"/"); ok && !strings.ContainsAny(rest, " \t\r\n\\") {
		return permalink
	}
	bare := strings.TrimPrefix(id, kind+"_")
	if kind == redditjson.KindPost {
		return redditjson.PostLink(sub, bare)
	}
	if post := strings.TrimPrefix(linkID, redditjson.KindPost+"_"); redditjson.Base36(post) {
		return redditjson.PostLink(sub, post) + "comment/" + bare + "/"
	}
	return redditjson.CommunityLink(sub)
}

// maxText bounds the text kept of one post or comment.
const maxText = 40000
