// Package score rates a match without a model: a table of weighted cues
// (phrases such as "looking for", "alternative to", "cancel my
// subscription", "we're hiring") decides the intent, and the intent's band
// and the strength of the evidence decide the score.
//
// The scale is a seller's: someone about to buy or asking what to use
// scores highest, a complaint (often about a competitor) next, then
// questions, praise and plain discussion, and promotion, spam and job posts
// lowest. The rules are pure and instant, so they also serve as the
// fallback when a remote model fails.
package score

import (
	"context"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// Rules is the rule-based scorer. Its method set matches ports.Scorer.
type Rules struct{}

// Score rates m with Rate. It never fails and does not wait on ctx:
// rating is pure computation, which is also why it is safe to call as a
// fallback after a remote scorer's deadline has passed.
func (Rules) Score(_ context.Context, m core.Match) (core.Score, error) {
	return Rate(m.Phrase, m.Post), nil
}

// band is the score range of an intent. Stronger evidence moves the score
// from lo towards hi, except for promotion, where stronger evidence means
// more certain spam and moves it down.
type band struct{ lo, hi int }

var bands = map[core.Intent]band{
	core.IntentBuying:         {72, 90},
	core.IntentRecommendation: {72, 90},
	core.IntentComplaint:      {50, 74},
	core.IntentQuestion:       {38, 58},
	core.IntentPraise:         {24, 44},
	core.IntentDiscussion:     {15, 32},
	core.IntentPromotion:      {2, 16},
}

// saturation is the evidence (sum of cue weights) at which a score reaches
// the far end of its band; it takes three firm cues to get there, so one
// clear ask lands mid-band.
const saturation = 15

// nearBonus is added when the deciding cue sits close to the tracked
// phrase: "alternatives to mailchimp" says more about mailchimp than a
// cue three sentences away.
const (
	nearBonus = 3
	nearBytes = 60
)

// maxScan caps the text the cues run over. Stored posts are cut at
// core.MaxPostText characters already; the cap bounds the cost of an
// oversized input handed to Rate directly.
const maxScan = 4 * core.MaxPostText

// Lengths the reason quotes at most, so that it always fits
// core.MaxReasonLen.
const (
	maxQuotedCue    = 60
	maxQuotedPhrase = 40
)

// preference breaks ties between intents with equal evidence: a spam cue
// outweighs a lead cue of the same weight, and a lead outweighs chatter.
var preference = []core.Intent{
	core.IntentPromotion,
	core.IntentRecommendation,
	core.IntentBuying,
	core.IntentComplaint,
	core.IntentPraise,
	core.IntentQuestion,
	core.IntentDiscussion,
}

// Rate scores a post that matched phrase. The verdict's value is within
// 0 to 100, its intent is one of core.Intents and its reason is a single
// line of at most core.MaxReasonLen characters naming the deciding cue.
func Rate(phrase string, post core.Post) core.Score {
	// The matcher searches the title and the text apart, so the phrase
	// is never found across the space that joins them (split).
	title, body := normalise(post.Title), normalise(post.Text)
	text, split := title+body, -1
	if title != "" && body != "" {
		text, split = title+" "+body, len(title)
	}
	text = cutBytes(text, maxScan)
	valid := utf8.ValidString(phrase)
	phrase = normalise(phrase)

	evidence := map[core.Intent]int{}
	top := map[core.Intent]hit{}
	// turned is what praise and complaint after the turn of their
	// sentence add if the post holds both: the turn tells which of the
	// two the writer means, not that a mood outweighs a question.
	turned := map[core.Intent]int{}
	var names []string // other products the post names; nil: not yet looked
	add := func(intent core.Intent, h hit) {
		extra := 0
		if intent == core.IntentComplaint || intent == core.IntentPraise {
			if names == nil {
				names = otherNames(post, phrase)
			}
			if valid && aboutOther(text, phrase, split, names, h.start, h.end) {
				h.weight = max(1, h.weight/otherDivisor)
			}
			switch stressed, claim := turnBefore(text, h.start); {
			case claim:
				h.weight *= turnWeight
			case stressed:
				extra = h.weight * (turnWeight - 1)
				turned[intent] += extra
			}
		}
		evidence[intent] += h.weight
		h.weight += extra
		if t, ok := top[intent]; !ok || h.weight > t.weight {
			top[intent] = h
		}
	}
	tagged := -1   // whether the post marks itself sarcastic; -1: not yet looked
	stays := false // whether a withdrawn plan has counted
	for _, c := range cues {
		loc := c.find(text)
		if loc == nil {
			continue
		}
		if c.plan {
			stays = readPlan(text, c, loc, stays, add)
			continue
		}
		if !c.mood {
			add(c.intent, hit{weight: c.weight, why: c.why, start: loc[0], end: loc[1]})
			continue
		}
		if tagged < 0 && c.intent == core.IntentPraise {
			tagged = 0
			if sarcasmTagged(text) {
				tagged = 1
			}
		}
		readMood(text, c, loc, tagged == 1, add)
	}

	if evidence[core.IntentPraise] > 0 && evidence[core.IntentComplaint] > 0 {
		evidence[core.IntentPraise] += turned[core.IntentPraise]
		evidence[core.IntentComplaint] += turned[core.IntentComplaint]
	}

	intent := core.IntentDiscussion
	best := 0
	for _, i := range preference {
		if evidence[i] > best {
			intent, best = i, evidence[i]
		}
	}
	if best == 0 {
		b := bands[core.IntentDiscussion]
		return core.Score{
			Value:  b.lo,
			Intent: core.IntentDiscussion,
			Reason: reason("mentions "+quote(phrase, maxQuotedPhrase)+" with no buying, support or sales cue", "", ""),
		}
	}

	b := bands[intent]
	strength := min(best, saturation)
	value := b.lo + (b.hi-b.lo)*strength/saturation
	if intent == core.IntentPromotion {
		value = b.hi - (b.hi-b.lo)*strength/saturation
	}
	h := top[intent]
	near := ""
	if intent != core.IntentPromotion && valid && nearPhrase(text, phrase, split, h.start, h.end) {
		value = min(value+nearBonus, b.hi)
		near = phrase
	}
	return core.Score{
		Value:  max(0, min(100, value)),
		Intent: intent,
		Reason: reason(h.why, ownWords(post, title, split, h.start, h.end), near),
	}
}

// hit is where a cue matched in the normalised text, the weight it
// counts with and how the reason names it.
type hit struct {
	weight     int
	why        string
	start, end int
}

// maxWithdrawn is the most a withdrawn plan counts for discussion: as
// much as "decided against", whatever the plan weighed.
const maxWithdrawn = 3

// readPlan counts a plan (cue.plan) matched at loc for its intent, or,
// with a negator before it in its clause, for discussion: "not looking
// to buy" is no purchase. Withdrawn plans count once a post (stays says
// one has), since one withdrawal often matches several plans ("not
// looking to buy" holds "buy"); so "never going to buy it again" still
// reads as swearing off. It returns whether a withdrawn plan has counted.
func readPlan(text string, c cue, loc []int, stays bool, add func(core.Intent, hit)) bool {
	at := negationBefore(text, loc[0], loc[1])
	if at < 0 {
		add(c.intent, hit{weight: c.weight, why: c.why, start: loc[0], end: loc[1]})
		return stays
	}
	if !stays {
		add(core.IntentDiscussion, hit{weight: min(c.weight, maxWithdrawn), why: withdrawn[c.intent], start: at, end: loc[1]})
	}
	return true
}

// maxReadings bounds the matches of one mood cue read in a post: once
// one plain and one turned match have counted none else does, and a post
// that repeats the same word more often than this is read by its first
// few.
const maxReadings = 4

// readMood counts a word of praise or complaint (cue.mood) as its
// matches read: once for its own intent at the first plain match, and
// once for the opposite one at the first match that is negated or, for
// praise, sarcastic, whichever comes first ("great camera, not great
// battery" counts both). Praise asked about ("is it great?") counts for
// nothing. tagged says the post marks itself sarcastic ("/s", 🙄).
func readMood(text string, c cue, loc []int, tagged bool, add func(core.Intent, hit)) {
	counted, flipped := false, false
	for n := 0; ; n++ {
		start, end := loc[0], loc[1]
		from, why, sense := reading(text, c.intent, start, end, tagged)
		switch sense {
		case plain:
			if !counted {
				counted = true
				add(c.intent, hit{weight: c.weight, why: c.why, start: start, end: end})
			}
		case turned:
			if !flipped {
				flipped = true
				add(opposite(c.intent), hit{weight: c.weight, why: why, start: from, end: end})
			}
		}
		if (counted && flipped) || n+1 == maxReadings || end >= len(text) {
			return
		}
		// A cue that matched nothing (an empty match) moves on a byte.
		next := max(end, start+1)
		more := c.find(text[next:])
		if more == nil {
			return
		}
		loc = []int{next + more[0], next + more[1]}
	}
}

func opposite(i core.Intent) core.Intent {
	if i == core.IntentPraise {
		return core.IntentComplaint
	}
	return core.IntentPraise
}

// sense is how a mood cue's match reads.
type sense int

const (
	plain  sense = iota // as the word says
	turned              // the other way: negated, or praise said in sarcasm
	asked               // praise inside a question, which praises nothing
)

// negationWords is how many words before a mood word a negator may
// stand and still govern it: "not great", "isn't that great", "not
// very happy with", but not a "not" three words further back.
const negationWords = 3

// reading says how the match [start, end) of a mood cue of intent reads
// and, when it is turned, where the words that turn it start and how the
// reason names it. A match that holds a negator itself ("couldn't be
// happier") was written with it and reads plain.
func reading(text string, intent core.Intent, start, end int, tagged bool) (from int, why string, s sense) {
	if hasNegator(text[start:end]) {
		return start, "", plain
	}
	if at := negationBefore(text, start, end); at >= 0 {
		return at, whyOf[opposite(intent)], turned
	}
	if intent != core.IntentPraise {
		return start, "", plain
	}
	if at := sarcasmBefore(text, start, end); at >= 0 {
		return at, "is sarcastic", turned
	}
	if tagged || sarcasmAfter(text[end:]) {
		return start, "is sarcastic", turned
	}
	if questionAfter(text[end:]) {
		if _, claim := turnBefore(text, start); !claim {
			return start, "", asked
		}
	}
	return start, "", plain
}

// turnWeight multiplies a word of praise or complaint that follows the
// turn of its sentence, in a post that both praises and complains: in
// "love the sound, but support never replied" the part after "but" is
// what the writer means. A claim after "is it just me or" is multiplied
// in any post: it outweighs the chatter cue of its own words.
const turnWeight = 2

// sentenceBytes bounds how far back turnBefore looks for the turn: a
// long sentence, never the whole post.
const sentenceBytes = 200

// turnBefore reports whether, in the sentence up to at, a turn stands
// before at: "but", "however", or "although" or "though" in the middle
// of the sentence (one that opens the sentence is the concession, so the
// turn is the comma that ends it). claim says the turn is the "or" of
// "is it just me or", which asks others to agree with what follows: it
// is said, not asked.
func turnBefore(text string, at int) (stressed, claim bool) {
	base := max(0, at-sentenceBytes)
	before := text[base:at]
	next, comma := "", false
	for {
		before = strings.TrimRight(before, " ")
		if before == "" {
			return false, false
		}
		i := strings.LastIndexByte(before, ' ') + 1
		raw := before[i:]
		if endsSentence(raw) {
			return false, false
		}
		switch w := strings.Trim(raw, `"'()*_,:`); w {
		case "but", "however":
			return true, false
		case "although", "though":
			return !opensSentence(before[:i]) || comma, false
		case "me":
			if next == "or" {
				rest := strings.TrimRight(before[:i], " ")
				switch rest[strings.LastIndexByte(rest, ' ')+1:] {
				case "just", "only", "it":
					return true, true
				}
			}
		default:
			next = w
		}
		comma = comma || strings.HasSuffix(raw, ",")
		before = before[:i]
	}
}

// endsSentence reports whether the word w closes a sentence.
func endsSentence(w string) bool {
	r, _ := utf8.DecodeLastRuneInString(w)
	return strings.ContainsRune(".;!?…", r)
}

// opensSentence reports whether what follows before starts a sentence.
func opensSentence(before string) bool {
	before = strings.TrimRight(before, " ")
	return before == "" || endsSentence(before)
}

// scanBytes bounds how far before or after a match the reading looks:
// a few words, never the whole post.
const scanBytes = 80

// negationBefore returns where a negator starts that governs the match
// [start, end), or -1. It looks at most negationWords words back (further
// for a negated verb of raising) and not past the clause: a comma, a full stop or a "but" ends the negation's
// reach ("not cheap, but great"). "not only", "not just", "no doubt",
// "no wonder" and "nothing but" negate nothing, nor does "can't ...
// enough" ("can't recommend it enough").
func negationBefore(text string, start, end int) int {
	base := max(0, start-scanBytes)
	before := text[base:start]
	next := ""
	for n := 0; ; n++ {
		before = strings.TrimRight(before, " ")
		if before == "" {
			return -1
		}
		i := strings.LastIndexByte(before, ' ') + 1
		raw := before[i:]
		if endsClause(raw) {
			return -1
		}
		w := strings.Trim(raw, `"'()*_`)
		switch w {
		case "but", "though", "although", "however", "yet":
			return -1
		}
		if isNegator(w) && (n < negationWords || raising[next]) && !idiom(w, next, text[end:]) {
			return base + i
		}
		next, before = w, before[:i]
		if n+1 == negationWords && !raising[next] && !containsAny(before, raisingWords) {
			return -1
		}
	}
}

// raising are the verbs whose negation negates the clause they lead,
// past negationWords: "I don't think the acme app is great" says it is
// not great. The reach still ends with the clause and scanBytes.
var raising = map[string]bool{
	"think": true, "believe": true, "feel": true, "expect": true, "suppose": true,
}

// raisingWords are the keys of raising, to skip the longer walk where
// none occurs.
var raisingWords = slices.Collect(maps.Keys(raising))

// idiom reports whether the negator w, followed by the word next and
// then the match and after, is one of the turns of phrase that negate
// nothing.
func idiom(w, next, after string) bool {
	switch w {
	case "not":
		return next == "only" || next == "just"
	case "no":
		return next == "doubt" || next == "wonder"
	case "nothing":
		return next == "but"
	case "can't", "canʼt", "cant", "cannot", "couldn't", "couldnʼt", "couldnt":
		for _, a := range clauseWords(after, 4) {
			if a == "enough" {
				return true
			}
		}
	}
	return false
}

// negators are the words that negate what follows them, besides every
// word ending in "n't".
var negators = map[string]bool{
	"no": true, "not": true, "never": true, "nothing": true, "none": true,
	"nobody": true, "without": true, "zero": true, "hardly": true,
	"barely": true, "neither": true, "nor": true, "cannot": true,
	// The contractions as typed without the apostrophe.
	"dont": true, "doesnt": true, "didnt": true, "isnt": true, "wasnt": true,
	"arent": true, "werent": true, "cant": true, "couldnt": true,
	"wouldnt": true, "shouldnt": true, "wont": true, "aint": true,
	"havent": true, "hasnt": true, "hadnt": true,
}

func isNegator(w string) bool {
	return negators[w] || strings.HasSuffix(w, "n't") || strings.HasSuffix(w, "nʼt")
}

// hasNegator reports whether any word of s is a negator.
func hasNegator(s string) bool {
	for w := range strings.FieldsSeq(s) {
		if isNegator(strings.Trim(w, `"'()*_,.;:!?…`)) {
			return true
		}
	}
	return false
}

// endsClause reports whether the word w closes a clause, so that
// nothing before it governs what follows.
func endsClause(w string) bool {
	if w == "—" || w == "–" || w == "-" {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(w)
	return strings.ContainsRune(",.;:!?…", r)
}

// clauseWords returns up to n words at the start of s, stopping after
// the word that ends the clause, each without its punctuation.
func clauseWords(s string, n int) []string {
	s = cutBytes(s, scanBytes)
	var out []string
	for w := range strings.FieldsSeq(s) {
		if len(out) == n {
			break
		}
		out = append(out, strings.Trim(w, `"'()*_,.;:!?…`))
		if endsClause(w) {
			break
		}
	}
	return out
}

// sarcasmBefore returns where a word starts that, right before the
// praise [start, end), marks it as sarcastic, or -1: "oh" before a bare
// exclamation ("oh great", not "oh, I love acme"), and "gotta" before
// love of something that happens ("gotta love paying twice", "gotta love
// how it logs me out"), not of a thing ("you gotta love acme").
func sarcasmBefore(text string, start, end int) int {
	base := max(0, start-scanBytes)
	before := strings.TrimRight(text[base:start], " ")
	i := strings.LastIndexByte(before, ' ') + 1
	switch strings.TrimRight(before[i:], ",.!") {
	case "oh":
		if exclamations[text[start:end]] {
			return base + i
		}
	case "gotta":
		if lovesWhatHappens(text[start:]) {
			return base + i
		}
	}
	return -1
}

// exclamations are the words of praise that, alone after "oh", say the
// opposite.
var exclamations = map[string]bool{
	"great": true, "amazing": true, "awesome": true, "fantastic": true,
	"brilliant": true, "excellent": true, "incredible": true,
}

// lovesWhatHappens reports whether the words from love on love something
// that happens, an -ing word or "how", "when", "that" or "the way" ("love
// paying", "love it when"), which after "gotta" is said of a nuisance,
// rather than a thing ("love acme", "love everything about it").
func lovesWhatHappens(love string) bool {
	w := clauseWords(love, 4)
	if len(w) < 2 || w[0] != "love" {
		return false
	}
	what := w[1:]
	if what[0] == "it" && len(what) > 1 {
		what = what[1:]
	}
	switch what[0] {
	case "how", "when", "whenever", "that":
		return true
	case "the":
		return len(what) > 1 && what[1] == "way"
	}
	return strings.HasSuffix(what[0], "ing") && !strings.HasSuffix(what[0], "thing")
}

// sarcasmAfter reports whether the words after praise mark it as
// sarcastic: "great, another outage".
func sarcasmAfter(after string) bool {
	w := clauseWords(strings.TrimLeft(after, ",.!… "), 1)
	return len(w) == 1 && w[0] == "another"
}

// sarcasmTagged reports whether the post marks itself sarcastic: the
// "/s" tag as a word of its own, or the eye roll 🙄.
func sarcasmTagged(text string) bool {
	if strings.Contains(text, "🙄") {
		return true
	}
	if !strings.Contains(text, "/s") {
		return false
	}
	for w := range strings.FieldsSeq(text) {
		if strings.TrimRight(w, ".!)") == "/s" {
			return true
		}
	}
	return false
}

// questionAfter reports whether the sentence that goes on in after ends
// with a question mark.
func questionAfter(after string) bool {
	after = cutBytes(after, 2*scanBytes)
	i := strings.IndexAny(after, ".!?…")
	return i >= 0 && after[i] == '?'
}

// reason builds `why: "cue"` with ` near "phrase"` when proximity counted,
// and guarantees the one-line, length-limited form.
func reason(why, matched, near string) string {
	r := why
	if matched != "" {
		r += ": " + quote(matched, maxQuotedCue)
	}
	if near != "" {
		r += " near " + quote(near, maxQuotedPhrase)
	}
	return core.Cut(singleLine(r), core.MaxReasonLen)
}

func quote(s string, n int) string {
	s = singleLine(s)
	if strings.Contains(s, "  ") {
		s = strings.Join(strings.Fields(s), " ")
	}
	if utf8.RuneCountInString(s) > n {
		s = core.Cut(s, n-1) + "…"
	}
	return `"` + s + `"`
}

// singleLine replaces every control or space character by a plain space,
// so nothing in a reason can break a line (U+2028 included), and drops
// the bidirectional controls: one left open in a quoted post would turn
// the rest of the line around wherever the reason is shown.
func singleLine(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r) || unicode.IsSpace(r) || r == '\u2028' || r == '\u2029':
			return ' '
		case unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, s)
}

