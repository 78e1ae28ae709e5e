package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// OwnerStore keeps owners.
type OwnerStore interface {
	// CreateOwner stores o, setting its ID and CreatedAt.
	// KindConflict when the email is taken.
	CreateOwner(ctx context.Context, o *core.Owner) error
	// Owner returns the owner with id. KindNotFound when there is none.
	Owner(ctx context.Context, id string) (core.Owner, error)
	// CountOwners returns how many owners exist.
	CountOwners(ctx context.Context) (int, error)
	// Owners lists every owner, oldest first.
	Owners(ctx context.Context) ([]core.Owner, error)
	// UpdateOwner stores o's email and name; a new email voids the
	// owner's address changes and unused sign-in links, as a confirmed
	// change does. KindNotFound when there is no owner o.ID; KindConflict
	// when another owner has the email.
	UpdateOwner(ctx context.Context, o core.Owner) error
	// CreateEmailChange stores c in place of every other change of the
	// owner, pending ones included: an owner has one pending address at
	// a time, the last asked for, so a link to a mistyped address dies
	// when the owner asks again. KindNotFound for an unknown owner.
	CreateEmailChange(ctx context.Context, c core.EmailChange) error
	// UseEmailChange consumes the change stored under hash and gives its
	// owner the new address, in one transaction, so of two requests
	// racing for it one wins. The same transaction removes the owner's
	// other changes and unused sign-in links (SessionStore), so no link
	// left in a mailbox the owner moved away from, or never had, takes
	// the account afterwards. It returns the owner as changed and the
	// address it had. KindNotFound when the change was used, replaced,
	// has expired or is unknown; KindConflict when another owner has the
	// address, and nothing changes: the change stays unused and the
	// links stay.
	UseEmailChange(ctx context.Context, hash string, now time.Time) (o core.Owner, oldEmail string, err error)
}

// KeyStore keeps API and ingest keys by the hash of their secret.
type KeyStore interface {
	// CreateKey stores k, setting its ID and CreatedAt. When the owner
	// already holds max live keys of k's kind (keys of the other kind do
	// not count), nothing is stored and the error is KindPlanLimit, whose
	// message names the kind and says to revoke one first. KindNotFound
	// when the owner does not exist.
	CreateKey(ctx context.Context, k *core.Key, max int) error
	// KeyByHash returns the key whose secret hashes to hash, revoked or not.
	// KindNotFound when there is none (a revoked key deleted by RevokeKey
	// included).
	KeyByHash(ctx context.Context, hash string) (core.Key, error)
	// Keys lists the owner's keys of the kind, oldest first: the live ones
	// and at most core.KeptRevokedKeys revoked ones, the last revoked.
	Keys(ctx context.Context, ownerID string, kind core.KeyKind) ([]core.Key, error)
	// RevokeKey marks the owner's key id revoked at at. Revoking a revoked
	// key changes nothing. In the same transaction it deletes the owner's
	// revoked keys of that kind past the core.KeptRevokedKeys last revoked
	// (latest revoked_at first), so revoked keys never pile up.
	// KindNotFound when id is not the owner's.
	RevokeKey(ctx context.Context, ownerID, id string, at time.Time) error
	// Key returns the owner's key id, revoked or not. KindNotFound when id
	// is not the owner's.
	Key(ctx context.Context, ownerID, id string) (core.Key, error)
	// MarkKeyUsed records that key id authenticated a request at at. A
	// time before the one recorded changes nothing, so the mark never goes
	// back; neither does an unknown id.
	MarkKeyUsed(ctx context.Context, id string, at time.Time) error
}

// Idempotency names a create request the caller may repeat.
type Idempotency struct {
	Key   string    // empty: the request is not idempotent
	Since time.Time // earlier records of the key have expired
}

// PhraseFilter narrows a phrase listing. Zero fields match everything.
type PhraseFilter struct {
	Platform core.Platform
	Status   core.PhraseStatus
}

// PhraseChange is a change of a phrase: a nil Status, or a zero
// Filters, changes nothing of it.
type PhraseChange struct {
	Status  *core.PhraseStatus
	Filters core.PhraseFiltersChange
}

