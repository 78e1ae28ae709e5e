package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// RedditPost is one post or comment as read from reddit or an archive.
type RedditPost struct {
	// Post.ExternalID is reddit's fullname (t3_... for a post, t1_... for a
	// comment) whichever source it came from, so one post read once from
	// reddit and once from the archive is the same post.
	Post core.Post
	// Community is the lower-case subreddit the post belongs to.
	Community string
	// CreatedAt is when reddit says the post was made.
	CreatedAt time.Time
}

// RedditListing names one of a community's two streams.
type RedditListing string

// The listings a community is read from.
const (
	RedditPosts    RedditListing = "new"      // /r/NAME/new: posts, newest first
	RedditComments RedditListing = "comments" // /r/NAME/comments: comments, newest first
)

// RedditListings are both listings, in the order a cycle reads them.
var RedditListings = []RedditListing{RedditPosts, RedditComments}

// The ways a read can be answered, most preferred first. They are the
// values of the source label of the reddit metrics, a closed set.
const (
	RedditViaOAuth   = "oauth"   // reddit's JSON through OAuth
	RedditViaJSON    = "json"    // reddit's JSON, keyless
	RedditViaFeed    = "feed"    // reddit's Atom feeds, keyless
	RedditViaArchive = "archive" // the archive (Arctic Shift or PullPush)
)

// RedditVias lists every value a read's Via can take.
var RedditVias = []string{RedditViaOAuth, RedditViaJSON, RedditViaFeed, RedditViaArchive}

// RedditWant is one community of a read and how far back it is wanted.
type RedditWant struct {
	Community string    // bare lower-case name
	Since     time.Time // posts made after it are wanted; zero: the newest page only
}

// RedditQuery is one read: one listing of one or more communities,
// answered by reddit in one merged listing (/r/a+b+c/new).
type RedditQuery struct {
	Listing RedditListing
	Want    []RedditWant
	// Deadline, when set, is the latest a request may start: a read that
	// would wait for reddit's budget past it is not made.
	Deadline time.Time
}

// RedditCover says how much of one community a read saw: every post of
// the listing made after From and up to Until was among the read's
// posts. Complete is From at or before the community's Since (or Since
// zero). A community absent from Covered was not read at all.
type RedditCover struct {
	Community string
	From      time.Time
	Until     time.Time
	Complete  bool
	Posts     int // how many of the read's posts are this community's
}

// RedditRead is what one Read found.
type RedditRead struct {
	Posts   []RedditPost
	Covered []RedditCover
	Source  core.Source // core.SourceReddit (JSON or feeds) or core.SourceMirror (the archive)
	Via     string      // one of RedditVias
	// Refused names, for each way before Via, why it was not used
	// ("json: http 403"); brief and safe to show. A way that rests, or is
	// passed over for these communities, is named too, with the reason of
	// its rest, and marked NotAsked.
	Refused []RedditRefusal
	// Requests is how many requests to reddit the read made (the archive
	// not counted).
	Requests int
	// Remaining is what reddit's X-Ratelimit-Remaining said last for Via,
	// or -1 when unknown.
	Remaining float64
	// ArchiveLag, for an archive read, is how far the archive's newest
	// item of each community was behind the time of the read.
	ArchiveLag map[string]time.Duration
}

// RedditRefusal is one way of reading that did not answer.
type RedditRefusal struct {
	Via    string
	Reason string
	// NotAsked: no request went out through Via for this read (it rests
	// after an earlier refusal); Reason is that refusal's. Only a way
	// asked failed this read: the zero value is a way asked, so a source
	// that never sets it counts every refusal as one.
	NotAsked bool
}

// RedditSource reads reddit.
type RedditSource interface {
	// Read reads one listing of the wanted communities (1 to
	// MaxRedditGroup of them), in one merged listing, page by page until
	// every community's Since is reached or a page cap. It tries, in
	// order, reddit's JSON through OAuth (when credentials are set),
	// keyless JSON, the keyless Atom feeds, and last the archive, which
	// it reads only when reddit itself refused or failed every way (403,
	// 429, 5xx, a time-out, an answer of the wrong shape), now or lately:
	// a way that refused rests across reads, costing no request. Nothing is
	// filtered by phrase: the caller matches. Deleted and removed posts
	// are left out; each post appears once.
	//
	// It spreads its requests to stay inside reddit's budget, so a call
	// may wait; it honours ctx. It is safe for concurrent use.
	//
	// Errors: KindInvalid for a malformed community name or an empty or
	// too large group; KindNotFound when reddit says a community does not
	// exist (404); KindRateLimited when reddit's budget, or the
	// archive's, would only allow the read after q.Deadline (nothing is
	// read; the archive is not asked for reddit's budget); an archive
	// read its budget or a 429 stops part way covers only the
	// communities it read (the rest are absent from Covered);
	// KindUnavailable when every way failed or ctx ended. Errors
	// never carry credentials. With an error, the read's Refused and
	// Requests still say what was tried.
	Read(ctx context.Context, q RedditQuery) (RedditRead, error)
}

// MaxRedditGroup is the most communities one read takes: reddit serves
// /r/a+b+c with about a hundred names, and the address stays short.
const MaxRedditGroup = 100

// RedditCheckpoint is the state of one listing of one community: how far
// it has been read and how its reads went.
type RedditCheckpoint struct {
	Community string
	Listing   RedditListing
	// Until: every post of the listing made up to it has been read (the
	// archive's newest item when the archive answered). Zero: never read.
	Until time.Time
	// Rate is the estimated posts per hour of the listing, from its reads.
	Rate          float64
	LastVia       string // one of RedditVias; empty before the first read
	LastReadAt    time.Time
	LastSuccessAt time.Time
	LastError     string // empty when the last read succeeded
	LastErrorAt   time.Time
	// ArchiveLag is how far behind the archive was at its last read.
	ArchiveLag time.Duration
}

// RedditStore keeps the reddit poller's checkpoints.
type RedditStore interface {
	// RedditCheckpoints returns every stored checkpoint, by community and
	// listing.
	RedditCheckpoints(ctx context.Context) ([]RedditCheckpoint, error)
	// SaveRedditCheckpoints stores the checkpoints, adding those not yet
	// stored. Until never moves back: a stored Until later than the one
	// given is kept. A checkpoint named twice is stored as two calls in
	// turn would store it. KindInvalid for an unknown listing.
	SaveRedditCheckpoints(ctx context.Context, cps []RedditCheckpoint) error
}