// normalise makes each run of white space one space (none at either
// end), reads typographic apostrophes and full-width forms of ASCII
// characters as the ASCII ones, as the matcher does (core.VariantRune),
// and lower-cases letters, so that the cues, written in lower case with
// single spaces, read "Don’t" and "ＢＵＹ" too. It leaves out the
// characters a reader does not see, which the matcher reads as if absent
// (core.Invisible), so "alter\u00adnatives" is "alternatives" and
// "acme\u200e crm" is "acme crm". Every character keeps
// its meaning to the matcher (core.MatchFold and core.NeedsBoundary
// give what they give for the original), so where the phrase occurs in
// the result the matcher finds it in s: a letter whose lower case folds
// differently is kept ("İ" is neither "i" nor "ı" under simple folding),
// and the modifier letter apostrophe ʼ, a letter to the matcher, stays
// (the cues accept it where they have an apostrophe). Invalid UTF-8
// becomes U+FFFD.
func normalise(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := true // drops leading space
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
				space = true
			}
			continue
		}
		if core.Invisible(r) {
			continue
		}
		b.WriteRune(normalRune(r))
		space = false
	}
	return strings.TrimRight(b.String(), " ")
}

// normalRune is what normalise writes for a character other than space.
func normalRune(r rune) rune {
	r = core.VariantRune(r)
	if l := unicode.ToLower(r); l != r && core.FoldRune(l) == core.FoldRune(r) {
		return l
	}
	return r
}

