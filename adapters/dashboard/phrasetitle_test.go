package dashboard

import (
	"context"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// onePhrase is an owner's phrase store of one phrase, read by its id.
type onePhrase struct {
	fakePhrases
	p core.Phrase
}

func (o onePhrase) Get(_ context.Context, _, id string) (core.Phrase, error) {
	if id != o.p.ID {
		return core.Phrase{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	return o.p, nil
}

// The browser's title of a phrase's filters page and of its deletion
// names the phrase as the page's heading does, in typographic quotes:
// quotes and other characters of the phrase are text, not Go's escapes
// (`\"`, `\u200b`).
func TestPhrasePageTitlesQuoteThePhraseAsText(t *testing.T) {
	phrase := `say "acme" C:\dir` + "\u200b" + "crm"
	d := ownersDashboard(t, map[string][]core.Phrase{"own": nil})
	d.deps.Phrases = onePhrase{p: core.Phrase{ID: "p1", Phrase: phrase, Platform: core.X, Status: core.Listening}}
	want := "“say &#34;acme&#34; C:\\dir\u200bcrm”"
	for _, c := range []struct{ path, title string }{
		{"/app/phrases/p1/filters", "<title>Filters of " + want + " · earshot</title>"},
		{"/app/phrases/p1/delete", "<title>Delete " + want + " · earshot</title>"},
	} {
		w := getAs(d, "own", c.path)
		if w.Code != 200 {
			t.Fatalf("%s: status %d", c.path, w.Code)
		}
		if body := w.Body.String(); !strings.Contains(body, c.title) {
			i := strings.Index(body, "<title>")
			t.Errorf("%s: want %s, got %s", c.path, c.title, body[i:i+strings.Index(body[i:], "</title>")+8])
		}
	}
}
