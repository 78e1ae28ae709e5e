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
		if b = strings.TrimSpace(b); b != "" {
			parts = append(parts, strings.ToValidUTF8(b, "\uFFFD"))
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
	return Post{
		ExternalID: id,
		Author:     Cut(strings.ToValidUTF8(strings.TrimSpace(p.AuthorName), "\uFFFD"), 200),
		Text:       Cut(strings.Join(parts, "\n\n"), MaxPostText),
		URL:        u.String(),
		Likes:      p.Likes,
		Comments:   p.Comments,
	}, nil
}

// Parts returns the texts of a post that are searched for phrases: the
// title and each body part, separately, so a phrase never spans two.
func (p IngestPost) Parts() []string {
	out := make([]string, 0, len(p.Body))
	for _, b := range p.Body {
		if strings.TrimSpace(b) != "" {
			out = append(out, b)
		}
	}
	return out
}