// ownWords returns the words of the post that the span [start, end) of
// the text Rate reads (the normalised title, a space at split if both are
// there, the normalised body) was made from, so that the reason quotes
// the writer rather than the lower-cased copy the cues read.
func ownWords(post core.Post, title string, split, start, end int) string {
	switch {
	case split < 0 && title == "":
		return source(post.Text, start, end)
	case split < 0 || end <= split:
		return source(post.Title, start, end)
	case start > split:
		return source(post.Text, start-split-1, end-split-1)
	}
	return source(post.Title, start, split) + " " + source(post.Text, 0, end-split-1)
}

// source returns the part of s that normalise(s) turned into the bytes
// [start, end) of its result.
func source(s string, start, end int) string {
	from, n, space := len(s), 0, true
	for i, r := range s {
		size := 0 // what r adds to normalise(s)
		switch {
		case unicode.IsSpace(r):
			if !space {
				size = 1
			}
			space = true
		case r < utf8.RuneSelf: // ASCII stays ASCII
			size, space = 1, false
		case core.Invisible(r): // left out
		default:
			size, space = utf8.RuneLen(normalRune(r)), false
		}
		if size == 0 {
			continue
		}
		if n >= start && from == len(s) {
			from = i
		}
		if n >= end {
			return s[from:i]
		}
		n += size
	}
	return s[from:]
}

