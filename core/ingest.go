package core

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxIngestBatch is the most posts one ingest request may carry.
const MaxIngestBatch = 100

// IngestPost is a post as a helper program sends it. Title, PostedAt
// and Community go beyond the spec's fields and are optional.
type IngestPost struct {
	ExternalID string
	AuthorName string
	Body       []string
	URL        string
	Likes      int
	Comments   int
	Title      string   // empty when the post has none
	PostedAt   *float64 // milliseconds since 1970, like every ...At; nil when not given
	Community  string   // the subreddit of a reddit post
}

// MaxUnreadCommunities is the most communities one batch may name as
// unread: more than a helper's owner plausibly listens in, few enough
// that reading them costs nothing next to the batch's posts.
const MaxUnreadCommunities = 1000

// MaxUnreadPhrases is the most phrases one batch may name as unread:
// more than a helper's owner plausibly listens for on one platform, few
// enough that matching them against the owner's phrases costs nothing
// next to the batch's posts.
const MaxUnreadPhrases = 1000

// IngestBatch is one POST /ingest: the platform, the posts, and, beyond
// the spec, the communities and the phrases the helper's pass did not
// read.
type IngestBatch struct {
	Platform      string
	Posts         []IngestPost
	Unread        UnreadCommunities
	UnreadPhrases UnreadPhrases
}

// UnreadPhrases is a batch's unreadPhrases as it came: the texts of the
// phrases the helper's pass has not searched to the end (the platform
// refused the search, the pass stopped before it or during it), whose
// lastCheckedAt the batch must not move. The zero value is a batch that
// names none, as every batch of a helper older than the field is: all
// were read.
type UnreadPhrases struct {
	Texts   []string // as sent; at most MaxUnreadPhrases+1 are kept
	Invalid bool     // the value was neither null nor an array of strings
	Over    bool     // the array held more than MaxUnreadPhrases texts
}

