package core_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

func TestParseSearch(t *testing.T) {
	term := func(exclude bool, words ...string) core.SearchTerm {
		return core.SearchTerm{Words: words, Exclude: exclude}
	}
	cases := []struct {
		name string
		q    string
		want []core.SearchTerm
	}{
		{"empty", "", nil},
		{"blank", "  \t ", nil},
		{"one word", "acme", []core.SearchTerm{term(false, "acme")}},
		{"words", "  acme   pricing ", []core.SearchTerm{term(false, "acme"), term(false, "pricing")}},
		{"phrase", `"acme crm" pricing`, []core.SearchTerm{term(false, "acme", "crm"), term(false, "pricing")}},
		{"excluded word", "acme -spam", []core.SearchTerm{term(false, "acme"), term(true, "spam")}},
		{"excluded phrase", `acme -"free trial"`, []core.SearchTerm{term(false, "acme"), term(true, "free", "trial")}},
		// A word of parts is a phrase of its parts, as the databases'
		// tokenizers read the text.
		{"word of parts", "acme-crm maya_builds acme.com", []core.SearchTerm{
			term(false, "acme", "crm"), term(false, "maya", "builds"), term(false, "acme", "com")}},
		{"punctuation dropped", `acme! (pricing)`, []core.SearchTerm{term(false, "acme"), term(false, "pricing")}},
		{"operators are words", "acme OR NOT near*", []core.SearchTerm{term(false, "acme"), term(false, "OR"), term(false, "NOT"), term(false, "near")}},
		// An unbalanced quote makes a phrase of the rest.
		{"unbalanced quote", `pricing "acme crm`, []core.SearchTerm{term(false, "pricing"), term(false, "acme", "crm")}},
		{"lone quote", `acme "`, []core.SearchTerm{term(false, "acme")}},
		{"quote inside a word", `acme"crm tool"`, []core.SearchTerm{term(false, "acme"), term(false, "crm", "tool")}},
		{"lone dash", "acme - crm", []core.SearchTerm{term(false, "acme"), term(false, "crm")}},
		{"letters of any script", "Ünïcode 日本語 σοφία", []core.SearchTerm{term(false, "Ünïcode"), term(false, "日本語"), term(false, "σοφία")}},
		{"markup is punctuation", `<script>alert(1)</script>`, []core.SearchTerm{term(false, "script", "alert", "1", "script")}},
		{"marks alone are no word", "acme \u0301\u0301", []core.SearchTerm{term(false, "acme")}},
		{"bad bytes separate", "acme\xffcrm", []core.SearchTerm{term(false, "acme", "crm")}},
		{"at the length limit", strings.Repeat("a", core.MaxSearchLen), []core.SearchTerm{term(false, strings.Repeat("a", core.MaxSearchLen))}},
		{"ten terms", "a b c d e f g h i j", []core.SearchTerm{
			term(false, "a"), term(false, "b"), term(false, "c"), term(false, "d"), term(false, "e"),
			term(false, "f"), term(false, "g"), term(false, "h"), term(false, "i"), term(false, "j")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := core.ParseSearch(c.q)
			if err != nil {
				t.Fatalf("ParseSearch(%q): %v", c.q, err)
			}
			if !reflect.DeepEqual(got.Terms, c.want) {
				t.Fatalf("ParseSearch(%q) = %#v, want %#v", c.q, got.Terms, c.want)
			}
			if got.IsZero() != (len(c.want) == 0) {
				t.Fatalf("IsZero = %v", got.IsZero())
			}
		})
	}
}

func TestParseSearchRefuses(t *testing.T) {
	for name, q := range map[string]string{
		"too long":           strings.Repeat("a", core.MaxSearchLen+1),
		"too many terms":     "a b c d e f g h i j k",
		"only excluded":      "-spam -\"free trial\"",
		"no letters":         `!!! "..." -`,
		"excluded and blank": `-acme ""`,
	} {
		_, err := core.ParseSearch(q)
		if !core.IsKind(err, core.KindInvalid) || !strings.HasPrefix(core.Message(err), "q ") {
			t.Errorf("%s: ParseSearch(%q) = %v, want KindInvalid naming q", name, q, err)
		}
	}
}

// Shown returns the words and phrases to mark, excluded ones left out.
func TestSearchShown(t *testing.T) {
	s, err := core.ParseSearch(`"Acme CRM" pricing -spam`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Shown(), [][]string{{"Acme", "CRM"}, {"pricing"}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Shown = %q, want %q", got, want)
	}
}
