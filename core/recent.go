package core

import "time"

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
