package match

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// TestFind checks the matching rules case by case, against the reference
// too.
func TestFind(t *testing.T) {
	tests := []struct {
		name    string
		phrases []string
		texts   []string
		want    []int
	}{
		{"plain word", []string{"go"}, []string{"I use go daily"}, []int{0}},
		{"case", []string{"Go"}, []string{"GO is fun"}, []int{0}},
		{"no match inside a word", []string{"go"}, []string{"google"}, nil},
		{"no match at a word end", []string{"go"}, []string{"ago"}, nil},
		{"digit is a word char", []string{"go"}, []string{"go2"}, nil},
		{"underscore is a word char", []string{"go"}, []string{"_go"}, nil},
		{"punctuation is a boundary", []string{"go"}, []string{"(go)", "go.", "go-lang"}, []int{0}},
		{"start and end of text", []string{"go"}, []string{"go"}, []int{0}},
		{"symbol at the right edge", []string{"c++"}, []string{"I love c++!"}, []int{0}},
		{"symbol edge needs no boundary", []string{"c++"}, []string{"c++x"}, []int{0}},
		{"word edge still needs one", []string{"c++"}, []string{"xc++"}, nil},
		{"hashtag", []string{"#ai"}, []string{"big #ai news"}, []int{0}},
		{"hashtag after a letter", []string{"#ai"}, []string{"x#ai"}, []int{0}},
		{"hashtag runs on", []string{"#ai"}, []string{"#aim"}, nil},
		{"only symbols", []string{"+++"}, []string{"a+++b"}, []int{0}},
		{"inner boundary", []string{"a.b"}, []string{"xa.b", "a.by"}, nil},
		{"overlaps", []string{"new york", "york city", "york", "new"}, []string{"new york city"}, []int{0, 1, 2, 3}},
		{"suffix phrase", []string{"york", "new york"}, []string{"in new york"}, []int{0, 1}},
		{"repeated", []string{"go"}, []string{"go go go"}, []int{0}},
		{"duplicate phrases", []string{"go", "Go", "GO "}, []string{"go"}, []int{0, 1, 2}},
		{"space run", []string{"new york"}, []string{"new \t\n york"}, []int{0}},
		{"no-break space", []string{"new york"}, []string{"new\u00a0york"}, []int{0}},
		{"ideographic space", []string{"new york"}, []string{"new\u3000york"}, []int{0}},
		{"no space", []string{"new york"}, []string{"newyork"}, nil},
		{"phrase white space", []string{"  new\t\tyork \n"}, []string{"new york"}, []int{0}},
		{"parts are separate", []string{"new york"}, []string{"new", "york"}, nil},
		{"any part", []string{"a", "b", "c"}, []string{"b", "", "c c"}, []int{1, 2}},
		{"empty phrase", []string{"", " \t", "x"}, []string{"x  "}, []int{2}},
		{"invalid phrase", []string{"a\xffb"}, []string{"a\xffb"}, nil},
		{"invalid text byte", []string{"ab"}, []string{"\xffab\xfe"}, []int{0}},
		{"invalid byte is not a letter", []string{"a b"}, []string{"a\xffb"}, nil},
		{"replacement char", []string{"\ufffd"}, []string{"x \ufffd y", "\xff"}, []int{0}},
		{"sigma", []string{"σοφία"}, []string{"ΣΟΦΊΑ"}, []int{0}},
		{"final sigma", []string{"ς"}, []string{"Σ σ"}, []int{0}},
		{"kelvin sign", []string{"k"}, []string{"\u212a"}, []int{0}},
		{"kelvin sign in phrase", []string{"\u212aelvin"}, []string{"KELVIN"}, []int{0}},
		{"long s", []string{"sun"}, []string{"\u017fun"}, []int{0}},
		{"sharp s needs full folding", []string{"straße"}, []string{"STRASSE"}, nil},
		{"capital sharp s", []string{"straße"}, []string{"STRAẞE"}, []int{0}},
		{"dotted capital I", []string{"istanbul"}, []string{"İstanbul"}, nil},
		{"dotless i", []string{"istanbul"}, []string{"ıstanbul"}, nil},
		{"I and i", []string{"istanbul"}, []string{"ISTANBUL"}, []int{0}},
		{"dotted I itself", []string{"İzmir"}, []string{"İZMIR"}, []int{0}},
		{"accented", []string{"café"}, []string{"CAFÉ au lait"}, []int{0}},
		{"combining mark is a word char", []string{"cafe"}, []string{"cafe\u0301"}, nil},
		{"combining mark in phrase", []string{"cafe\u0301"}, []string{"CAFE\u0301!"}, []int{0}},
		{"letter after non-ASCII letter", []string{"b"}, []string{"éb", "ыb"}, nil},
		// A Han character is a word of its own (script_test.go).
		{"letter after a Han character", []string{"b"}, []string{"中b"}, []int{0}},
		{"non-ASCII word", []string{"naïve"}, []string{"so naïve."}, []int{0}},
		{"non-ASCII edge", []string{"über"}, []string{"xüber", "überx"}, nil},
		{"emoji is not a word char", []string{"go"}, []string{"😀go😀"}, []int{0}},
		{"emoji phrase", []string{"🚀"}, []string{"to the moon🚀🚀"}, []int{0}},
		{"long words", []string{"Supercalifragilisticexpialidocious", "internationalisation"}, []string{"SUPERCALIFRAGILISTICEXPIALIDOCIOUS!", "internationalisations"}, []int{0}},
		{"long non-ASCII word", []string{"übergrößenträgerinnen", "größenträger"}, []string{"ÜBERGRÖẞENTRÄGERINNEN", "GRÖSSENTRÄGER"}, []int{0}},
		{"word lengths around groups", []string{"abcdefg", "abcdefgh", "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnopq"}, []string{"ABCDEFG abcdefghijklmnop.", "abcdefgh_"}, []int{0, 3}},
		{"capitals past eight bytes", []string{"abcdefghijk", "abcdefghijklmno"}, []string{"ABCDEFGHIJK ABCDEFGHIJKLMNO"}, []int{0, 1}},
		{"DEL is not a word char", []string{"go", "_x_"}, []string{"go\x7f \x7f_x_\x7f"}, []int{0, 1}},
		{"cjk inside a run of text", []string{"東京"}, []string{"in 東京タワー"}, []int{0}},
		// Phones write many emoji with the emoji variation selector
		// (U+FE0F), a combining mark that extends the emoji, not a word.
		{"emoji variation selector before a word", []string{"acme"}, []string{"❤️acme", "✔️Acme!"}, []int{0}},
		{"emoji variation selector after a word", []string{"acme"}, []string{"acme❤️", "acme\ufe0e"}, []int{0}},
		{"phrase with a variation selector", []string{"❤️"}, []string{"I ❤️it"}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range variants {
				got := v.find(tt.phrases, tt.texts...)
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s: Find(%q) = %v, want %v", v.name, tt.texts, got, tt.want)
				}
				if ref := refFind(tt.phrases, tt.texts...); !slices.Equal(ref, tt.want) {
					t.Errorf("reference: %v, want %v", ref, tt.want)
				}
			}
		})
	}
}

