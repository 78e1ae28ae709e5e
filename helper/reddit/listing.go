package reddit

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
)

// The kinds of reddit things read. A fullname is kind + "_" + id.
const (
	kindPost    = "t3"
	kindComment = "t1"
)

// publicSite is where every post link points, whatever address was read.
const publicSite = "https://www.reddit.com"

// page is one decoded page of a listing.
type page struct {
	items []item
	after string
}

// item is the part of a reddit post or comment the helper sends.
type item struct {
	kind              string
	Name              string          `json:"name"`
	ID                string          `json:"id"`
	Author            string          `json:"author"`
	Title             string          `json:"title"`
	Selftext          string          `json:"selftext"`
	Body              string          `json:"body"`
	Permalink         string          `json:"permalink"`
	Subreddit         string          `json:"subreddit"`
	Score             number          `json:"score"`
	NumComments       number          `json:"num_comments"`
	CreatedUTC        number          `json:"created_utc"`
	RemovedByCategory json.RawMessage `json:"removed_by_category"`
}

// number reads a JSON number that reddit may send as a float, a string
// or null.
type number float64

func (n *number) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(bytes.TrimSpace(b)), `"`)
	if s == "null" || s == "" {
		*n = 0
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return errors.New("not a number")
	}
	*n = number(f)
	return nil
}

// decodeListing reads one page of reddit's Listing JSON
// ({"kind":"Listing","data":{"after":...,"children":[{"kind":"t3","data":{...}}]}}).
// A child that does not decode is dropped, not the page.
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
		return page{}, errors.New("not a listing")
	}
	var p page
	if l.Data.After != nil {
		p.after = *l.Data.After
	}
	for _, c := range l.Data.Children {
		if c.Kind != kindPost && c.Kind != kindComment {
			continue
		}
		it := item{kind: c.Kind}
		if json.Unmarshal(c.Data, &it) == nil {
			p.items = append(p.items, it)
		}
	}
	return p, nil
}

// entities undoes the escaping reddit keeps in markdown with raw_json=1.
var entities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

func gone(s string) bool {
	s = strings.TrimSpace(s)
	return s == "[deleted]" || s == "[removed]"
}

// post maps the item to an ingest post keyed by its fullname; ok is
// false for a deleted or removed one, or one outside group.
func (it item) post(group []string) (helper.Post, string, bool) {
	id, ok := fullname(it.kind, it.Name, it.ID)
	if !ok {
		return helper.Post{}, "", false
	}
	text := it.Selftext
	if it.kind == kindComment {
		text = it.Body
	}
	rc := strings.TrimSpace(string(it.RemovedByCategory))
	if gone(it.Author) || gone(text) || (rc != "" && rc != "null" && rc != `""`) || it.CreatedUTC <= 0 {
		return helper.Post{}, "", false
	}
	community := strings.ToLower(it.Subreddit)
	if !slices.Contains(group, community) {
		if len(group) != 1 || it.Subreddit != "" {
			return helper.Post{}, "", false
		}
		community = group[0]
	}
	text = strings.TrimSpace(entities.Replace(text))
	p := helper.Post{
		ExternalID: id,
		AuthorName: it.Author,
		URL:        link(it.Permalink, community, id),
		Likes:      max(int(min(float64(it.Score), 1<<31-1)), 0),
		PostedAt:   int64(float64(it.CreatedUTC) * 1000),
		Community:  community,
	}
	if it.kind == kindPost {
		p.Title = core.Cut(entities.Replace(it.Title), core.MaxPostText)
		p.Comments = max(int(min(float64(it.NumComments), 1<<31-1)), 0)
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

// fullname returns kind_id from the name or the bare id, refusing ids
// that are not base 36 (they would key no post another source has).
func fullname(kind, name, id string) (string, bool) {
	if rest, ok := strings.CutPrefix(name, kind+"_"); ok && base36(rest) {
		return name, true
	}
	id = strings.TrimPrefix(id, kind+"_")
	return kind + "_" + id, base36(id)
}

func base36(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// link is the post's address on reddit.
func link(permalink, community, id string) string {
	if strings.HasPrefix(permalink, "/") && !strings.HasPrefix(permalink, "//") && !strings.ContainsAny(permalink, " \t\r\n\\") {
		return publicSite + permalink
	}
	kind, bare, _ := strings.Cut(id, "_")
	if kind == kindPost {
		return publicSite + "/r/" + community + "/comments/" + bare + "/"
	}
	return publicSite + "/r/" + community + "/"
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