// cutBytes cuts s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// nearPhrase reports whether an occurrence of phrase lies within
// nearBytes of the span [start, end) of text, both normalised. An
// occurrence is one the matcher would find: characters compare as it
// folds them (core.MatchFold), and where the phrase's edge and the
// text's character beside it both ask for a word boundary
// (core.NeedsBoundary), the text has none there, so "ai" inside "again"
// is not one while "東京" in "東京タワー" is. An occurrence never spans the byte split, the space
// that joins the title and the text (-1: none).
func nearPhrase(text, phrase string, split, start, end int) bool {
	return phraseNear(text, phrase, split, start-nearBytes-len(phrase), end+nearBytes+len(phrase), start, end) >= 0
}

// phraseNear returns how many bytes from the span [start, end) of text
// the nearest occurrence of phrase inside [from, to) lies (0: touching or
// overlapping), or -1 if there is none; occurrences as in nearPhrase.
func phraseNear(text, phrase string, split, from, to, start, end int) int {
	want := []rune(phrase)
	if len(want) == 0 {
		return -1
	}
	for i, r := range want {
		want[i] = core.MatchFold(r)
	}
	edgeBefore, edgeAfter := core.NeedsBoundary(want[0]), core.NeedsBoundary(want[len(want)-1])
	from, to = max(0, from), min(len(text), to)
	for from < to && !utf8.RuneStart(text[from]) {
		from++
	}
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to++
	}
	// The window is folded once, so that trying each place in it costs
	// comparisons only; the window is at most the scanned text.
	var got []rune
	var offs []int // where each rune of got starts in text, then to
	for i := from; i < to; {
		r, size := utf8.DecodeRuneInString(text[i:])
		got = append(got, core.MatchFold(r))
		offs = append(offs, i)
		i += size
	}
	offs = append(offs, to)
	nearest := -1
	for k := 0; k+len(want) <= len(got); k++ {
		if !slices.Equal(got[k:k+len(want)], want) {
			continue
		}
		at, stop := offs[k], offs[k+len(want)]
		if at <= split && split < stop {
			continue
		}
		before, _ := utf8.DecodeLastRuneInString(text[:at])
		after, _ := utf8.DecodeRuneInString(text[stop:])
		if !(edgeBefore && at > 0 && core.NeedsBoundary(before)) && !(edgeAfter && stop < len(text) && core.NeedsBoundary(after)) {
			if d := gap(at, stop, start, end); nearest < 0 || d < nearest {
				nearest = d
			}
		}
	}
	return nearest
}