// PhraseStore keeps one owner's phrases, as the owner manages them
// (app.Phrases). Every method is scoped to that owner: another owner's
// phrase is KindNotFound, as an unknown one is.
type PhraseStore interface {
	// CreatePhrase stores p, setting its ID, CreatedAt and LastCheckedAt,
	// after checking limits.CheckNewPhrase against the owner's usage in the
	// same transaction, so concurrent creates cannot pass the limit.
	// With an idempotency key seen since idem.Since, nothing is created: p
	// is replaced by the phrase first created with that key and replayed is
	// true. KindConflict when the owner has the phrase already (same
	// platform, community and folded text); KindPlanLimit past the limit;
	// KindNotFound for an unknown owner.
	CreatePhrase(ctx context.Context, p *core.Phrase, limits core.Limits, idem Idempotency) (replayed bool, err error)
	// Phrase returns one phrase. KindNotFound.
	Phrase(ctx context.Context, ownerID, id string) (core.Phrase, error)
	// Phrases lists the owner's phrases, oldest first.
	Phrases(ctx context.Context, ownerID string, f PhraseFilter) ([]core.Phrase, error)
	// SetPhraseStatus sets the status and returns the phrase. KindNotFound.
	SetPhraseStatus(ctx context.Context, ownerID, id string, s core.PhraseStatus) (core.Phrase, error)
	// UpdatePhrase applies ch to the phrase in one transaction and
	// returns the phrase as it then is: the status when ch sets it, and
	// each filter field ch gives (checked already by
	// core.PhraseFiltersChange.Check) replacing the stored one, the others
	// kept, so two changes of different fields made at once both stay. A
	// change that sets something bumps the owner's phrase version.
	// KindNotFound.
	UpdatePhrase(ctx context.Context, ownerID, id string, ch PhraseChange) (core.Phrase, error)
	// DeletePhrase removes the phrase and its matches. KindNotFound.
	DeletePhrase(ctx context.Context, ownerID, id string) error
	// Usage counts the owner's phrases, accounts and webhooks, and the
	// deployment's owners.
	Usage(ctx context.Context, ownerID string) (core.Usage, error)
}

// ListeningStore is what the readers of posts ask of phrases: the reddit
// poller (app.Reddit, app.RedditHealth) reads the listening phrases of
// every owner, the helper endpoints' ingest (app.Matchers) those of the
// owner whose helper sent posts, and both record which phrases were read.
// Unlike PhraseStore it reaches across owners: ListeningPhrases lists
// every owner's phrases and MarkChecked takes ids of any owner. It is
// safe for concurrent use.
type ListeningStore interface {
	// ListeningPhrases returns every listening phrase of the platform,
	// of every owner, oldest first: the reddit poller's work list.
	ListeningPhrases(ctx context.Context, p core.Platform) ([]core.Phrase, error)
	// OwnerListeningPhrases returns the owner's listening phrases of the
	// platform, oldest first: what a helper's posts are matched against.
	// An unknown owner has none.
	OwnerListeningPhrases(ctx context.Context, ownerID string, p core.Platform) ([]core.Phrase, error)
	// PhraseVersion returns a number that changes whenever the owner's
	// phrases change (create, status, filters, delete), from any process, so a
	// compiled matcher can tell it is stale with one cheap read.
	// KindNotFound for an unknown owner.
	PhraseVersion(ctx context.Context, ownerID string) (int64, error)
	// MarkChecked records that the phrases were read at at from src. An
	// id that names no phrase is passed over.
	MarkChecked(ctx context.Context, ids []string, src core.Source, at time.Time) error
}

// AccountStore keeps owners' connected accounts and their sealed cookie
// jars.
type AccountStore interface {
	// EnsureAccount returns the owner's account on p, connecting one when
	// there is none yet and limits.CheckNewAccount allows it, in one
	// transaction. KindPlanLimit, KindNotFound for an unknown owner.
	EnsureAccount(ctx context.Context, ownerID string, p core.Platform, limits core.Limits) (core.Account, error)
	// SetSession stores a sealed cookie jar on the owner's account.
	// KindNotFound.
	SetSession(ctx context.Context, ownerID, accountID string, sealed []byte) error
	// Session returns the owner's account on p and its sealed jar.
	// KindNotFound when there is no account or no jar.
	Session(ctx context.Context, ownerID string, p core.Platform) (core.Account, []byte, error)
}

