package match

import (
	"slices"
	"testing"
)

// TestFindThroughInvisibles checks that the format characters a reader
// does not see (a soft hyphen, the zero-width characters, the direction
// marks and bidirectional controls, the word joiner and the invisible
// operators, a byte order mark) are read as if absent, in the text and in
// a phrase: "ac\u00adme" is "acme" and "acme\u200e crm" is "acme crm", as
// a reader sees them. The texts are in the shape they come in: a soft
// hyphen or a zero-width space from a web page's hyphenation, a direction
// mark beside a space in a post that mixes Hebrew or Arabic with Latin, a
// byte order mark at the start of a pasted file.
func TestFindThroughInvisibles(t *testing.T) {
	tests := []struct {
		name    string
		phrases []string
		texts   []string
		want    []int
	}{
		{"soft hyphen inside a word", []string{"acme"}, []string{"ac\u00adme rocks"}, []int{0}},
		{"zero-width space inside a word", []string{"acme"}, []string{"ac\u200bme"}, []int{0}},
		{"direction mark before a space", []string{"acme crm"}, []string{"acme\u200e crm"}, []int{0}},
		{"direction marks around a space", []string{"acme crm"}, []string{"acme \u200f crm"}, []int{0}},
		{"embedding around a word", []string{"acme crm"}, []string{"\u202bשלום\u202c \u202aacme\u202c crm"}, []int{0}},
		{"isolates around a word", []string{"acme crm"}, []string{"\u2068acme\u2069\u00a0\u2066crm\u2069"}, []int{0}},
		{"arabic letter mark", []string{"acme crm"}, []string{"acme\u061c crm"}, []int{0}},
		{"byte order mark", []string{"acme"}, []string{"\ufeffacme"}, []int{0}},
		{"word joiner joins", []string{"acme crm", "acme"}, []string{"acme\u2060crm"}, nil},
		{"word joiner inside the phrase's word", []string{"acmecrm"}, []string{"acme\u2060crm"}, []int{0}},
		{"still a word of its own", []string{"acme"}, []string{"ac\u00admes", "x\u200bacme", "acme\u200d_", "\u00e9\u200bacme"}, nil},
		{"at the edges", []string{"acme"}, []string{"acme\u00ad", "(\u200bacme\u200b)"}, []int{0}},
		{"several in a row", []string{"acme"}, []string{"a\u200b\u200c\u200d\u200e\u200fc\u2061\u2062\u2063\u2064me"}, []int{0}},
		{"between symbols", []string{"c++"}, []string{"c+\u200b+"}, []int{0}},
		{"white space runs", []string{"new york"}, []string{"new \u200b york", "new\u200b york"}, []int{0}},
		{"non-ASCII word", []string{"über", "naïve"}, []string{"ü\u00adber", "na\u200bïve"}, []int{0, 1}},
		{"long word", []string{"internationalisation", "übergrößenträgerinnen"}, []string{"inter\u00adnational\u00adisation", "ÜBER\u00adGRÖẞEN\u00adTRÄGER\u00adINNEN"}, []int{0, 1}},
		{"phrase with a soft hyphen", []string{"ac\u00adme"}, []string{"ACME", "ac\u200bme"}, []int{0}},
		{"persian non-joiner in the phrase", []string{"می\u200cخواهم"}, []string{"میخواهم"}, []int{0}},
		{"persian non-joiner in the text", []string{"میخواهم", "می\u200cخواهم"}, []string{"من می\u200cخواهم"}, []int{0, 1}},
		{"emoji sequence", []string{"👩\u200d💻"}, []string{"a 👩\u200d💻 here"}, []int{0}},
		{"thai word breaks", []string{"ที่กรุงเทพ"}, []string{"วันนี้\u200bที่\u200bกรุง\u200bเทพ"}, []int{0}},
		{"han", []string{"東京"}, []string{"東\u200b京タワー"}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ref := refFind(tt.phrases, tt.texts...); !slices.Equal(ref, tt.want) {
				t.Errorf("reference: %v, want %v", ref, tt.want)
			}
			for _, v := range variants {
				if got := v.find(tt.phrases, tt.texts...); !slices.Equal(got, tt.want) {
					t.Errorf("%s: Find(%q) = %v, want %v", v.name, tt.texts, got, tt.want)
				}
			}
		})
	}
}

// TestFindThroughInvisiblesInLongText plants invisible characters in
// ASCII prose long enough for the fast path of Scan, beside and inside
// the words it reads 64 bytes at a time.
func TestFindThroughInvisiblesInLongText(t *testing.T) {
	prose := "We moved our whole sales team over to the new tool last quarter and "
	for _, text := range []string{
		prose + "ac\u00adme crm has been great so far, honestly.",
		prose + "acme\u200e crm has been great so far, honestly.",
		prose + prose + "\ufeffacme\u200b \u200bcrm",
		"acme\u2060" + prose + "acme\u00ad\u00ad crm. " + prose,
	} {
		for _, v := range variants {
			if got := v.find([]string{"acme crm"}, text); !slices.Equal(got, []int{0}) {
				t.Errorf("%s: %q: found %v, want [0]", v.name, text, got)
			}
		}
	}
}

// TestWordsThroughInvisibles checks that the index's words read the
// invisible characters as the matcher does: as if absent, joining
// nothing apart and parting nothing joined.
func TestWordsThroughInvisibles(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"ac\u00adme rocks", []string{"acme", "rocks"}},
		{"AC\u200bME", []string{"acme"}},
		{"acme\u200e crm", []string{"acme", "crm"}},
		{"acme\u2060crm", []string{"acmecrm"}},
		{"\ufeffacme", []string{"acme"}},
		{"\u202aacme\u202c", []string{"acme"}},
		{"می\u200cخواهم", []string{"میخواهم"}},
		{"東\u200b京", []string{"東", "京"}},
		{"\u200b", nil},
	}
	for _, tt := range tests {
		if got := Words(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