// gap is how many bytes lie between the spans [a, b) and [start, end).
func gap(a, b, start, end int) int {
	return max(0, a-end, start-b)
}

// otherDivisor divides the weight of praise or complaint said of another
// product than the phrase (aboutOther): "Salesforce was a nightmare;
// Pipedrive is great" is praise of pipedrive. A word keeps a weight of
// at least 1: a name read wrongly ("acme is Really great") must not make
// the praise vanish.
const otherDivisor = 3

// maxNames bounds the other products otherNames collects from a post.
const maxNames = 8

// otherNames returns, normalised, up to maxNames words the post writes
// with a capital inside a sentence (names, as "from Salesforce to
// Pipedrive"), leaving out the phrase's words, "I", words in capitals,
// days, months (notNames), and the words after the first of a run
// ("Google Calendar" names google, not every calendar). A line, and what
// follows a word with no letter or digit (an emoji, a dash) or an opening
// bracket or quote, starts as a sentence does: phones capitalise there.
// A run that holds a small word is title case or emphasis and names
// nothing ("Setup Is Really Terrible"), and a name the words beside it
// mark as a person's ("I asked Sarah", "Sarah said") is no product
// wherever the post writes it.
func otherNames(post core.Post, phrase string) []string {
	out, people := []string{}, []string{}
	for _, s := range []string{post.Title, post.Text} {
		for line := range strings.Lines(cutBytes(s, maxScan)) {
			var words []string // the line's words, once a name needs its neighbours
			var titled []bool  // titleCase of the run each word starts, once needed
			opens, run, k := true, false, -1
			for w := range strings.FieldsSeq(line) {
				k++
				bare := strings.TrimLeft(w, openers)
				starts, inRun := opens || bare != w, run
				opens = endsSentence(w) || strings.HasSuffix(w, ":") || !strings.ContainsFunc(w, isWordRune)
				r, _ := utf8.DecodeRuneInString(bare)
				run = unicode.IsUpper(r) && !opens && !strings.HasSuffix(w, ",")
				if starts || inRun {
					continue
				}
				name := strings.Trim(w, `"'()*_,.;:!?…[]`)
				name = strings.TrimSuffix(strings.TrimSuffix(name, "'s"), "’s")
				if r, _ := utf8.DecodeRuneInString(name); !unicode.IsUpper(r) || name == strings.ToUpper(name) ||
					strings.HasPrefix(name, "I'") || strings.HasPrefix(name, "I’") {
					continue
				}
				name = normalise(name)
				if words == nil {
					words = strings.Fields(line)
				}
				if person(words, k) {
					if len(people) < maxNames && !slices.Contains(people, name) {
						people = append(people, name)
					}
					continue
				}
				if notNames[name] || phraseWord(phrase, name) || slices.Contains(out, name) {
					continue
				}
				if titled == nil {
					titled = titleCase(words)
				}
				if titled[k] {
					continue
				}
				if len(out) < maxNames {
					out = append(out, name)
				}
			}
		}
	}
	return slices.DeleteFunc(out, func(n string) bool { return slices.Contains(people, n) })
}

