package core

import (
	"strings"
	"unicode"
)

// The bounds of a phrase's filters.
const (
	MaxFilterEntries = 20        // entries in one list
	MaxFilterCount   = 1_000_000 // the highest minimum of likes or comments
)

// PhraseFilters narrow what a phrase matches: a post in which the phrase
// is found is still no match of it when the filters veto the post. The
// zero value is no filter, and a phrase without filters matches as it
// would without them.
//
// The words and phrases of Exclude and Require are found by the matcher's
// own rules (word boundaries, case, white space), anywhere in the post a
// phrase is looked for: its title and its text. Authors are compared
// without regard to case, communities as NormalizeCommunity gives them.
type PhraseFilters struct {
	Exclude            []string // any of them in the post vetoes it
	Require            []string // every one of them must be in the post too
	ExcludeAuthors     []string // posts of these authors are vetoed (names without u/ or @)
	ExcludeCommunities []string // posts in these communities are vetoed (subreddit names)
	MinLikes           int      // fewer likes veto the post
	MinComments        int      // fewer comments veto the post
	// TitleOnly keeps a post only when the phrase is in its title: a post
	// without a title then matches on nothing.
	TitleOnly bool
}

// NewPhraseFilters normalises and checks filters as a caller sent them:
// each word of Exclude and Require like a phrase (NormalizePhrase); each
// author trimmed of a leading u/, /u/ or @, its white space folded like
// a phrase's; each community by NormalizeCommunity. Words equal as the
// matcher reads them (FoldKey), and authors equal but for case, are kept
// once, the first. Each list holds at most MaxFilterEntries
// entries, each as long as a phrase may be; the minimums are 0 to
// MaxFilterCount. Empty lists become nil, so filters that filter nothing
// are the zero value. Errors are KindInvalid, naming the field and entry.
func NewPhraseFilters(f PhraseFilters) (PhraseFilters, error) {
	var err error
	if f.Exclude, err = normalizeList("exclude", f.Exclude, wordEntry, FoldKey); err != nil {
		return PhraseFilters{}, err
	}
	if f.Require, err = normalizeList("require", f.Require, wordEntry, FoldKey); err != nil {
		return PhraseFilters{}, err
	}
	if f.ExcludeAuthors, err = normalizeList("excludeAuthors", f.ExcludeAuthors, authorEntry, caseKey); err != nil {
		return PhraseFilters{}, err
	}
	if f.ExcludeCommunities, err = normalizeList("excludeCommunities", f.ExcludeCommunities, communityEntry, caseKey); err != nil {
		return PhraseFilters{}, err
	}
	if err := checkMin("minLikes", f.MinLikes); err != nil {
		return PhraseFilters{}, err
	}
	if err := checkMin("minComments", f.MinComments); err != nil {
		return PhraseFilters{}, err
	}
	return f, nil
}

// IsZero reports whether f filters nothing.
func (f PhraseFilters) IsZero() bool {
	return len(f.Exclude) == 0 && len(f.Require) == 0 && len(f.ExcludeAuthors) == 0 && len(f.ExcludeCommunities) == 0 &&
		f.MinLikes == 0 && f.MinComments == 0 && !f.TitleOnly
}

func checkMin(field string, n int) error {
	if n < 0 || n > MaxFilterCount {
		return Errorf(KindInvalid, "%s must be a whole number from 0 to %d", field, MaxFilterCount)
	}
	return nil
}

// normalizeList normalises each entry of a list with norm, which says
// what is wrong with an entry after its name, and drops the entries whose
// key is an earlier one's: FoldKey for words, which the matcher finds,
// caseKey for names, which are compared by case alone.
func normalizeList(field string, in []string, norm func(string) (string, string), key func(string) string) ([]string, error) {
	if len(in) > MaxFilterEntries {
		return nil, Errorf(KindInvalid, "%s holds at most %d entries, got %d", field, MaxFilterEntries, len(in))
	}
	var out []string
	seen := make(map[string]bool, len(in))
	for i, e := range in {
		v, problem := norm(e)
		if problem != "" {
			return nil, Errorf(KindInvalid, "%s entry %d %s", field, i+1, problem)
		}
		if k := key(v); !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out, nil
}

// caseKey folds s by case alone (FoldRune), as Keep compares authors
// (strings.EqualFold): an author named "ＡＣＭＥ" is not "acme", whom the
// matcher would read the same in a post's text.
func caseKey(s string) string { return strings.Map(FoldRune, s) }

func wordEntry(s string) (string, string) { return normalizeText(s) }

func authorEntry(s string) (string, string) { return normalizeText(AuthorName(s)) }

func communityEntry(s string) (string, string) {
	c, err := NormalizeCommunity(s)
	if err != nil {
		return "", "must be a subreddit name of 3 to 21 letters, digits or underscores"
	}
	return c, ""
}

// AuthorName is the form in which an author is compared: trimmed, a
// leading u/, /u/ (reddit's forms of a user name) or @ (x's) taken off,
// each run of white space one space (facebook's names hold spaces).
func AuthorName(s string) string {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "@"):
		s = s[1:]
	case len(s) >= 3 && s[0] == '/' && (s[1] == 'u' || s[1] == 'U') && s[2] == '/':
		s = s[3:]
	case len(s) >= 2 && (s[0] == 'u' || s[0] == 'U') && s[1] == '/':
		s = s[2:]
	}
	if strings.IndexFunc(s, unicode.IsSpace) < 0 {
		return s // most names: nothing to fold, nothing to allocate
	}
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

