package score

import (
	"encoding/json"
	"os"
	"testing"
)

// The literal prefilter may only skip posts the regexp would not match.
func TestFindAgreesWithRegexp(t *testing.T) {
	var texts []string
	for _, path := range []string{"testdata/labelled.json", "testdata/holdout.json"} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var set []struct{ Title, Text string }
		if err := json.Unmarshal(raw, &set); err != nil {
			t.Fatal(err)
		}
		for _, p := range set {
			texts = append(texts, normalise(p.Title+"\n"+p.Text))
		}
	}
	texts = append(texts, "50% off", "only $9", "x.com/a", "!!!", "we're hiring: apply at jobs.x.com", "")
	for _, c := range cues {
		if c.need != nil && shortest(c.need) == 0 {
			t.Errorf("%s: empty needed literal", c.re)
		}
		for _, text := range texts {
			want := c.re.FindStringIndex(text)
			got := c.find(text)
			if (want == nil) != (got == nil) || (want != nil && want[0] != got[0]) {
				t.Errorf("%s on %q: find %v, regexp %v", c.re, text, got, want)
			}
		}
	}
}

func TestNeededSkipsMostPosts(t *testing.T) {
	without := 0
	for _, c := range cues {
		if c.need == nil {
			without++
			t.Logf("no prefilter: %s", c.re)
		}
	}
	if without > len(cues)/10 {
		t.Errorf("%d of %d cues have no prefilter", without, len(cues))
	}
}
