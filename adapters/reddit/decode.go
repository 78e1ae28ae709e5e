package reddit

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Kinds of reddit things this package reads. A fullname is kind + "_" + id.
const (
	kindPost    = "t3"
	kindComment = "t1"
)

// publicSite is where every post link points, whatever address the posts
// were read from: BaseURL may be a test server or a proxy, and the owner
// reading a match wants the post on reddit.
const publicSite = "https://www.reddit.com"

// thing is the part of a reddit post or comment this package uses. Reddit's
// listings and both mirrors use reddit's own field names, so one struct
// reads all three; fields a source leaves out stay empty.
type thing struct {
	ID                string          `json:"id"`
	Name              string          `json:"name"` // fullname; mirrors often leave it out
	Author            string          `json:"author"`
	Title             string          `json:"title"`
	Selftext          string          `json:"selftext"`
	Body              string          `json:"body"`
	Permalink         string          `json:"permalink"`
	Subreddit         string          `json:"subreddit"`
	LinkID            string          `json:"link_id"` // a comment's post, t3_...
	Score             number          `json:"score"`
	NumComments       number          `json:"num_comments"`
	CreatedUTC        number          `json:"created_utc"`
	RemovedByCategory json.RawMessage `json:"removed_by_category"`
	Stickied          bool            `json:"stickied"`
}

// number reads a JSON number that a source may also send as a string or
// null: created_utc is a float on reddit ("1767225600.0"), an integer on
// the mirrors, and a string in some older archive records.
type number float64

func (n *number) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*n = 0
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(strings.TrimSpace(s))
		if len(b) == 0 {
			*n = 0
			return nil
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return errors.New("number out of range")
	}
	*n = number(f)
	return nil
}

// int clamps n to a range every platform's int holds, since a float out of
// range converts to an unspecified integer.
func (n number) int() int {
	const lim = 1 << 31
	f := float64(n)
	switch {
	case f > lim-1:
		return lim - 1
	case f < -lim:
		return -lim
	}
	return int(f)
}

// time reads n as seconds since 1970; the zero time when it is not a
// plausible creation time (before 2005, when reddit began, or absurdly far
// ahead).
func (n number) time() time.Time {
	f := float64(n)
	if f < 1_100_000_000 || f > 1e11 {
		return time.Time{}
	}
	sec := math.Floor(f)
	return time.Unix(int64(sec), int64((f-sec)*1e9)).UTC()
}

// page is one decoded page of a reddit listing.
type page struct {
	items []item
	after string // the fullname to continue after; empty on the last page
}

// item is a thing with the kind its source gave it.
type item struct {
	kind string
	thing
}

// errNotListing marks a JSON answer that is not a listing: reddit's error
// objects ({"message": "Forbidden", "error": 403}) and anything else.
var errNotListing = errors.New("not a listing")

