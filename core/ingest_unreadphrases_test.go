package core_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// UnreadPhrases.Keys gives each text as the server compares phrases
// (normalised, folded), sorted and once; texts that are no phrase name
// none; a value that was not an array of strings, or held more than
// MaxUnreadPhrases, refuses the batch naming the field.
func TestUnreadPhrasesKeys(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    core.UnreadPhrases
		want []string
	}{
		{"none", core.UnreadPhrases{}, nil},
		{"empty", core.UnreadPhrases{Texts: []string{}}, nil},
		{"folded and spaced", core.UnreadPhrases{Texts: []string{"  Acme\t CRM ", "acme crm", "ÉCLAIR", "beta"}}, []string{"acme crm", "beta", core.FoldKey("éclair")}},
		{"read as the matcher reads", core.UnreadPhrases{Texts: []string{"Joe\u2019s", "joe's", "ＡＣＭＥ  ｃｒｍ"}}, []string{"acme crm", "joe's"}},
		{"no phrase", core.UnreadPhrases{Texts: []string{"", "   ", "a\x00b", strings.Repeat("a", core.MaxPhraseLen+1), "\xff"}}, []string{}},
	} {
		got, err := tc.u.Keys()
		if err != nil || !slices.Equal(got, tc.want) || (tc.want == nil) != (got == nil) {
			t.Errorf("%s: Keys = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	for name, u := range map[string]core.UnreadPhrases{"not an array": {Invalid: true}, "too many": {Over: true}} {
		if _, err := u.Keys(); !core.IsKind(err, core.KindInvalid) || !strings.HasPrefix(core.Message(err), "unreadPhrases") {
			t.Errorf("%s: Keys = %v; want KindInvalid naming unreadPhrases", name, err)
		}
	}
}
