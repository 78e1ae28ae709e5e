package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// RedditPost is one post or comment as read from reddit or a mirror.
type RedditPost struct {
	// Post.ExternalID is reddit's fullname (t3_... for a post, t1_... for a
	// comment) whichever source it came from, so one post read once from
	// reddit and once from a mirror is the same post.
	Post core.Post
	// Community is the lower-case subreddit the post belongs to.
	Community string
	// CreatedAt is when reddit says the post was made.
	CreatedAt time.Time
}

// RedditRead is what one Read found.
type RedditRead struct {
	Posts  []RedditPost
	Source core.Source // core.SourceReddit or core.SourceMirror
}

// RedditSource reads the newest posts of a subreddit.
type RedditSource interface {
	// Read returns the posts and comments of community (a bare lower-case
	// name) made after since, newest first, without duplicates and without
	// deleted or removed posts. It reads reddit, or the mirror when reddit
	// fails (403, 429, 5xx, a time-out, or an answer that is not JSON);
	// Source says which. Nothing is filtered by phrase: the caller matches.
	// A zero since reads only the newest page of each listing.
	//
	// It spreads its requests over time to stay inside reddit's rate limit,
	// so a call may wait; it honours ctx while it waits and reads. It is
	// safe for concurrent use, though calls share one request budget.
	//
	// Errors: KindInvalid for a malformed community name; KindNotFound when
	// reddit says the community does not exist (404); KindUnavailable when
	// reddit fails and the mirror fails too or no mirror is set, or when ctx
	// ends. Errors never carry credentials.
	Read(ctx context.Context, community string, since time.Time) (RedditRead, error)
}