// PostMatches is one post of a batch with the ids of the owner's phrases
// it matched (possibly none: the post is still recorded as seen).
type PostMatches struct {
	Post      core.Post
	PhraseIDs []string
	// Keep, when set, keeps a post new to the owner in their window of
	// recent posts (RecentStore), in the batch's transaction.
	Keep *RecentKeep
}

// SaveResult tells what a batch did.
type SaveResult struct {
	Saved   int          // posts new to the owner
	Known   int          // posts the owner had already: skipped
	Matches []core.Match // the matches created, in CreatedAt order
}

// MatchFilter narrows a match listing.
type MatchFilter struct {
	Platform core.Platform // zero: every platform
	MinScore int           // -1: no minimum, unscored included; else scored at or above
	Before   time.Time     // zero: from the newest
	Search   core.Search   // zero: every match
	Limit    int
}

// MatchStore keeps posts and the matches they made. The methods that take
// an owner are scoped to it: another owner's match is KindNotFound, as an
// unknown one is. SetScores and ClaimUnscored are the scoring sweep's and
// take matches of every owner. It is safe for concurrent use, from this
// process and from others on the same database.
type MatchStore interface {
	// SaveMatches stores a batch of posts of one platform for the owner in
	// one transaction. A post whose ExternalID the owner already has on
	// that platform is skipped whole. Each new post gets a match per phrase
	// id, with CreatedAt strictly increasing per owner, and each phrase's
	// match count grows.
	SaveMatches(ctx context.Context, ownerID string, platform core.Platform, batch []PostMatches) (SaveResult, error)
	// Match returns one match. KindNotFound.
	Match(ctx context.Context, ownerID, id string) (core.Match, error)
	// Matches lists matches newest first, at most f.Limit of them, and
	// reports whether older ones exist. A search keeps the matches it
	// finds (core.Search) and pages as the listing does.
	Matches(ctx context.Context, ownerID string, f MatchFilter) (ms []core.Match, more bool, err error)
	// SetScores stores many verdicts in one transaction and returns the
	// matches it scored, in the order of updates. A match scored already
	// keeps its first score, and one that is gone, unknown or not the
	// owner's is passed over; neither is returned, and neither is an
	// error. For each match scored, plan (when not nil) is given the
	// match and every webhook of its owner as they stand in the
	// transaction, and the deliveries it returns are stored in that same
	// transaction, so a stored score never loses its messages and a
	// failed one queues none. The store sets an empty delivery ID; which
	// webhooks get a delivery is the plan's rule, never the store's.
	// Each match scored is added to the daily counts (TrendStore) in the
	// same transaction.
	SetScores(ctx context.Context, updates []ScoreUpdate, plan DeliveryPlan) ([]core.Match, error)
	// ClaimUnscored leases up to limit unscored matches of any owner whose
	// lease has run out, oldest first, for lease: the scoring sweep's
	// work. Concurrent claims, from this process or another, never return
	// the same match while its lease runs; a scored match is never
	// returned; a match whose lease ran out (a negative lease runs out at
	// once) is claimed again.
	ClaimUnscored(ctx context.Context, limit int, lease time.Duration) ([]core.Match, error)
}

// ScoreUpdate is one verdict for SetScores. Match names the match by its
// OwnerID and ID, and is what SetScores returns and hands the plan, its
// Score set, once the verdict is stored: the copy the caller read serves,
// since nothing of a stored match but its score ever changes.
type ScoreUpdate struct {
	Match core.Match
	Score core.Score
}

// DeliveryPlan decides what a match just scored queues: given the match,
// its score set, every webhook of its owner and the store's time, it
// returns the deliveries to store. core.QueueMatchCreated is the rule the
// application hands in.
type DeliveryPlan func(m core.Match, hooks []core.Webhook, at time.Time) []core.Delivery

// MatchQuery is a page request for an owner's matches, as the public API
// takes it.
type MatchQuery struct {
	Limit    int           // 1 to 100; 0 means the default 25
	Platform core.Platform // zero: all
	MinScore *int          // nil: no minimum; else 0 to 100, unscored left out
	Before   float64       // cursor: createdAt in ms of the last match seen; 0: newest
	Q        string        // a search (core.ParseSearch); empty: none
}

// MatchPage is one page, newest first. Next is the cursor of the next page,
// nil when nothing older exists.
type MatchPage struct {
	Matches []core.Match
	Next    *float64
}
