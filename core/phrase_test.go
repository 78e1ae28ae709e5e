package core_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

func TestNormalizePhrase(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string // empty: refused with KindInvalid
	}{
		{"plain", "hello", "hello"},
		{"case kept", "Go Lang", "Go Lang"},
		{"trimmed", "  hello world \t", "hello world"},
		{"space run", "a     b", "a b"},
		{"tabs", "a\t\tb", "a b"},
		{"newlines", "a\r\n\nb", "a b"},
		{"mixed run", "a \t\n\u00a0 b", "a b"},
		{"no-break space", "a\u00a0b", "a b"},
		{"em and ideographic space", "a\u2003b\u3000c", "a b c"},
		{"unicode space trimmed", "\u00a0\u3000a\u2003", "a"},
		{"next line is white space", "a\u0085b", "a b"},
		{"symbols kept", "c++ #ai", "c++ #ai"},
		{"multi-byte", "straße café 日本語", "straße café 日本語"},
		{"long raw, short folded", "a" + strings.Repeat(" ", 300) + "b", "a b"},
		{"one character", "x", "x"},

		{"empty", "", ""},
		{"only spaces", "   ", ""},
		{"only white space", "\t\n\u00a0\u3000", ""},
		{"NUL", "a\x00b", ""},
		{"bell", "a\x07", ""},
		{"escape", "\x1b[31mred", ""},
		{"DEL", "a\x7fb", ""},
		{"C1 control", "a\u009bb", ""},
		{"invalid byte", "a\xffb", ""},
		{"truncated sequence", "caf\xc3", ""},
		{"overlong encoding", "\xc0\xaf", ""},
		{"surrogate half", "\xed\xa0\x80", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := core.NormalizePhrase(c.in)
			if c.want == "" {
				requireKind(t, err, core.KindInvalid)
				if !strings.HasPrefix(core.Message(err), "phrase") {
					t.Errorf("message %q does not name the phrase", core.Message(err))
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("NormalizePhrase(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
			// Normalising twice changes nothing: stored phrases pass again.
			if again, err := core.NormalizePhrase(got); err != nil || again != got {
				t.Errorf("second pass = %q, %v", again, err)
			}
		})
	}
}

func TestNormalizePhraseLength(t *testing.T) {
	// The limit is in characters: a phrase of 100 multi-byte characters is
	// 200 to 400 bytes long and still fits.
	cases := []struct {
		name string
		in   string
		ok   bool
	}{
		{"100 ASCII", strings.Repeat("a", 100), true},
		{"101 ASCII", strings.Repeat("a", 101), false},
		{"100 two-byte", strings.Repeat("é", 100), true},
		{"101 two-byte", strings.Repeat("é", 101), false},
		{"100 three-byte", strings.Repeat("日", 100), true},
		{"101 three-byte", strings.Repeat("日", 101), false},
		{"100 four-byte", strings.Repeat("😀", 100), true},
		{"101 four-byte", strings.Repeat("😀", 101), false},
		{"100 with padding trimmed", "   " + strings.Repeat("a", 100) + "\n\t", true},
		// Folded spaces count: 50 x "a " trimmed is 99 characters, 34 x
		// "ab " trimmed is 101.
		{"99 after folding", strings.Repeat("a \t", 50), true},
		{"101 after folding", strings.Repeat("ab\u00a0\u00a0", 34), false},
		{"100 after folding a long run", strings.Repeat("a", 49) + strings.Repeat(" ", 500) + strings.Repeat("b", 50), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := core.NormalizePhrase(c.in)
			if !c.ok {
				requireKind(t, err, core.KindInvalid)
				return
			}
			if err != nil {
				t.Fatalf("NormalizePhrase refused %d characters: %v", utf8.RuneCountInString(c.in), err)
			}
			if n := utf8.RuneCountInString(got); n < 1 || n > core.MaxPhraseLen {
				t.Errorf("result has %d characters", n)
			}
		})
	}
	if core.MaxPhraseLen != 100 {
		t.Errorf("MaxPhraseLen = %d, want 100", core.MaxPhraseLen)
	}
}

