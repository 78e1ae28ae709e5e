package dashboard

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// The phrase list says a minimum of one like or comment in the singular.
func TestFilterSummaryCountsInWords(t *testing.T) {
	for _, c := range []struct {
		f    core.PhraseFilters
		want string
	}{
		{core.PhraseFilters{MinLikes: 1, MinComments: 1}, "at least 1 like|at least 1 comment"},
		{core.PhraseFilters{MinLikes: 3, MinComments: 2}, "at least 3 likes|at least 2 comments"},
	} {
		if got := strings.Join(filterSummary(c.f), "|"); got != c.want {
			t.Errorf("%+v is summed up as %q, want %q", c.f, got, c.want)
		}
	}
}