// smallWords are words of grammar and of stress. Written with a capital
// inside a sentence they are title case ("This Is The Best") or emphasis
// ("is Really great"), never a product's name.
var smallWords = map[string]bool{
	"a": true, "an": true, "the": true, "this": true, "that": true,
	"these": true, "those": true, "my": true, "our": true, "your": true,
	"his": true, "her": true, "its": true, "their": true, "it": true,
	"you": true, "we": true, "they": true, "he": true, "she": true,
	"me": true, "us": true, "them": true, "is": true, "are": true,
	"was": true, "were": true, "be": true, "been": true, "am": true,
	"has": true, "have": true, "had": true, "do": true, "does": true,
	"did": true, "will": true, "would": true, "can": true, "could": true,
	"and": true, "or": true, "but": true, "of": true, "to": true,
	"in": true, "on": true, "at": true, "by": true, "for": true,
	"with": true, "from": true, "so": true, "as": true, "not": true,
	"very": true, "really": true, "just": true, "too": true, "ever": true,
	"totally": true, "absolutely": true, "truly": true, "literally": true,
	"honestly": true, "seriously": true, "actually": true, "definitely": true,
	"completely": true, "extremely": true, "super": true,
}

// titleCase reports for each of words whether the run of capitalised
// words it starts holds one of smallWords. It reads the line once, from
// its end: asked word by word, a line of such runs would be read again
// from each of its words.
func titleCase(words []string) []bool {
	titled := make([]bool, len(words)+1)
	for k := len(words) - 1; k >= 0; k-- {
		w := words[k]
		bare := strings.Trim(w, `"'()*_,.;:!?…[]{}“”‘’«»`)
		switch r, _ := utf8.DecodeRuneInString(bare); {
		case !unicode.IsUpper(r):
		case smallWords[strings.ToLower(bare)]:
			titled[k] = true
		case endsSentence(w) || strings.HasSuffix(w, ":") || strings.HasSuffix(w, ","):
		default:
			titled[k] = titled[k+1]
		}
	}
	return titled
}