func TestNormalizeCommunity(t *testing.T) {
	cases := []struct {
		in   string
		want string // empty: refused with KindInvalid
	}{
		{"golang", "golang"},
		{"r/golang", "golang"},
		{"/r/golang", "golang"},
		{"R/Name/", "name"},
		{"/r/GoLang/", "golang"},
		{"  r/rust  ", "rust"},
		{"AskReddit", "askreddit"},
		{"abc", "abc"},
		{"A_1", "a_1"},
		{"r/abc", "abc"},
		{"r_abc", "r_abc"},
		{strings.Repeat("z", 21), strings.Repeat("z", 21)},
		{"r/" + strings.Repeat("Z", 21), strings.Repeat("z", 21)},

		{"", ""},
		{"   ", ""},
		{"r/", ""},
		{"/r/", ""},
		{"ab", ""},
		{"r/ab", ""},
		{strings.Repeat("z", 22), ""},
		{"r/" + strings.Repeat("z", 22), ""},
		{"foo-bar", ""},
		{"r/foo bar", ""},
		{"foo.bar", ""},
		{"r/foo/bar", ""},
		{"r//foo", ""},
		{"u/someone", ""},
		{"café", ""},
		{"日本語日本", ""},
		{"r/ｇｏｌａｎｇ", ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := core.NormalizeCommunity(c.in)
			if c.want == "" {
				requireKind(t, err, core.KindInvalid)
				if !strings.Contains(core.Message(err), "community") {
					t.Errorf("message %q does not name the field", core.Message(err))
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("NormalizeCommunity(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
}

func TestNewPhrase(t *testing.T) {
	cases := []struct {
		name      string
		phrase    string
		platform  string
		community string
		want      core.Phrase
		errField  string // non-empty: refused with KindInvalid naming it
	}{
		{"reddit", "  Best  CRM ", "reddit", "r/SaaS",
			core.Phrase{OwnerID: "o1", Phrase: "Best CRM", Platform: core.Reddit, Community: "saas", Status: core.Listening, LastSource: core.SourceReddit}, ""},
		{"x", "best crm", "x", "",
			core.Phrase{OwnerID: "o1", Phrase: "best crm", Platform: core.X, Status: core.Listening, LastSource: core.SourceHelper}, ""},
		{"facebook", "best crm", "facebook", "",
			core.Phrase{OwnerID: "o1", Phrase: "best crm", Platform: core.Facebook, Status: core.Listening, LastSource: core.SourceHelper}, ""},

		{"reddit without community", "crm", "reddit", "", core.Phrase{}, "community"},
		{"reddit blank community", "crm", "reddit", "  \t", core.Phrase{}, "community"},
		{"reddit bad community", "crm", "reddit", "r/a", core.Phrase{}, "community"},
		{"x with community", "crm", "x", "golang", core.Phrase{}, "community"},
		{"facebook with community", "crm", "facebook", "r/golang", core.Phrase{}, "community"},
		{"unknown platform", "crm", "twitter", "", core.Phrase{}, "platform"},
		{"platform case", "crm", "Reddit", "golang", core.Phrase{}, "platform"},
		{"empty platform", "crm", "", "", core.Phrase{}, "platform"},
		{"empty phrase", " ", "x", "", core.Phrase{}, "phrase"},
		{"control in phrase", "a\x00", "reddit", "golang", core.Phrase{}, "phrase"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := core.NewPhrase("o1", c.phrase, c.platform, c.community)
			if c.errField != "" {
				requireKind(t, err, core.KindInvalid)
				if !strings.Contains(core.Message(err), c.errField) {
					t.Errorf("message %q does not name %s", core.Message(err), c.errField)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewPhrase: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("NewPhrase = %+v\nwant       %+v", got, c.want)
			}
		})
	}
}

func TestPhraseStatusValid(t *testing.T) {
	cases := []struct {
		s  core.PhraseStatus
		ok bool
	}{
		{core.Listening, true},
		{core.Paused, true},
		{"listening", true},
		{"", false},
		{"Paused", false},
		{"stopped", false},
	}
	for _, c := range cases {
		if got := c.s.Valid(); got != c.ok {
			t.Errorf("PhraseStatus(%q).Valid() = %v, want %v", c.s, got, c.ok)
		}
	}
	for s, want := range map[core.Source]string{core.SourceReddit: "reddit", core.SourceMirror: "mirror", core.SourceHelper: "helper"} {
		if string(s) != want {
			t.Errorf("source %q, want %q", s, want)
		}
	}
}

func TestFoldRune(t *testing.T) {
	cases := []struct {
		name string
		a, b rune
		same bool
	}{
		{"ASCII letter", 'A', 'a', true},
		{"ASCII Z", 'Z', 'z', true},
		{"ASCII different letters", 'a', 'b', false},
		{"Kelvin sign and k", '\u212A', 'k', true},
		{"Kelvin sign and K", '\u212A', 'K', true},
		{"long s and s", '\u017F', 's', true},
		{"long s and S", '\u017F', 'S', true},
		{"sigma and final sigma", 'σ', 'ς', true},
		{"capital sigma and final sigma", 'Σ', 'ς', true},
		{"capital sigma and sigma", 'Σ', 'σ', true},
		{"sharp s and capital sharp s", 'ß', '\u1E9E', true},
		{"sharp s is not s", 'ß', 's', false},
		{"Ohm sign and omega", '\u2126', 'ω', true},
		{"Angstrom sign and a-ring", '\u212B', 'å', true},
		{"e acute", 'É', 'é', true},
		{"Cyrillic", 'Д', 'д', true},
		{"titlecase digraph", 'ǅ', 'ǆ', true},
		{"dotted capital I has no simple fold", 'İ', 'i', false},
		{"dotless i is not i", 'ı', 'i', false},
		{"digit", '1', '1', true},
		{"Latin a and Cyrillic a", 'a', 'а', false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fa, fb := core.FoldRune(c.a), core.FoldRune(c.b)
			if (fa == fb) != c.same {
				t.Errorf("FoldRune(%U) = %U, FoldRune(%U) = %U; same = %v, want %v", c.a, fa, c.b, fb, fa == fb, c.same)
			}
		})
	}

	// ASCII representatives are the lower-case letter, so a folded ASCII
	// phrase reads as its lower-case form.
	for _, r := range []rune{'K', 'k', '\u212A'} {
		if got := core.FoldRune(r); got != 'k' {
			t.Errorf("FoldRune(%U) = %U, want k", r, got)
		}
	}
	for _, r := range []rune{'S', 's', '\u017F'} {
		if got := core.FoldRune(r); got != 's' {
			t.Errorf("FoldRune(%U) = %U, want s", r, got)
		}
	}
}

// TestFoldRuneProperties checks, over every code point, that FoldRune picks
// one member of each simple-folding orbit: stable along the orbit,
// idempotent, and inside the orbit (so distinct orbits never meet).
func TestFoldRuneProperties(t *testing.T) {
	// Case mappings live only in planes 0 and 1; past them a sparse walk
	// is enough to show unmapped runes fold to themselves.
	step := func(r rune) rune {
		if r < 0x20000 {
			return 1
		}
		return 251
	}
	for r := rune(0); r <= unicode.MaxRune; r += step(r) {
		f := core.FoldRune(r)
		if g := core.FoldRune(unicode.SimpleFold(r)); g != f {
			t.Fatalf("FoldRune(%U) = %U but FoldRune(SimpleFold) = %U", r, f, g)
		}
		if ff := core.FoldRune(f); ff != f {
			t.Fatalf("FoldRune not idempotent at %U: %U then %U", r, f, ff)
		}
		if f != r && !sameOrbit(r, f) {
			t.Fatalf("FoldRune(%U) = %U, outside the orbit", r, f)
		}
	}
}

func sameOrbit(r, s rune) bool {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f == s {
			return true
		}
	}
	return false
}

func TestFoldKey(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"Go", "gO", true},
		{"KELVIN", "\u212Aelvin", true},
		{"Straße", "STRAẞE", true},
		{"STRASSE", "straße", false},
		{"ΣΊΣΥΦΟΣ", "σίσυφος", true},
		{"best crm", "best  crm", false},
		{"", "", true},
		{"c++", "C++", true},
		// As the matcher reads them: a typographic apostrophe is ', a
		// full-width ASCII character its ASCII one, but for the low line.
		{"Joe's", "Joe\u2019s", true},
		{"JOE\u2018S", "joe\u201bs", true},
		{"acme", "ＡＣＭＥ", true},
		{"ａｃｍｅ", "ACME", true},
		{"Ｃ＋＋", "c++", true},
		{"a_b", "a＿b", false},
		{"Joe's", "Joe\u02bcs", false}, // the modifier letter apostrophe is a letter
		{"Joe's", "Joe\u201cs", false},
	}
	for _, c := range cases {
		t.Run(c.a+"~"+c.b, func(t *testing.T) {
			ka, kb := core.FoldKey(c.a), core.FoldKey(c.b)
			if (ka == kb) != c.same {
				t.Errorf("FoldKey(%q) = %q, FoldKey(%q) = %q; same = %v, want %v", c.a, ka, c.b, kb, ka == kb, c.same)
			}
		})
	}
	if got := core.FoldKey("Hello, World"); got != "hello, world" {
		t.Errorf("FoldKey of ASCII = %q, want lower case", got)
	}
}

// TestFoldKeyIsMatchFold checks, over every code point, that FoldKey
// folds a character as the matcher compares it (core.MatchFold), so two
// phrases are duplicates exactly when the matcher finds one where it
// finds the other.
func TestFoldKeyIsMatchFold(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if got, want := core.FoldKey(string(r)), string(core.MatchFold(r)); got != want {
			t.Fatalf("FoldKey(%U) = %q, MatchFold gives %q", r, got, want)
		}
	}
}

