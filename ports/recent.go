package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// RecentKeep is what a batch keeps of a post in its owner's window of
// recent posts beside the post itself (PostMatches.Keep).
type RecentKeep struct {
	Community string // the post's subreddit on reddit; "" elsewhere
	SeenAt    time.Time
	Bounds    string // where the post's body parts begin (core.RecentPost.Bounds); "" for one part
}

// RecentWords are a kept post's words as the text index holds them: its
// title's and text's, as the matcher cuts them (match.AppendWords).
type RecentWords struct {
	Seq   int64
	Words string
}

// RecentQuery asks an owner's window for the posts a phrase may match.
type RecentQuery struct {
	OwnerID   string
	Platform  core.Platform
	Community string // the phrase's community: only posts of it ("" off reddit)
	// Words are the phrase's words (match.Words): a post that does not
	// hold them one after another is not passed. None: every post is.
	Words []string
	Limit int // the most posts passed
}

// RecentStore keeps each owner's window of recent posts: every post its
// readers saw, matched or not, with its text, which MatchStore.SaveMatches
// adds in the transaction that records the post as seen (PostMatches.Keep).
// A post is kept once per owner, platform and external id: only a post
// new to the owner is added. It also keeps the phrases waiting to be
// filled from their owner's window. It is safe for concurrent use.
type RecentStore interface {
	// RecentPosts calls each with the posts of q.OwnerID's window on
	// q.Platform in q.Community that may hold q.Words, at most q.Limit of
	// them, until each returns false; each must not call the store. The
	// posts not in the text index yet come first, then the others, each
	// newest first. A post that holds the words one after another is
	// never left out; one passed may lack them when it is not indexed
	// yet, or (Postgres) when a word of them comes more than 255 times in
	// it: the caller checks each with the matcher. more reports
	// that it stopped at q.Limit with such posts left.
	RecentPosts(ctx context.Context, q RecentQuery, each func(core.RecentPost) bool) (more bool, err error)
	// Unindexed returns up to limit kept posts not in the text index yet,
	// oldest first.
	Unindexed(ctx context.Context, limit int) ([]core.RecentPost, error)
	// IndexRecent adds the posts' words to the text index, in one
	// transaction; a post deleted meanwhile is passed over.
	IndexRecent(ctx context.Context, words []RecentWords) error
	// TrimRecent deletes up to limit kept posts, oldest kept first: those
	// seen before before (trimming stops at the first post seen later, so
	// one kept late with an earlier time waits for those kept before it),
	// and each owner's oldest beyond the newest perOwner (0: no bound by
	// count). It returns how many it deleted; fewer than limit means none
	// is left to delete.
	TrimRecent(ctx context.Context, before time.Time, perOwner, limit int) (int, error)

	// RequestBackfill records that the phrase is to be filled from its
	// owner's window; a second request before it is filled changes
	// nothing. KindNotFound for an unknown phrase.
	RequestBackfill(ctx context.Context, phraseID string, at time.Time) error
	// Backfills returns the phrases waiting to be filled, as they are
	// now, the oldest request first (then by phrase id): at most
	// perOwner of each owner, its oldest, and at most limit in all, so
	// one owner's many waiting phrases leave room for other owners'.
	Backfills(ctx context.Context, perOwner, limit int) ([]core.Phrase, error)
	// SaveBackfill stores, in one transaction, a match of p for each of
	// posts (p's owner's, of p's platform, newest first, as RecentPosts
	// passes them) that p has no match of yet, marked Backfilled, the
	// oldest post's first; grows p's match count; and ends p's request.
	// It returns the matches created, in CreatedAt order. A phrase
	// deleted meanwhile, or whose request was served or ended meanwhile,
	// gets nothing, and that is not an error.
	SaveBackfill(ctx context.Context, p core.Phrase, posts []core.RecentPost) ([]core.Match, error)
	// EndBackfill ends p's request without filling it.
	EndBackfill(ctx context.Context, phraseID string) error
}

// FilterArchiveStore archives, in one step, an owner's matches that a
// phrase's filters drop, and restores the same set. Every method is
// scoped to the owner: another owner's phrase, match or set is
// KindNotFound or passed over, as an unknown one is.
type FilterArchiveStore interface {
	// PhraseMatches calls each with the phrase's matches, newest first,
	// and whether each is archived, at most limit of them, until each
	// returns false; each must not call the store. With unarchived, the
	// archived ones are left out and do not count against limit, so a
	// walk after some were archived goes on past them. more reports that
	// it stopped at limit with matches left that it would have passed.
	PhraseMatches(ctx context.Context, ownerID, phraseID string, limit int, unarchived bool, each func(m core.Match, archived bool) bool) (more bool, err error)
	// ArchiveSet archives, in one transaction, the phrase's matches among
	// ids that are not archived, and keeps them as the phrase's set,
	// which replaces the set it had. It returns the set; its Matches
	// counts those it archived. When it archives none it makes no set
	// and returns the zero ArchiveSet (an empty ID): the phrase keeps the
	// set it had, and its undo. KindNotFound for a phrase not the owner's.
	ArchiveSet(ctx context.Context, ownerID, phraseID string, ids []string, at time.Time) (core.ArchiveSet, error)
	// LatestArchiveSet returns the phrase's set. KindNotFound when it has
	// none.
	LatestArchiveSet(ctx context.Context, ownerID, phraseID string) (core.ArchiveSet, error)
	// RestoreArchiveSet unarchives the set's matches that are archived
	// still, forgets the set and returns how many it unarchived.
	// KindNotFound for a set not the owner's, or restored already.
	RestoreArchiveSet(ctx context.Context, ownerID, id string) (int, error)
}

// Finds is what a phrase found among the posts or matches it was tried
// on: how many it matched of how many were read, whether the reading
// stopped at its bound with more left (Count is then a floor), and the
// first few matched, newest first.
type Finds[T any] struct {
	Count   int
	Read    int
	Partial bool
	First   []T
}

// Preview is what a phrase, or a change of its filters, would do.
type Preview struct {
	Phrase core.Phrase // as it would be: normalised, with the filters previewed
	// Days and Posts are the window's bounds; both 0 when it is off.
	Days, Posts int
	// Window is what the phrase would have matched among its owner's
	// recent posts.
	Window Finds[core.RecentPost]
	// Existing marks the preview of an existing phrase's filters: Dropped
	// are its matches they would not have made, and Archivable counts
	// those of them not archived, which applying the filters archives.
	Existing   bool
	Dropped    Finds[core.Match]
	Archivable int
}

// Applied is what applying a phrase's filters to its matches did.
type Applied struct {
	Set core.ArchiveSet // the matches archived, as one set; an empty ID when none was
	// Read counts the matches judged: those not archived, newest first.
	Read int
	// Partial: matches not archived were left unread. Applying again
	// reads on past those this archived; the ones the filters keep are
	// read again, so it reaches older ones only as far as this archived.
	Partial bool
}
