// Package record holds the public record of a match: the JSON object GET
// /api/v1/matches/{id} returns, each item of a page of GET /matches, and
// the data of every match.created webhook message (app/webhookmessage.go).
// One type serves all three, so a receiver reads exactly the fields the
// API shows; an export writes the same record per line of JSON Lines, or
// its fields as a row of CSV (export.go).
//
// It is app's, in a package of its own so that the HTTP adapter writes
// its pages with it without importing app: app's tests drive that
// adapter, so the adapter importing app would be an import cycle.
package record

import "github.com/earshothq/earshot/core"

// Match is the record of a match. Times are milliseconds since 1970 with a
// microsecond fraction (core.Millis); score, intent and reason are null
// until the match is scored.
type Match struct {
	ID        string  `json:"id"`
	CreatedAt float64 `json:"createdAt"`
	Phrase    string  `json:"phrase"`
	Platform  string  `json:"platform"`
	Score     *int    `json:"score"`
	Intent    *string `json:"intent"`
	Reason    *string `json:"reason"`
	Post      Post    `json:"post"`
	// Backfilled, beyond the spec's fields and only when true, marks a
	// match found in the owner's window of recent posts when its phrase
	// was added.
	Backfilled bool `json:"backfilled,omitempty"`
}

// Post is the post object of a match record. A post without a title has
// a null title; one without a time, a null postedAt.
type Post struct {
	Author   string   `json:"author"`
	Title    *string  `json:"title"`
	Text     string   `json:"text"`
	URL      string   `json:"url"`
	Likes    int      `json:"likes"`
	Comments int      `json:"comments"`
	PostedAt *float64 `json:"postedAt"`
}

// NewMatch returns the record of m.
func NewMatch(m core.Match) Match {
	out := Match{
		ID: m.ID, CreatedAt: core.Millis(m.CreatedAt), Phrase: m.Phrase, Platform: string(m.Platform), Backfilled: m.Backfilled,
		Post: Post{
			Author: m.Post.Author, Text: m.Post.Text, URL: m.Post.URL,
			Likes: m.Post.Likes, Comments: m.Post.Comments,
		},
	}
	if m.Post.Title != "" {
		t := m.Post.Title
		out.Post.Title = &t
	}
	if !m.Post.PostedAt.IsZero() {
		t := core.Millis(m.Post.PostedAt)
		out.Post.PostedAt = &t
	}
	if m.Score != nil {
		v, intent, reason := m.Score.Value, string(m.Score.Intent), m.Score.Reason
		out.Score, out.Intent, out.Reason = &v, &intent, &reason
	}
	return out
}
