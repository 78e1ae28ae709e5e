package redditjson

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
)

// ErrNotListing marks a JSON answer that is not a listing: reddit's error
// objects ({"message": "Forbidden", "error": 403}) and anything else.
var ErrNotListing = errors.New("not a listing")

// Listing is one decoded page of a reddit listing.
type Listing struct {
	Items []Item
	After string // the fullname to continue after; empty on the last page
}

// Item is a post or comment with the kind its listing gave it.
type Item struct {
	Kind string // KindPost or KindComment
	Thing
}

// DecodeListing reads one page of reddit's Listing JSON. Children of other
// kinds are skipped, and a child that does not decode is dropped rather
// than failing the page, so one odd post does not cost the rest.
func DecodeListing(b []byte) (Listing, error) {
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
		return Listing{}, err
	}
	if l.Kind != "Listing" {
		return Listing{}, ErrNotListing
	}
	var p Listing
	if l.Data.After != nil {
		p.After = *l.Data.After
	}
	for _, c := range l.Data.Children {
		if c.Kind != KindPost && c.Kind != KindComment {
			continue
		}
		var t Thing
		if err := json.Unmarshal(c.Data, &t); err != nil {
			continue
		}
		p.Items = append(p.Items, Item{Kind: c.Kind, Thing: t})
	}
	return p, nil
}

// Entities undoes the only escaping reddit still applies with raw_json=1:
// the markdown of selftext and body keeps &amp;, &lt; and &gt;. Other
// entities are left alone because an author may have typed them. One pass,
// so "&amp;lt;" becomes "&lt;", as its author wrote it.
var Entities = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">")

// Gone reports whether a text is reddit's placeholder for deleted content.
func Gone(s string) bool {
	s = strings.TrimSpace(s)
	return s == "[deleted]" || s == "[removed]"
}

// Fullname returns the reddit fullname of a thing of kind from its name or,
// when a mirror gave only the bare id, from the id. Ids are base 36; any
// other id is refused, since it would make a key no other source can match.
func Fullname(kind, name, id string) (string, bool) {
	prefix := kind + "_"
	if rest, ok := strings.CutPrefix(name, prefix); ok && Base36(rest) {
		return name, true
	}
	id = strings.TrimPrefix(id, prefix)
	if !Base36(id) {
		return "", false
	}
	return prefix + id, true
}

// Base36 reports whether s is a reddit id: 1 to 16 digits and lower-case
// letters.
func Base36(s string) bool {
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

// SiteLink returns the address on reddit of a site-relative permalink
// ("/r/go/comments/abc/x/"); ok is false for anything else, such as an
// absolute or protocol-relative ("//host/...") address, one with white
// space or a backslash, or one url.Parse refuses (a control character, a
// broken escape), which the server's ingest would refuse with the post:
// the caller then builds the address from ids.
func SiteLink(permalink string) (string, bool) {
	if strings.HasPrefix(permalink, "/") && !strings.HasPrefix(permalink, "//") && !strings.ContainsAny(permalink, " \t\r\n\\") {
		l := PublicSite + permalink
		if _, err := url.Parse(l); err == nil {
			return l, true
		}
	}
	return "", false
}

// PostLink is the address of the post with the bare id (no "t3_") in
// community sub.
func PostLink(sub, bare string) string {
	return PublicSite + "/r/" + sub + "/comments/" + bare + "/"
}

// CommunityLink is the address of community sub, for a thing whose own
// address cannot be built.
func CommunityLink(sub string) string {
	return PublicSite + "/r/" + sub + "/"
}