// decodeListing reads one page of reddit's Listing JSON. A child that does
// not decode is dropped rather than failing the page, so one odd post does
// not send a whole community to the mirror.
func decodeListing(b []byte) (page, error) {
	var l struct {
		Kind string `json:"kind"`
		Data struct {
			After    *string `json:"after"`
			Children []struct {
				Kind string          `json:"kind"`
				Data json.RawMessage `json:"data"`
			} `json:"children"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return page{}, err
	}
	if l.Kind != "Listing" {
		return page{}, errNotListing
	}
	var p page
	if l.Data.After != nil {
		p.after = *l.Data.After
	}
	for _, c := range l.Data.Children {
		if c.Kind != kindPost && c.Kind != kindComment {
			continue
		}
		var t thing
		if err := json.Unmarshal(c.Data, &t); err != nil {
			continue
		}
		p.items = append(p.items, item{kind: c.Kind, thing: t})
	}
	return p, nil
}

// decodeMirror reads a mirror's answer, {"data": [...]}, in which every
// element is of the given kind (the endpoint says which). Arctic Shift
// reports trouble as {"error": "..."}, sometimes with status 200.
func decodeMirror(b []byte, kind string) ([]item, error) {
	var m struct {
		Data  *[]json.RawMessage `json:"data"`
		Error json.RawMessage    `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if e := bytes.TrimSpace(m.Error); len(e) > 0 && string(e) != "null" {
		return nil, errors.New("mirror reported an error")
	}
	if m.Data == nil {
		return nil, errors.New("no data in answer")
	}
	items := make([]item, 0, len(*m.Data))
	for _, raw := range *m.Data {
		var t thing
		if err := json.Unmarshal(raw, &t); err != nil {
			continue
		}
		items = append(items, item{kind: kind, thing: t})
	}
	return items, nil
}

// entities undoes the only escaping reddit still applies with raw_json=1:
// the markdown of selftext and body keeps &amp;, &lt; and &gt;. Other
// entities are left alone because an author may have typed them. One pass,
// so "&amp;lt;" becomes "&lt;", as its author wrote it.
var entities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

// gone reports whether a text is reddit's placeholder for deleted content.
func gone(s string) bool {
	s = strings.TrimSpace(s)
	return s == "[deleted]" || s == "[removed]"
}

// post maps it to a RedditPost. ok is false for a post that is deleted or
// removed, or that lacks an id or a creation time; such posts are skipped.
// community is the name that was read, used when the item names none.
func (it item) post(community string) (ports.RedditPost, bool) {
	id, ok := fullname(it.kind, it.Name, it.ID)
	if !ok {
		return ports.RedditPost{}, false
	}
	text := it.Selftext
	if it.kind == kindComment {
		text = it.Body
	}
	if gone(it.Author) || gone(text) || removed(it.RemovedByCategory) {
		return ports.RedditPost{}, false
	}
	created := it.CreatedUTC.time()
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
		Text:     core.Cut(entities.Replace(text), maxText),
		URL:      link(it.kind, id, sub, it.Permalink, it.LinkID),
		Likes:    it.Score.int(),
		PostedAt: created,
	}
	// A comment has no title of its own. Its post's title (link_title) is
	// left out on purpose: matching it would turn every comment under a
	// matching post into a match of its own.
	if it.kind == kindPost {
		p.Title = core.Cut(entities.Replace(it.Title), core.MaxPostText)
		p.Comments = it.NumComments.int()
	}
	return ports.RedditPost{Post: p, Community: sub, CreatedAt: created}, true
}

// removed reports whether removed_by_category is set: null or absent for a
// visible post, a reason ("moderator", "deleted", ...) otherwise.
func removed(raw json.RawMessage) bool {
	s := string(bytes.TrimSpace(raw))
	return s != "" && s != "null" && s != `""` && s != "false"
}

// fullname returns the reddit fullname of a thing of kind from its name or,
// when a mirror gave only the bare id, from the id. Ids are base 36; any
// other id is refused, since it would make a key no other source can match.
func fullname(kind, name, id string) (string, bool) {
	prefix := kind + "_"
	if rest, ok := strings.CutPrefix(name, prefix); ok && base36(rest) {
		return name, true
	}
	id = strings.TrimPrefix(id, prefix)
	if !base36(id) {
		return "", false
	}
	return prefix + id, true
}

func base36(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// link is the post's address on reddit: its permalink when the source gave
// a site-relative one, else built from the ids (archived comments often
// lack a permalink).
func link(kind, id, sub, permalink, linkID string) string {
	if strings.HasPrefix(permalink, "/") && !strings.HasPrefix(permalink, "//") && !strings.ContainsAny(permalink, " \t\r\n\\") {
		return publicSite + permalink
	}
	if rest, ok := strings.CutPrefix(permalink, publicSite+"/"); ok && !strings.ContainsAny(rest, " \t\r\n\\") {
		return permalink
	}
	bare := strings.TrimPrefix(id, kind+"_")
	if kind == kindPost {
		return publicSite + "/r/" + sub + "/comments/" + bare + "/"
	}
	if post := strings.TrimPrefix(linkID, kindPost+"_"); base36(post) {
		return publicSite + "/r/" + sub + "/comments/" + post + "/comment/" + bare + "/"
	}
	return publicSite + "/r/" + sub + "/"
}

// maxText bounds the text kept of one post or comment.
const maxText = 40000
