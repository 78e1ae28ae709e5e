package core

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// PhraseStatus says whether a phrase is matched against new posts.
type PhraseStatus string

const (
	Listening PhraseStatus = "listening" // matched against every new post
	Paused    PhraseStatus = "paused"    // kept, but matched against nothing
)

// Valid reports whether s is a known status.
func (s PhraseStatus) Valid() bool { return s == Listening || s == Paused }

// Source says where a phrase's posts were last read from.
type Source string

const (
	SourceReddit Source = "reddit" // the server's own reddit reader
	SourceMirror Source = "mirror" // an archive of reddit the server reads when reddit itself is not read
	SourceHelper Source = "helper" // posts a helper program sent to the ingest endpoints
)

// MaxPhraseLen is the longest phrase accepted, in characters.
const MaxPhraseLen = 100

// Phrase is a tracked phrase (a "keyword" on the wire) of one owner.
type Phrase struct {
	ID            string
	OwnerID       string
	Phrase        string
	Platform      Platform
	Community     string // subreddit name for reddit phrases, empty otherwise
	Status        PhraseStatus
	Matches       int
	LastCheckedAt time.Time
	LastSource    Source
	CreatedAt     time.Time
	Filters       PhraseFilters // what vetoes a post the phrase is found in; zero: nothing
}

// NewPhrase validates and normalises the parts of a phrase as a caller sent
// them and returns it listening. It applies the rules every entry point
// shares: the API, the admin console and anything embedding core.
func NewPhrase(ownerID, phrase, platform, community string) (Phrase, error) {
	p, err := ParsePlatform("platform", platform)
	if err != nil {
		return Phrase{}, err
	}
	text, err := NormalizePhrase(phrase)
	if err != nil {
		return Phrase{}, err
	}
	var comm string
	switch {
	case p == Reddit && strings.TrimSpace(community) == "":
		return Phrase{}, Errorf(KindInvalid, "community is required for reddit phrases")
	case p == Reddit:
		if comm, err = NormalizeCommunity(community); err != nil {
			return Phrase{}, err
		}
	case strings.TrimSpace(community) != "":
		return Phrase{}, Errorf(KindInvalid, "community is only allowed for reddit phrases")
	}
	src := SourceHelper
	if p == Reddit {
		src = SourceReddit
	}
	return Phrase{OwnerID: ownerID, Phrase: text, Platform: p, Community: comm, Status: Listening, LastSource: src}, nil
}

// NormalizePhrase trims s (of white space and of the invisible characters
// of blankEdge), folds every run of white space into one space and
// checks the length (1 to 100 characters) and that no control character is
// left.
func NormalizePhrase(s string) (string, error) {
	text, problem := normalizeText(s)
	if problem != "" {
		return "", Errorf(KindInvalid, "phrase %s", problem)
	}
	return text, nil
}

// normalizeText is NormalizePhrase for any text held to a phrase's rules
// (a phrase, a filter's word): the text, or what is wrong with it, said
// after the field's name.
func normalizeText(s string) (string, string) {
	if !utf8.ValidString(s) {
		return "", "must be valid UTF-8"
	}
	var b strings.Builder
	space := false
	n := 0
	for _, r := range strings.TrimFunc(s, blankEdge) {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if unicode.IsControl(r) {
			return "", "must not contain control characters"
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	switch {
	case n == 0:
		return "", "must not be empty"
	case n > MaxPhraseLen:
		return "", fmt.Sprintf("must be at most %d characters", MaxPhraseLen)
	}
	return b.String(), ""
}

// blankEdge reports whether r is trimmed from the edges of a phrase: white
// space, and the invisible characters a paste brings along (a byte order
// mark, a zero-width space, a word joiner, a direction mark or other
// bidirectional control). Left on, they make a phrase that reads "acme"
// but matches only posts that hold them too. Inside a phrase they stay:
// there a joiner may belong to an emoji sequence or a Persian word. At an
// edge a joiner or non-joiner (U+200C, U+200D) joins nothing, and a soft
// hyphen, a combining grapheme joiner, the Mongolian vowel separator and
// the invisible operators (U+2061 to U+2064) show nothing either.
func blankEdge(r rune) bool {
	switch r {
	case '\u00ad', '\u034f', '\u180e', '\u200b', '\u200c', '\u200d', '\u2060', '\u2061', '\u2062', '\u2063', '\u2064', '\ufeff':
		return true
	}
	return unicode.IsSpace(r) || unicode.Is(unicode.Bidi_Control, r)
}

// NormalizeCommunity accepts a subreddit as `name`, `r/name` or `/r/name`
// (a trailing slash allowed) and returns the bare name in lower case, as
// reddit treats names without regard to case.
func NormalizeCommunity(s string) (string, error) {
	name := strings.TrimSuffix(strings.TrimSpace(s), "/")
	name = strings.TrimPrefix(name, "/")
	if len(name) > 2 && (name[0] == 'r' || name[0] == 'R') && name[1] == '/' {
		name = name[2:]
	}
	if len(name) < 3 || len(name) > 21 {
		return "", Errorf(KindInvalid, "community must be a subreddit name of 3 to 21 letters, digits or underscores")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "", Errorf(KindInvalid, "community must be a subreddit name of 3 to 21 letters, digits or underscores")
		}
	}
	return strings.ToLower(name), nil
}

// FoldRune maps r to one representative of its Unicode simple case-folding
// orbit, so two runes fold equal exactly when they are equal under simple
// folding. The representative is the lower-case ASCII letter where the
// orbit holds one (so K, k and the Kelvin sign all give k), otherwise the
// smallest rune of the orbit.
func FoldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	min := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < min {
			min = f
		}
	}
	if min < utf8.RuneSelf {
		return FoldRune(min)
	}
	return min
}

// FoldKey returns s with every rune folded as the matcher compares
// characters (MatchFold: a typed variant read as its ASCII character, then
// FoldRune): the form in which two phrases are compared for duplicates.
// Two phrases of one key are found in the same posts, so "Joe’s" is a
// duplicate of "Joe's" and "ＡＣＭＥ" of "acme". The store keeps the key of
// each phrase (a schema step brings older keys to this one).
func FoldKey(s string) string {
	return strings.Map(MatchFold, s)
}

// CheckIdempotencyKey checks an Idempotency-Key: 1 to 64 characters of
// letters, digits and _ . : -.
func CheckIdempotencyKey(k string) error {
	if len(k) < 1 || len(k) > 64 {
		return Errorf(KindInvalid, "Idempotency-Key must be 1 to 64 characters")
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return Errorf(KindInvalid, "Idempotency-Key may hold only letters, digits and _ . : -")
		}
	}
	return nil
}