func TestScanAllocs(t *testing.T) {
	s := Compile([]string{"go", "new york", "café", "#ai"})
	n := 0
	found := func(int) { n++ }
	text := "Go to NEW YORK for a café and #ai, then go again. Ünïcödé 😀"
	if a := testing.AllocsPerRun(100, func() { s.Scan(text, found) }); a != 0 {
		t.Errorf("Scan allocates %v times", a)
	}
	if n == 0 {
		t.Error("Scan found nothing")
	}
}

// nested returns the phrases "a", "a a", ... of up to n words.
func nested(n int) []string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = strings.TrimSpace(strings.Repeat("a ", i+1))
	}
	return ps
}

// Nested phrases end at every word of a long run of the word, so memory
// that grows with occurrences grows with words times phrases. Find keeps
// each phrase once: what one call allocates stays near the size of the
// phrase set, whatever the length of the text.
func TestFindNestedMemory(t *testing.T) {
	s := Compile(nested(50))
	text := strings.Repeat("a ", 440<<10) // 880 KB
	want := make([]int, 50)
	for i := range want {
		want[i] = i
	}
	if got := s.Find(text); !slices.Equal(got, want) {
		t.Fatalf("Find = %v", got)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := s.Find(text, "a", text)
	runtime.ReadMemStats(&after)
	if !slices.Equal(got, want) {
		t.Fatalf("Find = %v", got)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Errorf("Find over 1.7 MB of text with 50 nested phrases allocated %d bytes, want at most 64 KB", n)
	}
}

func TestLen(t *testing.T) {
	if n := Compile([]string{"a", "", "b"}).Len(); n != 3 {
		t.Errorf("Len = %d, want 3", n)
	}
	var s *Set
	if s.Len() != 0 || s.Find("x") != nil {
		t.Error("nil Set is not empty")
	}
	if Compile(nil).Find("anything") != nil {
		t.Error("empty Set found something")
	}
}

func TestConcurrent(t *testing.T) {
	phrases := []string{"go", "rust", "new york", "σοφία"}
	s := Compile(phrases)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for range 200 {
				if got := s.Find("Go and Rust in New York", "ΣΟΦΊΑ"); len(got) != 4 {
					t.Errorf("Find = %v", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestAgainstReference compares the automaton with refFind on random
// phrases and texts over a small alphabet. Each round draws a handful of
// pieces to build from and plants the phrases themselves in the texts,
// with other white space, so that matches, overlaps and near misses are
// frequent. Every variant must agree.
func TestAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	iterations := 4000
	if testing.Short() {
		iterations = 400
	}
	matched := 0
	for it := 0; it < iterations; it++ {
		alpha := make([]string, 3+rng.IntN(8))
		for i := range alpha {
			alpha[i] = pieces[rng.IntN(len(pieces))]
		}
		alpha = append(alpha, " ")
		phrases := make([]string, 1+rng.IntN(12))
		for i := range phrases {
			phrases[i] = randomText(rng, alpha, 1+rng.IntN(5), false)
		}
		texts := make([]string, 1+rng.IntN(3))
		for i := range texts {
			// Some texts are long enough for the fast path to take
			// whole 64-byte chunks.
			segments := rng.IntN(12)
			if rng.IntN(4) == 0 {
				segments = 20 + rng.IntN(60)
			}
			var b strings.Builder
			for range segments {
				if rng.IntN(3) == 0 {
					p := phrases[rng.IntN(len(phrases))]
					b.WriteString(strings.ReplaceAll(p, " ", spaces[rng.IntN(len(spaces))]))
				} else {
					b.WriteString(randomText(rng, alpha, 1+rng.IntN(3), true))
				}
			}
			texts[i] = b.String()
		}
		want := refFind(phrases, texts...)
		if len(want) > 0 {
			matched++
		}
		for _, v := range variants {
			if got := v.find(phrases, texts...); !slices.Equal(got, want) {
				t.Fatalf("%s: phrases %q, texts %q: got %v, want %v", v.name, phrases, texts, got, want)
			}
		}
	}
	if matched < iterations/3 {
		t.Errorf("only %d of %d rounds found anything: the generator is too sparse", matched, iterations)
	}
}

var pieces = []string{
	"a", "b", "go", "o", "A", "G", "GO", "1", "_", "k", "K", "s", "S", "i", "I",
	" ", " ", "  ", "\t", "\n", "\u00a0",
	"+", "#", ".", "-", "++",
	"é", "É", "e\u0301", "\u0301", "ß", "ẞ", "Σ", "σ", "ς", "\u212a", "\u017f",
	"İ", "ı", "😀", "中", "\ufffd",
	"東", "京", "タ", "ー", "ｶ", "ﾞ", "\u3099", "삼", "은", "ก", "\u0e48", "ไ",
	"'", "’", "‘", "Ａ", "ａ", "Ｇ", "ｏ", "１", "＃", "＿",
	"\u00ad", "\u200b", "\u200d", "\u200e", "\u2060", "\ufeff",
}

var spaces = []string{" ", "  ", "\t", " \n ", "\u00a0", "\u3000"}

// randomText joins n pieces of alpha; texts may also get invalid bytes.
func randomText(rng *rand.Rand, alpha []string, n int, text bool) string {
	var b strings.Builder
	for range n {
		if text && rng.IntN(30) == 0 {
			b.WriteByte(0x80 + byte(rng.IntN(0x80)))
			continue
		}
		b.WriteString(alpha[rng.IntN(len(alpha))])
	}
	return b.String()
}

// FuzzFind compares the variants with refFind on phrases (one a line) and
// texts (separated by NUL) from the fuzzer.
func FuzzFind(f *testing.F) {
	f.Add("go\nc++\n#ai", "I love c++ and #ai, not google")
	f.Add("new york\nyork city\nyork", "NEW\t YORK  city")
	f.Add("σοφία\n\u212aelvin\nstraße", "ΣΟΦΊΑ kelvin STRASSE")
	f.Add("cafe\u0301\nb", "CAFE\u0301 \xffb éb")
	f.Add("a\na a\na a a\na a a a", "a a a a a a a a, a")
	f.Add("go\ngo go\nc++", "go go go c++ c++ go")
	f.Add("東京\nソニー\nacme\n삼성\nกรุงเทพ", "東京タワー acmeの新製品 ｿﾆｰ 삼성은 ที่กรุงเทพมี")
	f.Add("acme\nacme crm\nac\u00adme\nمی\u200cخواهم", "ac\u00adme\u200e crm \ufeffacme\u2060crm می\u200cخواهم")
	f.Fuzz(func(t *testing.T, phrases, text string) {
		list := strings.Split(phrases, "\n")
		if len(list) > 64 {
			list = list[:64]
		}
		parts := strings.Split(text, "\x00")
		// Each set also runs nested: its first phrase repeated 1 to 8
		// times, so that outputs chain deep and Find meets the same
		// lists again and again.
		nested := slices.Clone(list)
		for k := 1; k <= 8 && len(list[0]) <= 16; k++ {
			nested = append(nested, strings.TrimSpace(strings.Repeat(list[0]+" ", k)))
		}
		for _, set := range [][]string{list, nested} {
			want := refFind(set, parts...)
			// The text index holds the parts' words one after another:
			// it must hold the words of every phrase found.
			var index []byte
			for _, part := range parts {
				index = AppendWords(index, part)
			}
			for _, i := range want {
				if !holdsRun(strings.Fields(string(index)), Words(set[i])) {
					t.Fatalf("phrase %q is found in %q, but its words %q are not among %q", set[i], parts, Words(set[i]), index)
				}
			}
			for _, v := range variants {
				if got := v.find(set, parts...); !slices.Equal(got, want) {
					t.Fatalf("%s: phrases %q, text %q: got %v, want %v", v.name, set, parts, got, want)
				}
			}
		}
	})
}

// variants are the ways of compiling and scanning that must agree: as
// exported; with every transition looked up in the edge table; and with
// each text repeated between runs of a character no phrase uses, which
// changes nothing that is found but makes the texts cross the 64-byte
// chunks of the fast path of Scan at every offset.
var variants = []struct {
	name string
	find func(phrases []string, texts ...string) []int
}{
	{"Find", func(phrases []string, texts ...string) []int { return Compile(phrases).Find(texts...) }},
	{"Scan", func(phrases []string, texts ...string) []int {
		// Every occurrence, duplicates removed afterwards: Find's record
		// of each phrase once must come to the same.
		var all []int
		s := Compile(phrases)
		for _, t := range texts {
			s.Scan(t, func(i int) { all = append(all, i) })
		}
		slices.Sort(all)
		return slices.Compact(all)
	}},
	{"Find twice", func(phrases []string, texts ...string) []int {
		// A second Find on the same Set reuses what the first recorded
		// with: it must start clean.
		s := Compile(phrases)
		s.Find(texts...)
		s.Find("")
		return s.Find(texts...)
	}},
	{"edge table", func(phrases []string, texts ...string) []int { return compile(phrases, 1).Find(texts...) }},
	{"long texts", func(phrases []string, texts ...string) []int {
		sep := ""
		for c := byte(1); c < 0x20; c++ {
			if !unicode.IsSpace(rune(c)) && !slices.ContainsFunc(phrases, func(p string) bool { return strings.IndexByte(p, c) >= 0 }) {
				sep = string(c)
				break
			}
		}
		if sep == "" {
			return refFind(phrases, texts...)
		}
		long := make([]string, len(texts))
		for i, t := range texts {
			var b strings.Builder
			for j := range 40 {
				b.WriteString(strings.Repeat(sep, 1+j%9))
				b.WriteString(t)
			}
			b.WriteString(strings.Repeat(sep, 80))
			long[i] = b.String()
		}
		return Compile(phrases).Find(long...)
	}},
}

// refFind is the plain reading of the matching rules: fold and normalise
// phrase and text to runes, then try every position for every phrase.
func refFind(phrases []string, texts ...string) []int {
	var found []int
	for i, p := range phrases {
		if !utf8.ValidString(p) {
			continue
		}
		pr := refRunes(p)
		for len(pr) > 0 && pr[0] == ' ' {
			pr = pr[1:]
		}
		for len(pr) > 0 && pr[len(pr)-1] == ' ' {
			pr = pr[:len(pr)-1]
		}
		if len(pr) == 0 {
			continue
		}
		for _, t := range texts {
			if refContains(refRunes(t), pr) {
				found = append(found, i)
				break
			}
		}
	}
	return found
}

func refContains(t, p []rune) bool {
	for at := 0; at+len(p) <= len(t); at++ {
		end := at + len(p)
		switch {
		case !slices.Equal(t[at:end], p):
		case refBounded(p[0]) && at > 0 && refBounded(t[at-1]):
		case refBounded(p[len(p)-1]) && end < len(t) && refBounded(t[end]):
		default:
			return true
		}
	}
	return false
}

// refRunes folds s rune by rune, makes each run of white space one space,
// leaves out the characters a reader does not see (refInvisible) and
// turns each invalid byte into -1, which equals no rune of a phrase.
func refRunes(s string) []rune {
	var out []rune
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		s = s[n:]
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, -1)
		case refInvisible(r):
			// read as if absent
		case unicode.IsSpace(r):
			if len(out) == 0 || out[len(out)-1] != ' ' {
				out = append(out, ' ')
			}
		default:
			out = append(out, core.FoldRune(refVariant(r)))
		}
	}
	return out
}

// refInvisible reports whether r is a format character a reader does not
// see: a soft hyphen, a zero-width space, non-joiner or joiner, a
// direction mark, a bidirectional embedding, override or isolate, the
// Arabic letter mark, the word joiner, an invisible operator or a byte
// order mark.
func refInvisible(r rune) bool {
	return r == '\u00ad' || r == '\u061c' || '\u200b' <= r && r <= '\u200f' || '\u202a' <= r && r <= '\u202e' ||
		'\u2060' <= r && r <= '\u2064' || '\u2066' <= r && r <= '\u2069' || r == '\ufeff'
}

// refVariant reads a typographic apostrophe as ' and a full-width form
// of ASCII as its ASCII character, all but the full-width low line.
func refVariant(r rune) rune {
	switch {
	case strings.ContainsRune("‘’‛", r):
		return '\''
	case 'Ａ' <= r && r <= 'Ｚ', 'ａ' <= r && r <= 'ｚ', '０' <= r && r <= '９', strings.ContainsRune("！＂＃＄％＆＇（）＊＋，－．／：；＜＝＞？＠［＼］＾｀｛｜｝～", r):
		return r - 0xfee0
	}
	return r
}

func refWord(r rune) bool {
	return r >= 0 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.In(r, unicode.Mn, unicode.Mc)) &&
		!('\ufe00' <= r && r <= '\ufe0f') // variation selectors draw an emoji
}

// refBounded reports whether r asks for a boundary at a phrase's edge and
// breaks one in the text: a word character of a script written with
// spaces. Both the phrase's edge and the text's character beside it must
// be one for the edge to need a boundary.
func refBounded(r rune) bool {
	return refWord(r) && !refUnspaced(r)
}

// refUnspaced reports whether r is of a script written without spaces
// between words (or Hangul), or one of the marks written only with kana
// that Unicode gives no single script.
func refUnspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) ||
		strings.ContainsRune("〱〲〳〴〵〼\u3099\u309aーｰﾞﾟ", r)
}
