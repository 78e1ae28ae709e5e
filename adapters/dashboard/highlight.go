package dashboard

import (
	"html/template"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
)

// highlight returns text as HTML with what a reader looks for in
// <mark>: every place the phrase occurs, found as the matcher finds it
// (letters compare under match.Fold, any run of white space stands
// for a space, the characters a reader does not see (core.Invisible)
// are read as if absent, and a phrase's outer word characters must not touch
// another word character, where both are of scripts written with
// spaces: match.NeedsBoundary), and every place a search's term does (its
// words one after another, anything but word letters between them, as
// the databases' text search reads the post). Each piece of the text is
// escaped on its own and only <mark> and </mark> are added between the
// pieces, so a stranger's markup stays text.
func highlight(text, phrase string, search core.Search) template.HTML {
	text = strings.ToValidUTF8(text, "\uFFFD")
	spans := phraseSpans(text, phrase)
	for _, words := range search.Shown() {
		spans = append(spans, termSpans(text, words)...)
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var merged [][2]int
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		merged = append(merged, [2]int{start, end})
	}
	return marked(text, merged)
}

// marked returns text as HTML with each of spans, in order and apart, in
// <mark>: each piece of the text is escaped on its own and only <mark>
// and </mark> are added between the pieces.
func marked(text string, spans [][2]int) template.HTML {
	var b strings.Builder
	at := 0
	for _, s := range spans {
		b.WriteString(template.HTMLEscapeString(text[at:s[0]]))
		b.WriteString("<mark>")
		b.WriteString(template.HTMLEscapeString(text[s[0]:s[1]]))
		b.WriteString("</mark>")
		at = s[1]
	}
	b.WriteString(template.HTMLEscapeString(text[at:]))
	return template.HTML(b.String())
}

// phraseSpans returns the byte spans of text where phrase occurs. A span
// starts and ends on a character a reader sees: an invisible one inside
// the phrase is marked with it, one at its edge is not.
func phraseSpans(text, phrase string) [][2]int {
	var want []rune // folded, each run of white space one ' ', without the invisible characters
	for _, f := range strings.Fields(strings.Map(dropInvisible, phrase)) {
		if len(want) > 0 {
			want = append(want, ' ')
		}
		for _, r := range f {
			want = append(want, match.Fold(r))
		}
	}
	if len(want) == 0 {
		return nil
	}
	// An edge needs a boundary only where both the phrase's character
	// and the text's beside it ask for one (match.NeedsBoundary): a
	// character of a script written without spaces is a word of its own.
	edgeBefore, edgeAfter := match.NeedsBoundary(want[0]), match.NeedsBoundary(want[len(want)-1])
	var out [][2]int
	prev := rune(' ')
	for i, r := range text {
		if core.Invisible(r) {
			continue // prev stays the character before, as the matcher reads it
		}
		if !(edgeBefore && match.NeedsBoundary(prev)) {
			if end, ok := phraseAt(text, i, want); ok {
				next, _ := utf8.DecodeRuneInString(text[skipInvisible(text, end):])
				if !(edgeAfter && match.NeedsBoundary(next)) {
					out = append(out, [2]int{i, end})
				}
			}
		}
		prev = r
	}
	return out
}

// dropInvisible leaves out, in strings.Map, the characters a reader does
// not see.
func dropInvisible(r rune) rune {
	if core.Invisible(r) {
		return -1
	}
	return r
}

// skipInvisible returns the index of the first character at or after
// byte i of text that is not invisible, or len(text).
func skipInvisible(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !core.Invisible(r) {
			break
		}
		i += size
	}
	return i
}

// phraseAt reports whether the folded phrase want starts at byte i of
// text, and where it ends: after its last character, not after the
// invisible characters that may follow.
func phraseAt(text string, i int, want []rune) (int, bool) {
	for _, w := range want {
		if i = skipInvisible(text, i); i >= len(text) {
			return 0, false
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if w == ' ' {
			if !unicode.IsSpace(r) {
				return 0, false
			}
			for i < len(text) && (unicode.IsSpace(r) || core.Invisible(r)) {
				i += size
				r, size = utf8.DecodeRuneInString(text[i:])
			}
			continue
		}
		if match.Fold(r) != w {
			return 0, false
		}
		i += size
	}
	return i, true
}

// termSpans returns the byte spans of text where the words occur one
// after another, as words of a search (core.SearchWords).
func termSpans(text string, words []string) [][2]int {
	type token struct {
		start, end int
		fold       string
	}
	var toks []token
	start := -1
	for i, r := range text + " " {
		switch {
		case core.IsSearchRune(r) && start < 0:
			start = i
		case !core.IsSearchRune(r) && start >= 0:
			toks = append(toks, token{start, i, strings.Map(core.FoldRune, text[start:i])})
			start = -1
		}
	}
	want := make([]string, len(words))
	for i, w := range words {
		want[i] = strings.Map(core.FoldRune, w)
	}
	var out [][2]int
	for i := 0; i+len(want) <= len(toks); i++ {
		k := 0
		for k < len(want) && toks[i+k].fold == want[k] {
			k++
		}
		if k == len(want) {
			out = append(out, [2]int{toks[i].start, toks[i+k-1].end})
		}
	}
	return out
}