// person reports whether the words beside words[k] mark it as a person's
// name: one asked, told or thanked before it ("I asked Sarah", "thanks
// Priya"), one who speaks after it ("Sarah said"), or staff ("Sarah from
// support"). A company can be asked or say things too; read as a person
// its name merely counts in full, as it did before it was looked for.
func person(words []string, k int) bool {
	if k > 0 && !endsClause(words[k-1]) && addressed[bareLower(words[k-1])] {
		return true
	}
	if endsClause(words[k]) || k+1 == len(words) {
		return false
	}
	next := bareLower(words[k+1])
	if speaks[next] {
		return true
	}
	return next == "from" && k+2 < len(words) && staff[bareLower(words[k+2])]
}

// addressed are the words that take a person after them; speaks the
// words a person does; staff what a person is "from".
var (
	addressed = map[string]bool{
		"ask": true, "asked": true, "asking": true, "tell": true, "told": true,
		"telling": true, "thank": true, "thanks": true, "thanked": true,
	}
	speaks = map[string]bool{
		"said": true, "says": true, "told": true, "tells": true, "asked": true,
		"asks": true, "replied": true, "explained": true, "mentioned": true,
		"suggested": true, "thinks": true,
	}
	staff = map[string]bool{
		"support": true, "sales": true, "billing": true, "customer": true,
		"their": true,
	}
)