// Keys returns the phrases to leave unread, each as FoldKey of its text
// normalised as a phrase (NormalizePhrase): the form in which the server
// compares two phrases, so a text names every phrase of the platform a
// new phrase of that text would duplicate (on reddit, that text in every
// community). Sorted, without repeats. The field is valid on every
// platform. A value that is not an array of at most MaxUnreadPhrases
// strings refuses the batch whole (KindInvalid naming the field), so a
// helper's mistake is seen rather than read as "all were read". A text
// that is no phrase (empty, too long) names none and is left out, as a
// text no phrase of the owner has is: a helper sends the texts GET
// /phrases gave it, which may have changed since.
func (u UnreadPhrases) Keys() ([]string, error) {
	if u.Invalid || u.Over {
		return nil, Errorf(KindInvalid, "unreadPhrases must be an array of at most %d phrases", MaxUnreadPhrases)
	}
	if len(u.Texts) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(u.Texts))
	for _, t := range u.Texts {
		if text, err := NormalizePhrase(t); err == nil {
			out = append(out, FoldKey(text))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// UnreadCommunities is a batch's unreadCommunities as it came: the
// reddit communities the helper's pass has not read (reddit refused
// them, or the pass has not come to them yet), whose phrases the batch
// must not record as read. The zero value is a batch that names none,
// as every batch of a helper older than the field is: all were read.
type UnreadCommunities struct {
	Names   []string // as sent; at most MaxUnreadCommunities+1 are kept
	Invalid bool     // the value was neither null nor an array of strings
	Over    bool     // the array held more than MaxUnreadCommunities names
}

// On returns the communities to leave unread on platform pl, normalised
// as phrases store them, sorted and without repeats. The field is
// reddit's, the one platform whose phrases have communities: on x and
// facebook it is ignored, whatever it holds, as a post's community is.
// On reddit, a value that is not an array of at most
// MaxUnreadCommunities subreddit names refuses the batch whole
// (KindInvalid naming the field), so a helper's mistake is seen rather
// than read as "all were read".
func (u UnreadCommunities) On(pl Platform) ([]string, error) {
	if pl != Reddit {
		return nil, nil
	}
	if u.Invalid || u.Over {
		return nil, Errorf(KindInvalid, "unreadCommunities must be an array of at most %d subreddit names", MaxUnreadCommunities)
	}
	if len(u.Names) == 0 {
		return nil, nil
	}
	out := make([]string, 0, len(u.Names))
	for i, n := range u.Names {
		c, err := NormalizeCommunity(n)
		if err != nil {
			return nil, Errorf(KindInvalid, "unreadCommunities[%d]: %s", i, Message(err))
		}
		out = append(out, c)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// maxPostedAt is the first millisecond of the year 10000: a time past it
// is no time a post was made.
const maxPostedAt = 253402300800000

// CommunityOn returns the community p belongs to on platform pl, as
// phrases name it: a reddit post needs its subreddit (`name`, `r/name`
// or `/r/name`, kept lower-case), since a reddit phrase listens in one
// community only and the post is matched against that community's
// phrases, as the server's own reddit reader matches what it reads.
// Posts on the other platforms have no community: whatever a helper sends
// there is ignored, as the phrases there have none to scope by. Errors
// are KindInvalid; the caller skips such rows, so the helper can send the
// post again with its community.
func (p IngestPost) CommunityOn(pl Platform) (string, error) {
	if pl != Reddit {
		return "", nil
	}
	if strings.TrimSpace(p.Community) == "" {
		return "", Errorf(KindInvalid, "community is required for reddit posts")
	}
	return NormalizeCommunity(p.Community)
}

// CheckIngestBatch refuses a batch over the limit, whole.
func CheckIngestBatch(n int) error {
	if n > MaxIngestBatch {
		return Errorf(KindInvalid, "posts must hold at most %d posts, got %d", MaxIngestBatch, n)
	}
	return nil
}

// Post validates an ingested post and returns it as stored: externalId
// (at most 200 characters), at least one non-empty body part and an http
// or https url are required; likes and comments must not be negative;
// postedAt, when given, must be a time from 1970 to the year 9999. The
// body parts are kept joined by blank lines, the body and the title cut
// at MaxPostText, the time to the microsecond.
// Errors are KindInvalid naming the field; the caller skips such rows.
func (p IngestPost) Post() (Post, error) {
	id := strings.TrimSpace(p.ExternalID)
	if id == "" || utf8.RuneCountInString(id) > 200 || !utf8.ValidString(id) {
		return Post{}, Errorf(KindInvalid, "externalId must be 1 to 200 characters")
	}
	parts := p.bodyParts()
	if len(parts) == 0 {
		return Post{}, Errorf(KindInvalid, "body must hold at least one non-empty part")
	}
	u, err := url.Parse(strings.TrimSpace(p.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(p.URL) > 2048 {
		return Post{}, Errorf(KindInvalid, "url must be an http or https address")
	}
	if p.Likes < 0 || p.Comments < 0 {
		return Post{}, Errorf(KindInvalid, "likes and comments must not be negative")
	}
	var posted time.Time
	if p.PostedAt != nil {
		ms := *p.PostedAt
		if math.IsNaN(ms) || ms < 0 || ms >= maxPostedAt {
			return Post{}, Errorf(KindInvalid, "postedAt must be milliseconds since 1970")
		}
		posted = time.UnixMicro(int64(math.Round(ms * 1000))).UTC()
	}
	return CleanPost(Post{
		ExternalID: id,
		Author:     Cut(strings.TrimSpace(cleanText(p.AuthorName)), 200),
		Title:      Cut(strings.TrimSpace(cleanText(p.Title)), MaxPostText),
		Text:       Cut(strings.Join(parts, "\n\n"), MaxPostText),
		URL:        u.String(),
		Likes:      p.Likes,
		Comments:   p.Comments,
		PostedAt:   posted,
	})
}

// bodyParts are the body parts Post keeps, in order: each cleaned and
// trimmed, the blank ones left out.
func (p IngestPost) bodyParts() []string {
	var parts []string
	for _, b := range p.Body {
		if b = strings.TrimSpace(cleanText(b)); b != "" {
			parts = append(parts, b)
		}
	}
	return parts
}

// Bounds says where each body part after the first begins in the text
// Post keeps (the parts joined by blank lines, cut at MaxPostText), for
// the window of recent posts, whose readers search the parts apart as
// matching does (RecentPost.Body): byte offsets joined by commas, "" for
// a post of one part. A part the cut leaves out has none.
func (p IngestPost) Bounds() string {
	if len(p.Body) < 2 {
		return ""
	}
	var b []byte
	at, chars := 0, 0
	for i, part := range p.bodyParts() {
		if i > 0 {
			at, chars = at+2, chars+2
			if chars >= MaxPostText {
				break
			}
			if len(b) > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(at), 10)
		}
		at, chars = at+len(part), chars+utf8.RuneCountInString(part)
	}
	return string(b)
}

// CleanPost is the check every post passes before it is matched and
// stored, whatever its source (helpers, reddit, the archives), so that
// both databases store the same thing: Postgres text refuses NUL and
// bytes that are not UTF-8, SQLite keeps them.
//
// A NUL is removed from the author, the title and the text: it carries
// nothing a reader sees, and the rest of the post is worth keeping. An
// externalId or url that holds a NUL, or an externalId that is empty or
// not UTF-8, makes the post invalid (KindInvalid; the caller skips it):
// a post's identity and address are not guessed at. Bytes that are not
// UTF-8 in the other fields become U+FFFD.
func CleanPost(p Post) (Post, error) {
	if p.ExternalID == "" || !utf8.ValidString(p.ExternalID) || strings.IndexByte(p.ExternalID, 0) >= 0 {
		return Post{}, Errorf(KindInvalid, "externalId must be UTF-8 text without NUL")
	}
	if strings.IndexByte(p.URL, 0) >= 0 {
		return Post{}, Errorf(KindInvalid, "url must be an http or https address")
	}
	p.URL = strings.ToValidUTF8(p.URL, "\uFFFD")
	p.Author = cleanText(p.Author)
	p.Title = cleanText(p.Title)
	p.Text = cleanText(p.Text)
	return p, nil
}

// cleanText removes NUL from s and replaces bytes that are not UTF-8.
func cleanText(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Parts returns the texts of a post that are searched for phrases: the
// title and each body part, separately, so a phrase never spans two.
func (p IngestPost) Parts() []string {
	title, body := p.SearchTexts()
	if title == "" {
		return body
	}
	return append([]string{title}, body...)
}

// SearchTexts returns the texts of a post that are searched for phrases,
// as they are searched: the title ("" when it has none) and each body part
// that is not blank, each on its own.
func (p IngestPost) SearchTexts() (title string, body []string) {
	body = make([]string, 0, len(p.Body))
	for _, b := range p.Body {
		if b = searched(b); b != "" {
			body = append(body, b)
		}
	}
	return searched(p.Title), body
}

// searched is s as it is searched for phrases, or "" when it is blank.
func searched(s string) string {
	// Searched as stored: a NUL inside a word does not hide it.
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return s
}
