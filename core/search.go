package core

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The bounds of a search (the q of GET /matches and the inbox's search
// box): what a client sends is read and sent to the database only within
// them.
const (
	MaxSearchLen   = 200 // bytes
	MaxSearchTerms = 10  // words and quoted phrases
)

// SearchTerm is one word or quoted phrase of a search: its words, which
// must appear one right after another. A word of parts, such as acme-crm
// or acme.com, is a phrase of its parts, as the databases' text search
// reads the post.
type SearchTerm struct {
	Words   []string
	Exclude bool // written with a leading -: the post must not hold it
}

// Search is a search of an owner's matches over each post's title, text
// and author: a match is found when every term not excluded appears in
// it and no excluded one does. Letters compare without regard to case.
// The zero Search finds every match.
type Search struct {
	Terms []SearchTerm
}

// IsZero reports whether s searches for nothing, so that every match is
// found.
func (s Search) IsZero() bool { return len(s.Terms) == 0 }

// Shown returns the words of each term a found post holds, excluded
// terms left out: what a page marks in the post.
func (s Search) Shown() [][]string {
	var out [][]string
	for _, t := range s.Terms {
		if !t.Exclude {
			out = append(out, t.Words)
		}
	}
	return out
}

// IsSearchRune reports whether r belongs to a word of a search: letters,
// numbers and combining marks. Every other character separates words, as
// in the text search of both databases (SQLite's unicode61 tokenizer,
// Postgres's parser as the store feeds it).
func IsSearchRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.In(r, unicode.Mn, unicode.Mc)
}

// SearchWords splits s into the words of a search; a run of marks alone
// is no word.
func SearchWords(s string) []string {
	words := strings.FieldsFunc(s, func(r rune) bool { return !IsSearchRune(r) })
	return slices.DeleteFunc(words, func(w string) bool {
		return !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) })
	})
}

// ParseSearch reads a search: words and "quoted phrases" separated by
// white space, each excluded when written with a leading -. A quote left
// open makes a phrase of the rest. Punctuation separates words, and a
// term without letters or numbers is dropped. A blank q is the zero
// Search. KindInvalid names q when it is over MaxSearchLen bytes, holds
// more than MaxSearchTerms terms, or has none to find (only excluded
// ones, or no letters or numbers at all).
func ParseSearch(q string) (Search, error) {
	q = strings.TrimSpace(q)
	if q == "" {
		return Search{}, nil
	}
	if len(q) > MaxSearchLen {
		return Search{}, Errorf(KindInvalid, "q must be at most %d bytes", MaxSearchLen)
	}
	var s Search
	found := false
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		t := SearchTerm{}
		if q[i] == '-' {
			t.Exclude = true
			i++
		}
		var text string
		if i < len(q) && q[i] == '"' {
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				end = len(q) - i - 1
			}
			text, i = q[i+1:i+1+end], i+end+2
		} else {
			end := strings.IndexFunc(q[i:], func(r rune) bool { return r == '"' || unicode.IsSpace(r) })
			if end < 0 {
				end = len(q) - i
			}
			text, i = q[i:i+end], i+end
		}
		if t.Words = SearchWords(text); len(t.Words) == 0 {
			continue
		}
		if len(s.Terms) == MaxSearchTerms {
			return Search{}, Errorf(KindInvalid, "q may hold at most %d words and quoted phrases", MaxSearchTerms)
		}
		s.Terms = append(s.Terms, t)
		found = found || !t.Exclude
	}
	if !found {
		return Search{}, Errorf(KindInvalid, "q must hold a word to find, with letters or numbers, not only words to leave out")
	}
	return s, nil
}
