package core

import (
	"strconv"
	"strings"
	"time"
)

// RecentPost is a post kept in an owner's window of recent posts: every
// post the owner's readers saw, matched or not, kept for a while so that
// a phrase can be tried on it before it is saved and filled from it once
// it is (the store's RecentStore).
type RecentPost struct {
	Seq       int64 // the store's number of the post: later posts have larger ones
	OwnerID   string
	Platform  Platform
	Community string // the post's subreddit on reddit; "" elsewhere
	Post      Post
	SeenAt    time.Time // when a reader of the owner's saw it
	// Bounds says where each body part of Post.Text after the first
	// begins (IngestPost.Bounds): byte offsets joined by commas, "" for
	// a post of one part. A string, so a RecentPost compares with ==.
	Bounds string
}

// Body returns the body parts of the post's text, each on its own, as
// matching searched them: a phrase that runs from one part into the next
// is not in the post. A post without bounds (of one part, or kept before
// bounds were) is one part, and so is one whose bounds do not fit its
// text.
func (rp RecentPost) Body() []string {
	t := rp.Post.Text
	if rp.Bounds == "" {
		return []string{t}
	}
	var body []string
	from := 0
	for f := range strings.SplitSeq(rp.Bounds, ",") {
		at, err := strconv.Atoi(f)
		if err != nil || at < from+2 || at >= len(t) || t[at-2:at] != "\n\n" {
			return []string{t}
		}
		body, from = append(body, t[from:at-2]), at
	}
	return append(body, t[from:])
}

// ArchiveSet is the set of an owner's matches that applying a phrase's
// filters archived in one step, kept so that the step can be undone.
type ArchiveSet struct {
	ID        string
	OwnerID   string
	PhraseID  string
	Matches   int // matches it archived
	CreatedAt time.Time
}
