package core

import (
	"math"
	"time"
)

// Intent is what a post's author wants, as the scorer reads it.
type Intent string

// The intents, in the scorer's order from the most to the least a seller
// wants to hear of (Intents lists them; Valid checks one).
const (
	IntentBuying         Intent = "buying"
	IntentRecommendation Intent = "recommendation"
	IntentComplaint      Intent = "complaint"
	IntentQuestion       Intent = "question"
	IntentPraise         Intent = "praise"
	IntentDiscussion     Intent = "discussion"
	IntentPromotion      Intent = "promotion"
)

// Intents lists every intent label.
var Intents = []Intent{IntentBuying, IntentRecommendation, IntentComplaint, IntentQuestion, IntentPraise, IntentDiscussion, IntentPromotion}

// Valid reports whether i is a known intent.
func (i Intent) Valid() bool {
	for _, x := range Intents {
		if x == i {
			return true
		}
	}
	return false
}

// MaxReasonLen is the longest reason, in characters.
const MaxReasonLen = 160

// Score is the verdict on a match.
type Score struct {
	Value  int    // 0 to 100
	Intent Intent // one of Intents
	Reason string // one line naming the cue
}

// MaxPostText is where a match's post text is cut, in characters.
const MaxPostText = 2000

// Post is a social post as stored with a match.
type Post struct {
	ExternalID string // the platform's id; reddit's fullname (t3_..., t1_...)
	Author     string
	Title      string // empty when the post has none
	Text       string
	URL        string
	Likes      int
	Comments   int
	PostedAt   time.Time // zero when unknown
}

// Match is a post that contains one of an owner's phrases.
type Match struct {
	ID        string
	OwnerID   string
	PhraseID  string
	Phrase    string
	Platform  Platform
	CreatedAt time.Time // microsecond precision, strictly increasing per owner
	Score     *Score    // nil until scored
	Post      Post
	// Backfilled marks a match found in the owner's window of recent
	// posts when its phrase was added, rather than as the post was read.
	Backfilled bool
}

// Cut returns s cut to at most n characters.
func Cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// Millis is t in milliseconds since 1970 with a microsecond fraction: the
// form of every ...At field of the public API, and of the paging cursor.
func Millis(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMicro()) / 1000
}

// CursorTime turns a cursor (milliseconds, maybe fractional) back into the
// exact microsecond it came from. KindInvalid names `before`.
func CursorTime(ms float64) (time.Time, error) {
	// 1e15 ms is year 33658: far past any real cursor, well inside float64's
	// exact integers once scaled to microseconds.
	if !(ms > 0 && ms < 1e15) {
		return time.Time{}, Errorf(KindInvalid, "before must be a positive number: the nextCursor of the previous page")
	}
	return time.UnixMicro(int64(math.Round(ms * 1000))).UTC(), nil
}

// The page size of every list of matches.
const (
	DefaultPageLimit = 25
	MaxPageLimit     = 100
)

// PageFilter is the paging and filtering every list of matches shares
// (the API's GET /matches and the dashboard's inbox), checked in one
// place.
type PageFilter struct {
	Limit    int      // 1 to MaxPageLimit; 0 means DefaultPageLimit
	Platform Platform // zero: all
	MinScore *int     // nil: no minimum; else 0 to 100
	Before   float64  // cursor: createdAt in ms of the last match seen; 0: newest
}

// CheckPage checks f and returns its limit (the default filled in), its
// minimum score (-1 for none) and its cursor as a time (zero for none).
// KindInvalid names the parameter out of range.
func CheckPage(f PageFilter) (limit, minScore int, before time.Time, err error) {
	limit, minScore = f.Limit, -1
	if limit == 0 {
		limit = DefaultPageLimit
	}
	if limit < 1 || limit > MaxPageLimit {
		return 0, 0, time.Time{}, Errorf(KindInvalid, "limit must be a whole number from 1 to %d", MaxPageLimit)
	}
	if f.Platform != "" && !f.Platform.Valid() {
		return 0, 0, time.Time{}, Errorf(KindInvalid, "platform must be one of reddit, x, facebook")
	}
	if f.MinScore != nil {
		if *f.MinScore < 0 || *f.MinScore > 100 {
			return 0, 0, time.Time{}, Errorf(KindInvalid, "min_score must be a whole number from 0 to 100")
		}
		minScore = *f.MinScore
	}
	if f.Before != 0 {
		if before, err = CursorTime(f.Before); err != nil {
			return 0, 0, time.Time{}, err
		}
	}
	return limit, minScore, before, nil
}
