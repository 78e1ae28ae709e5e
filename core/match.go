package core

import (
	"math"
	"time"
)

// Intent is what a post's author wants, as the scorer reads it.
type Intent string

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
	Value  int // 0 to 100
	Intent Intent
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