func TestCheckIdempotencyKey(t *testing.T) {
	cases := []struct {
		name string
		key  string
		ok   bool
	}{
		{"one char", "a", true},
		{"64 chars", strings.Repeat("k", 64), true},
		{"all allowed", "abc-DEF_012.xyz:9", true},
		{"uuid", "3f2b8c4e-9d1a-4b7e-8f00-1a2b3c4d5e6f", true},
		{"empty", "", false},
		{"65 chars", strings.Repeat("k", 65), false},
		{"space", "a b", false},
		{"slash", "a/b", false},
		{"plus", "a+b", false},
		{"newline", "abc\n", false},
		{"non-ASCII letter", "clé", false},
		{"32 multi-byte", strings.Repeat("é", 32), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := core.CheckIdempotencyKey(c.key)
			if c.ok {
				if err != nil {
					t.Fatalf("CheckIdempotencyKey(%q) = %v", c.key, err)
				}
				return
			}
			requireKind(t, err, core.KindInvalid)
			if !strings.Contains(core.Message(err), "Idempotency-Key") {
				t.Errorf("message %q does not name the header", core.Message(err))
			}
		})
	}
}

// U+FFFD is an ordinary, valid character once the input is valid UTF-8;
// only control characters are refused.
func TestNormalizePhraseKeepsReplacementCharacter(t *testing.T) {
	if got, err := core.NormalizePhrase("a\uFFFDb"); err != nil || got != "a\uFFFDb" {
		t.Errorf("NormalizePhrase(a U+FFFD b) = %q, %v", got, err)
	}
}