// PhraseFiltersChange changes some fields of a phrase's filters: a field
// left nil keeps its value, a field given replaces it whole (an empty
// list clears it).
type PhraseFiltersChange struct {
	Exclude            *[]string
	Require            *[]string
	ExcludeAuthors     *[]string
	ExcludeCommunities *[]string
	MinLikes           *int
	MinComments        *int
	TitleOnly          *bool
}

// ChangeAll is the change that replaces every field with f's.
func ChangeAll(f PhraseFilters) PhraseFiltersChange {
	return PhraseFiltersChange{Exclude: &f.Exclude, Require: &f.Require, ExcludeAuthors: &f.ExcludeAuthors,
		ExcludeCommunities: &f.ExcludeCommunities, MinLikes: &f.MinLikes, MinComments: &f.MinComments, TitleOnly: &f.TitleOnly}
}

// IsZero reports whether c changes nothing.
func (c PhraseFiltersChange) IsZero() bool { return c == PhraseFiltersChange{} }

// Check normalises the fields c gives as NewPhraseFilters does. Errors
// are KindInvalid, naming the field.
func (c PhraseFiltersChange) Check() (PhraseFiltersChange, error) {
	f, err := NewPhraseFilters(PhraseFilters{}.With(c))
	if err != nil {
		return PhraseFiltersChange{}, err
	}
	all := ChangeAll(f)
	out := PhraseFiltersChange{}
	pick(&out.Exclude, c.Exclude, all.Exclude)
	pick(&out.Require, c.Require, all.Require)
	pick(&out.ExcludeAuthors, c.ExcludeAuthors, all.ExcludeAuthors)
	pick(&out.ExcludeCommunities, c.ExcludeCommunities, all.ExcludeCommunities)
	pick(&out.MinLikes, c.MinLikes, all.MinLikes)
	pick(&out.MinComments, c.MinComments, all.MinComments)
	pick(&out.TitleOnly, c.TitleOnly, all.TitleOnly)
	return out, nil
}

// pick sets *dst to checked where the change gave the field.
func pick[T any](dst **T, given, checked *T) {
	if given != nil {
		*dst = checked
	}
}

// With returns f with the fields c gives replaced.
func (f PhraseFilters) With(c PhraseFiltersChange) PhraseFilters {
	set(&f.Exclude, c.Exclude)
	set(&f.Require, c.Require)
	set(&f.ExcludeAuthors, c.ExcludeAuthors)
	set(&f.ExcludeCommunities, c.ExcludeCommunities)
	set(&f.MinLikes, c.MinLikes)
	set(&f.MinComments, c.MinComments)
	set(&f.TitleOnly, c.TitleOnly)
	if len(f.Exclude) == 0 {
		f.Exclude = nil
	}
	if len(f.Require) == 0 {
		f.Require = nil
	}
	if len(f.ExcludeAuthors) == 0 {
		f.ExcludeAuthors = nil
	}
	if len(f.ExcludeCommunities) == 0 {
		f.ExcludeCommunities = nil
	}
	return f
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// FilterPost is what filters read of a post besides its words, worked
// out once per post however many phrases it is checked for.
type FilterPost struct {
	Author    string // AuthorName of the post's author
	Community string // the post's community as NormalizeCommunity gives it; "" when none
	Likes     int
	Comments  int
}

// FilterPostOf returns what filters read of p, a post in community.
func FilterPostOf(p Post, community string) FilterPost {
	return FilterPost{Author: AuthorName(p.Author), Community: community, Likes: p.Likes, Comments: p.Comments}
}

// FilterHits is what the matcher found in a post for one phrase's
// filters.
type FilterHits struct {
	Excluded int  // entries of Exclude found in the post
	Required int  // distinct entries of Require found in the post
	InTitle  bool // the phrase itself is in the post's title
}

// Keep reports whether a post in which the phrase was found is a match of
// it under f: no word of Exclude appears, every word of Require does,
// the author and the community are not excluded, the likes and comments
// reach the minimums, and with TitleOnly the phrase is in the title.
func (f PhraseFilters) Keep(p FilterPost, h FilterHits) bool {
	if h.Excluded > 0 || h.Required < len(f.Require) || (f.TitleOnly && !h.InTitle) ||
		p.Likes < f.MinLikes || p.Comments < f.MinComments {
		return false
	}
	for _, a := range f.ExcludeAuthors {
		if strings.EqualFold(a, p.Author) {
			return false
		}
	}
	for _, c := range f.ExcludeCommunities {
		if c == p.Community {
			return false
		}
	}
	return true
}
