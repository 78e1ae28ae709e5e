package core

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// MaxIngestBatch is the most posts one ingest request may carry.
const MaxIngestBatch = 100

// IngestPost is a post as a helper program sends it.
type IngestPost struct {
	ExternalID string
	AuthorName string
	Body       []string
	URL        string
	Likes      int
	Comments   int
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
// or https url are required; likes and comments must not be negative.
// The body parts are kept joined by blank lines, cut at MaxPostText.
// Errors are KindInvalid naming the field; the caller skips such rows.
func (p IngestPost) Post() (Post, error) {
	id := strings.TrimSpace(p.ExternalID)
	if id == "" || utf8.RuneCountInString(id) > 200 || !utf8.ValidString(id) {
		return Post{}, Errorf(KindInvalid, "externalId must be 1 to 200 characters")
	}
	var parts []string
	for _, b := range p.Body {
		if b = strings.TrimSpace(cleanText(b)); b != "" {
			parts = append(parts, b)
		}
	}
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
	return CleanPost(Post{
		ExternalID: id,
		Author:     Cut(strings.TrimSpace(cleanText(p.AuthorName)), 200),
		Text:       Cut(strings.Join(parts, "\n\n"), MaxPostText),
		URL:        u.String(),
		Likes:      p.Likes,
		Comments:   p.Comments,
	})
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
	out := make([]string, 0, len(p.Body))
	for _, b := range p.Body {
		// Searched as stored: a NUL inside a word does not hide it.
		if strings.IndexByte(b, 0) >= 0 {
			b = strings.ReplaceAll(b, "\x00", "")
		}
		if strings.TrimSpace(b) != "" {
			out = append(out, b)
		}
	}
	return out
}