func bareLower(w string) string {
	return strings.ToLower(strings.Trim(w, `"'()*_,.;:!?…[]`))
}

// openers are the characters that open a quote or an aside.
const openers = `"'([{“‘«`

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// notNames are words written with a capital mid-sentence that name no
// product: days, months, and "I" with a contraction typed without its
// apostrophe ("Im", "Ive").
var notNames = map[string]bool{
	"monday": true, "tuesday": true, "wednesday": true, "thursday": true,
	"friday": true, "saturday": true, "sunday": true,
	"january": true, "february": true, "march": true, "april": true,
	"may": true, "june": true, "july": true, "august": true,
	"september": true, "october": true, "november": true, "december": true,
	"im": true, "ive": true, "id": true, "ill": true,
}

func phraseWord(phrase, w string) bool {
	for p := range strings.FieldsSeq(phrase) {
		if p == w {
			return true
		}
	}
	return false
}

// notOwners are words whose "'s" names no product: pronouns, "is"
// contractions and times ("it's", "today's").
var notOwners = map[string]bool{
	"it": true, "that": true, "what": true, "there": true, "here": true,
	"he": true, "she": true, "who": true, "let": true, "where": true,
	"how": true, "when": true, "why": true, "this": true, "one": true,
	"everyone": true, "everybody": true, "someone": true, "somebody": true,
	"anyone": true, "nobody": true, "today": true, "tonight": true,
	"yesterday": true, "tomorrow": true, "year": true, "week": true,
	"month": true, "else": true, "everything": true, "nothing": true,
	"something": true, "anything": true,
}

// determiners before an "x's" make x a common noun ("the app's sync"),
// as the phrase's own word does a part of the phrase ("acme support's").
var determiners = map[string]bool{
	"the": true, "a": true, "an": true, "my": true, "our": true,
	"your": true, "his": true, "her": true, "their": true, "its": true,
	"this": true, "that": true, "every": true,
}

// aboutOther reports whether the cue at [start, end) is said of another
// product: its clause (up to a comma, colon or the end of its sentence)
// names one, one of names or an owner ("hubspot's price hike"), nearer
// to the cue than any occurrence of the phrase in the clause.
func aboutOther(text, phrase string, split int, names []string, start, end int) bool {
	from, to := clauseAround(text, start, end)
	other, prev := -1, ""
	for i := from; i < to; {
		j := strings.IndexByte(text[i:to], ' ')
		if j < 0 {
			j = to - i
		}
		w := strings.Trim(text[i:i+j], `"'()*_,.;:!?…[]`)
		base, owner := strings.CutSuffix(w, "'s")
		isOther := slices.Contains(names, base) ||
			owner && !notOwners[base] && !determiners[prev] && !phraseWord(phrase, base) && !phraseWord(phrase, prev)
		if isOther && (i+j <= start || i >= end) {
			if d := gap(i, i+j, start, end); other < 0 || d < other {
				other = d
			}
		}
		prev, i = w, i+j+1
	}
	if other < 0 {
		return false
	}
	p := phraseNear(text, phrase, split, from, to, start, end)
	return p < 0 || other < p
}

// clauseAround returns the clause holding [start, end): back to and
// forward to a comma, colon, semicolon or sentence end followed by a
// space, at most sentenceBytes each way.
func clauseAround(text string, start, end int) (from, to int) {
	stop := func(i int) bool {
		return strings.IndexByte(",.;:!?", text[i]) >= 0 && (i+1 == len(text) || text[i+1] == ' ')
	}
	from = start
	for from > 0 && from > start-sentenceBytes && !stop(from-1) {
		from--
	}
	to = end
	for to < len(text) && to < end+sentenceBytes && !stop(to) {
		to++
	}
	return from, to
}
